package cctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

const mss units.Bytes = 1000

// recorder is a fixed-window controller that logs every call.
type recorder struct {
	cwnd units.Bytes
	rate units.Bandwidth
	log  []string
	acks []cc.Ack
}

func (r *recorder) OnPacketSent(now clock.Time, b, inFlight units.Bytes, re bool) {
	r.log = append(r.log, fmt.Sprintf("sent %v %d %d %v", now, b, inFlight, re))
}
func (r *recorder) OnAck(now clock.Time, a *cc.Ack) {
	r.log = append(r.log, fmt.Sprintf("ack %v %d rec=%v", now, a.AckedBytes, a.InRecovery))
	r.acks = append(r.acks, *a)
}
func (r *recorder) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	r.log = append(r.log, fmt.Sprintf("loss %v %d %d", now, ev.PriorInFlight, ev.LostBytes))
}
func (r *recorder) OnRecoveryEnd(now clock.Time) {
	r.log = append(r.log, fmt.Sprintf("recovered %v", now))
}
func (r *recorder) OnRetransmissionTimeout(now clock.Time, _ units.Bytes) {
	r.log = append(r.log, fmt.Sprintf("rto %v", now))
}
func (r *recorder) CongestionWindow() units.Bytes { return r.cwnd }
func (r *recorder) PacingRate() units.Bandwidth   { return r.rate }

