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
	e := NewRTT(200 * time.Millisecond)
	rto := func() time.Duration { return e.RTO(time.Second, 60*time.Second) }
	if rto() != time.Second {
		t.Fatalf("RTO before a sample = %v, want the initial 1s", rto())
	}
	e.Update(100 * time.Millisecond)
	if e.SRTT() != 100*time.Millisecond || e.RTTVar() != 50*time.Millisecond {
		t.Fatalf("after one sample SRTT %v RTTVAR %v, want 100ms 50ms", e.SRTT(), e.RTTVar())
	}
	if rto() != 300*time.Millisecond {
		t.Fatalf("RTO %v, want SRTT + 4 RTTVAR = 300ms", rto())
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
	if rto() != 200*time.Millisecond {
		t.Fatalf("RTO %v, want the 200ms floor", rto())
	}
}

// TestRTTFollowsLinux checks Linux's variance term (tcp_rtt_estimator,
// __tcp_set_rto) against values worked by hand: the first sample's
// RTO of three RTTs, the term's immediate rise to a round's largest
// deviation, Eifel's eighth gain on a falling RTT, and the decay of a
// quarter of the excess per round down to the floor.
func TestRTTFollowsLinux(t *testing.T) {
	e := NewRTT(200 * time.Millisecond)
	rto := func() time.Duration { return e.LinuxRTO(time.Second, 60*time.Second) }
	if rto() != time.Second {
		t.Fatalf("RTO before a sample = %v, want the initial 1s", rto())
	}
	ms := time.Millisecond
	e.UpdateSeq(100*ms, 0, 1000) // mdev = 200 ms, the term max(200, 200)
	if rto() != 300*ms {
		t.Fatalf("after one sample RTO %v, want SRTT + 2 SRTT = 300ms", rto())
	}
	// Rising: error +200 ms, mdev += 200 - 200/4 = 350 ms, the term 350.
	e.UpdateSeq(300*ms, 0, 2000)
	if got, want := rto(), 125*ms+350*ms; got != want {
		t.Fatalf("after a rise RTO %v, want SRTT 125ms + 350ms = %v", got, want)
	}
	// Falling: error -25 ms, m = 25 - 87.5 < 0, full gain: mdev 287.5 ms;
	// the term keeps the round's largest, 350.
	e.UpdateSeq(100*ms, 0, 3000)
	if e.mdev != 287500 || e.linuxVar != 350000 {
		t.Fatalf("after a fall mdev %d us, term %d us, want 287500 and 350000", e.mdev, e.linuxVar)
	}
	// A round ends (una 1500 passes 1000): the term falls by a quarter of
	// its excess over the round's largest (350 - (350-350)/4), then the
	// round's largest restarts at the 200 ms floor.
	e.UpdateSeq(122*ms, 1500, 4000)
	if e.mdevMax != 200000 {
		t.Fatalf("new round's largest %d us, want the floor 200000", e.mdevMax)
	}
	// A falling RTT far below: |error| 120 ms > mdev/4, so Eifel's eighth.
	before, srtt := e.mdev, e.srtt
	e.UpdateSeq(time.Millisecond, 1500, 5000)
	want := int64(before) + ((srtt-time.Millisecond).Microseconds()-int64(before/4))/8
	if d := int64(e.mdev) - want; d < -1 || d > 1 {
		t.Fatalf("mdev after a steep fall %d us, want %d (an eighth of the gain)", e.mdev, want)
	}
	// Quiet rounds: the excess shrinks by a quarter each (Linux's integer
	// shift stops it below 4 us), never under the floor.
	prev := e.linuxVar
	for i := range 80 {
		e.UpdateSeq(time.Millisecond, 5001+int64(i)*1000, 6000+int64(i)*1000)
		if e.linuxVar > prev || e.linuxVar < 200000 {
			t.Fatalf("round %d: term %d us after %d, want it falling to the 200000 floor", i, e.linuxVar, prev)
		}
		prev = e.linuxVar
	}
	if e.linuxVar > 200003 {
		t.Fatalf("term after 80 quiet rounds %d us, want within 3 us of the floor", e.linuxVar)
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

// TestSplitSamples: with split samples SRTT, the variance and the RTO
// follow the oldest samples exactly as an estimator fed only those does,
// while the minimum and the latest follow the newest; an ACK without an
// oldest sample changes nothing; without split samples UpdateSplit is
// UpdateSeq on the newest.
func TestSplitSamples(t *testing.T) {
	ms := time.Millisecond
	steps := []struct {
		newest, oldest time.Duration
		una, nxt       int64
	}{
		{30 * ms, 70 * ms, 1000, 5000}, {32 * ms, 35 * ms, 3000, 7000}, {0, 72 * ms, 6000, 9000},
		{29 * ms, 0, 8000, 9000}, {31 * ms, 60 * ms, 9000, 12000}, {40 * ms, 41 * ms, 12000, 15000},
	}
	split, oldest, newest := NewRTT(200*ms), NewRTT(200*ms), NewRTT(200*ms)
	split.SplitSamples(true)
	minNewest := time.Duration(0)
	for i, st := range steps {
		split.UpdateSplit(st.newest, st.oldest, st.una, st.nxt)
		if st.oldest > 0 {
			oldest.UpdateSeq(st.oldest, st.una, st.nxt)
			ca := st.newest
			if ca <= 0 {
				ca = st.oldest
			}
			if minNewest == 0 || ca < minNewest {
				minNewest = ca
			}
			if split.Latest() != ca {
				t.Errorf("step %d: latest %v, want the newest sample %v", i, split.Latest(), ca)
			}
		}
		if split.SRTT() != oldest.SRTT() || split.RTTVar() != oldest.RTTVar() ||
			split.LinuxRTO(time.Second, time.Minute) != oldest.LinuxRTO(time.Second, time.Minute) ||
			split.RTO(time.Second, time.Minute) != oldest.RTO(time.Second, time.Minute) {
			t.Errorf("step %d: SRTT %v RTTVAR %v, want the oldest samples' %v %v", i, split.SRTT(), split.RTTVar(), oldest.SRTT(), oldest.RTTVar())
		}
		if split.Min() != minNewest {
			t.Errorf("step %d: min %v, want the newest samples' %v", i, split.Min(), minNewest)
		}
		if st.newest > 0 {
			newest.UpdateSeq(st.newest, st.una, st.nxt)
		}
	}
	if split.Samples() != 5 {
		t.Errorf("%d samples, want 5 (the step without an oldest sample is none)", split.Samples())
	}
	plain := NewRTT(200 * ms)
	for _, st := range steps {
		plain.UpdateSplit(st.newest, st.oldest, st.una, st.nxt)
	}
	if plain != newest {
		t.Errorf("without split samples: %+v, want UpdateSeq on the newest: %+v", plain, newest)
	}
}

// TestOldestRTT: Linux's RTO sample is the oldest cumulatively acknowledged
// original's RTT unless a retransmission was cumulatively acknowledged too,
// else the oldest newly SACKed original's, else none.
func TestOldestRTT(t *testing.T) {
	now := clock.Time(100 * time.Millisecond)
	at := func(ms int) clock.Time { return clock.Time(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name string
		note func(s *Sample)
		sack clock.Time // the oldest newly SACKed original's send time
		want time.Duration
		ok   bool
	}{
		{"nothing", func(s *Sample) {}, clock.Never, 0, false},
		{"cumulative", func(s *Sample) {
			s.NoteCumulative(at(20))
			s.NoteCumulative(at(10))
		}, at(5), 90 * time.Millisecond, true},
		{"sent at time zero", func(s *Sample) { s.NoteCumulative(0) }, clock.Never, 100 * time.Millisecond, true},
		{"SACK only", func(s *Sample) {}, at(30), 70 * time.Millisecond, true},
		{"retransmission acknowledged: the SACKed", func(s *Sample) {
			s.NoteCumulative(at(10))
			s.NoteRetransAcked()
		}, at(60), 40 * time.Millisecond, true},
		{"retransmission acknowledged, nothing SACKed", func(s *Sample) {
			s.NoteCumulative(at(10))
			s.NoteRetransAcked()
		}, clock.Never, 0, false},
	} {
		var s Sample
		c.note(&s)
		got, ok := s.OldestRTT(now, c.sack)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
