package estimate

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// TestRTTFollowsRFC6298 checks the first sample and one update against
// RFC 6298 §2.2-2.3 worked by hand, and the RTO bounds.
func TestRTTFollowsRFC6298(t *testing.T) {
	e := NewRTT(time.Second, 200*time.Millisecond, 60*time.Second)
	if e.RTO() != time.Second {
		t.Fatalf("RTO before a sample = %v, want the initial 1s", e.RTO())
	}
	e.Update(100 * time.Millisecond)
	if e.SRTT() != 100*time.Millisecond || e.RTTVar() != 50*time.Millisecond {
		t.Fatalf("after one sample SRTT %v RTTVAR %v, want 100ms 50ms", e.SRTT(), e.RTTVar())
	}
	if e.RTO() != 300*time.Millisecond {
		t.Fatalf("RTO %v, want SRTT + 4 RTTVAR = 300ms", e.RTO())
	}
	e.Update(60 * time.Millisecond)
	// RTTVAR = 3/4*50 + 1/4*|100-60| = 47.5; SRTT = 7/8*100 + 1/8*60 = 95.
	if e.SRTT() != 95*time.Millisecond || e.RTTVar() != 47500*time.Microsecond {
		t.Fatalf("SRTT %v RTTVAR %v, want 95ms 47.5ms", e.SRTT(), e.RTTVar())
	}
	if e.Min() != 60*time.Millisecond || e.Latest() != 60*time.Millisecond || e.Samples() != 2 {
		t.Fatalf("min %v latest %v samples %d", e.Min(), e.Latest(), e.Samples())
	}
	for range 50 {
		e.Update(time.Millisecond)
	}
	if e.RTO() != 200*time.Millisecond {
		t.Fatalf("RTO %v, want the 200ms floor", e.RTO())
	}
}

// TestRateOfASteadyStream sends one packet per tick over a path of one RTT
// and acknowledges each an RTT later: every sample's rate is the send rate.
func TestRateOfASteadyStream(t *testing.T) {
	const size = units.Bytes(1000)
	tick := time.Millisecond // 8 Mbit/s
	rtt := 50 * time.Millisecond
	var r Rate
	r.Start(0)
	type sent struct {
		at clock.Time
		st Stamp
	}
	var q []sent
	inFlight := units.Bytes(0)
	var out cc.RateSample
	for i := range 500 {
		now := clock.Time(time.Duration(i) * tick)
		for len(q) > 0 && q[0].at.Add(rtt) <= now {
			var s Sample
			r.Deliver(now, size, q[0].at, false, &q[0].st, &s)
			inFlight -= size
			q = q[1:]
			r.EndAck()
			r.Fill(&s, rtt, &out)
			if s.RTT != rtt {
				t.Fatalf("RTT sample %v, want %v", s.RTT, rtt)
			}
		}
		q = append(q, sent{now, r.OnSend(now, inFlight)})
		inFlight += size
	}
	want := units.BandwidthFromDelta(size, tick)
	if !out.Valid() || out.DeliveryRate != want {
		t.Fatalf("rate %v (interval %v), want %v", out.DeliveryRate, out.Interval, want)
	}
	if r.Delivered() != units.Bytes(500-50)*size {
		t.Fatalf("delivered %d", r.Delivered())
	}
}

// TestShortIntervalGivesNoRate: an ACK-compressed burst (interval below the
// minimum RTT) yields no rate, as draft-cheng §3.3 requires.
func TestShortIntervalGivesNoRate(t *testing.T) {
	var r Rate
	r.Start(0)
	st := r.OnSend(0, 0)
	var s Sample
	r.Deliver(clock.Time(time.Millisecond), 1000, 0, true, &st, &s)
	var out cc.RateSample
	r.Fill(&s, 10*time.Millisecond, &out)
	if out.Valid() || out.DeliveryRate != 0 || s.RTT != 0 {
		t.Fatalf("got %+v, RTT %v: want no rate and no RTT for a retransmission", out, s.RTT)
	}
	if !s.OK() || out.Delivered != 1000 {
		t.Fatalf("delivered %d", out.Delivered)
	}
}