// The rate samples follow draft-cheng-iccrg-delivery-rate-estimation §3,
// worked by hand for a window sent at once and acknowledged in pairs.
func TestDriverRateSamples(t *testing.T) {
	r := &recorder{cwnd: 10 * mss}
	d := NewDriver(t, r, mss)
	if n := d.SendWindow(); n != 10 {
		t.Fatalf("SendWindow sent %d, want 10", n)
	}
	d.Advance(100 * time.Millisecond)
	a1 := d.AckN(2)
	d.Advance(10 * time.Millisecond)
	a2 := d.AckN(2)
	tests := []struct {
		name string
		got  cc.RateSample
		want cc.RateSample
	}{
		// All ten were sent at 0 with C.delivered = 0 and delivered_time
		// 0: interval = max(send_elapsed 0, ack_elapsed).
		{"first", a1.Rate, cc.RateSample{Delivered: 2 * mss, Interval: 100 * time.Millisecond, PriorDelivered: 0, RTT: 100 * time.Millisecond,
			DeliveryRate: units.BandwidthFromDelta(2*mss, 100*time.Millisecond)}},
		{"second", a2.Rate, cc.RateSample{Delivered: 4 * mss, Interval: 110 * time.Millisecond, PriorDelivered: 0, RTT: 110 * time.Millisecond,
			DeliveryRate: units.BandwidthFromDelta(4*mss, 110*time.Millisecond)}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s ACK: rate sample %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
	if a2.TotalDelivered != 4*mss || a2.PriorInFlight != 8*mss || a2.InFlight != 6*mss {
		t.Errorf("second ACK: delivered %d, prior in flight %d, in flight %d; want %d, %d, %d", a2.TotalDelivered, a2.PriorInFlight, a2.InFlight, 4*mss, 8*mss, 6*mss)
	}
	// RFC 6298: SRTT = 7/8*100 + 1/8*110 ms.
	if got, want := a2.SRTT, (7*100*time.Millisecond+110*time.Millisecond)/8; got != want || a2.MinRTT != 100*time.Millisecond {
		t.Errorf("SRTT %v, min RTT %v; want %v, 100ms", got, a2.MinRTT, want)
	}
}

// A segment sent after data was delivered carries that delivered count, so
// its ACK starts a new BBR-style round.
func TestDriverRounds(t *testing.T) {
	r := &recorder{cwnd: 4 * mss}
	d := NewDriver(t, r, mss)
	d.Round()
	d.Round()
	// Round 2 acknowledges the refills sent after round 1's ACKs, when 2
	// and then 4 segments had been delivered.
	for i, want := range []units.Bytes{2 * mss, 4 * mss} {
		if got := r.acks[2+i].Rate.PriorDelivered; got != want {
			t.Errorf("round 2 ACK %d: PriorDelivered = %d, want %d", i, got, want)
		}
	}
	if d.Outstanding() != 4 {
		t.Errorf("outstanding after an ACK-clocked round = %d, want a full window of 4", d.Outstanding())
	}
}

func TestDriverRecoverySequence(t *testing.T) {
	r := &recorder{cwnd: 6 * mss}
	d := NewDriver(t, r, mss)
	d.SendWindow()
	d.LoseN(1)
	d.LoseN(1) // same window: no second congestion event
	d.Retransmit()
	d.Advance(50 * time.Millisecond)
	d.AckAll()
	want := []string{
		"loss 0s 6000 1000",
		"sent 0s 1000 5000 true",
		"sent 0s 1000 6000 true",
		"ack 50ms 2000 rec=true",
		"ack 50ms 2000 rec=true",
		"recovered 50ms",
		"ack 50ms 2000 rec=false",
	}
	got := r.log[6:] // after the six initial sends
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("call sequence:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a := r.acks[0]; a.LostBytes != 2*mss {
		t.Errorf("first ACK after the losses reports LostBytes %d, want %d", a.LostBytes, 2*mss)
	}
	if a := r.acks[len(r.acks)-1]; a.RTT != 0 {
		t.Errorf("ACK of a retransmission has RTT %v, want 0 (Karn)", a.RTT)
	}
}

// runPath runs a fixed window over a path and returns the stats, the call
// log and the number of transmissions still on their way to the receiver.
func runPath(t *testing.T, cwnd units.Bytes, cfg PathConfig, d time.Duration) (PathStats, []string, int64) {
	t.Helper()
	r := &recorder{cwnd: cwnd}
	p := NewPath(t, r, cfg, nil)
	p.Run(d)
	var onWire int64
	for _, ev := range p.events {
		if ev.kind == evRecv {
			onWire++
		}
	}
	return p.Stats(), r.log, onWire
}

// Every transmission is received, dropped or still on its way; delivered
// bytes never exceed what was received; a run is reproducible.
func TestPathConservation(t *testing.T) {
	cfg := PathConfig{Rate: 10 * units.Mbps, BaseRTT: 20 * time.Millisecond, QueueLimit: 10 * mss, MSS: mss,
		Drop: func(idx int64, _ clock.Time) bool { return idx%97 == 13 }}
	st, log1, onWire := runPath(t, 60*mss, cfg, 3*time.Second)
	if st.Sent != st.Received+st.Dropped+onWire {
		t.Errorf("sent %d != received %d + dropped %d + on the wire %d", st.Sent, st.Received, st.Dropped, onWire)
	}
	if st.Delivered > units.Bytes(st.Received)*mss {
		t.Errorf("delivered %d bytes > received %d segments", st.Delivered, st.Received)
	}
	if st.Dropped == 0 || st.Retransmitted == 0 || st.CongestionEvents == 0 {
		t.Errorf("an over-full window should drop, retransmit and recover: %+v", st)
	}
	// Goodput can't beat the bottleneck.
	if rate := units.BandwidthFromDelta(st.Delivered, 3*time.Second); rate > cfg.Rate {
		t.Errorf("goodput %v above the bottleneck %v", rate, cfg.Rate)
	}
	st2, log2, _ := runPath(t, 60*mss, cfg, 3*time.Second)
	if st2 != st || strings.Join(log1, "\n") != strings.Join(log2, "\n") {
		t.Errorf("second run differs: %+v vs %+v", st2, st)
	}
}

// A window below the BDP delivers window/RTT; above it, the bottleneck rate.
func TestPathThroughput(t *testing.T) {
	cfg := PathConfig{Rate: 10 * units.Mbps, BaseRTT: 40 * time.Millisecond, MSS: mss, AckEvery: 1}
	rtt := cfg.BaseRTT + cfg.Rate.TxTime(mss)
	tests := []struct {
		cwnd units.Bytes
		want units.Bandwidth
	}{
		{20 * mss, units.BandwidthFromDelta(20*mss, rtt)},
		{200 * mss, cfg.Rate},
	}
	for _, tt := range tests {
		st, _, _ := runPath(t, tt.cwnd, cfg, 10*time.Second)
		got := units.BandwidthFromDelta(st.Delivered, 10*time.Second)
		// The first RTT sends nothing back: allow one window of start-up.
		if d := float64(got-tt.want) / float64(tt.want); d > 0.001 || d < -0.01 {
			t.Errorf("window %d: goodput %v, want %v (-1%%, +0.1%%)", tt.cwnd, got, tt.want)
		}
	}
}

// With nothing delivered for an RTO the sender times out, backs off and
// retransmits.
func TestPathTimeout(t *testing.T) {
	cfg := PathConfig{Rate: 10 * units.Mbps, BaseRTT: 20 * time.Millisecond, MSS: mss,
		Drop: func(idx int64, now clock.Time) bool {
			return now < clock.Time(500*time.Millisecond) && now > clock.Time(100*time.Millisecond)
		}}
	st, log, _ := runPath(t, 10*mss, cfg, 2*time.Second)
	if st.Timeouts == 0 {
		t.Fatalf("no timeout while every packet was dropped for 400 ms: %+v", st)
	}
	var rtos []string
	for _, l := range log {
		if strings.HasPrefix(l, "rto") {
			rtos = append(rtos, l)
		}
	}
	if len(rtos) < 2 {
		t.Errorf("RTOs %v: want repeated, backed-off timeouts during the outage", rtos)
	}
	// About 48 segments before the outage and 10 per 20.8 ms RTT for the
	// 1.3-1.5 s after it (depending on the back-off).
	if st.Delivered < 400*mss {
		t.Errorf("delivered only %d bytes: the flow did not recover after the outage", st.Delivered)
	}
}
