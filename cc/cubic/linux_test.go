package cubic

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// TestLinuxSsthresh: cubictcp_recalc_ssthresh truncates cwnd*717/1024 to
// whole segments, where the RFC arithmetic keeps the fraction.
func TestLinuxSsthresh(t *testing.T) {
	tests := []struct {
		cwnd, wantSS int // segments
		rfcSS        float64
	}{
		{100, 70, 70},
		{10, 7, 7},
		{9, 6, 6.3},
		{5, 3, 3.5},
		{3, 2, 2.1},
		{2, 2, 2},
	}
	for _, tt := range tests {
		for _, linux := range []float64{1, 0} {
			cu := newCubic(t, map[string]float64{"iw": float64(tt.cwnd), "hystart": 0, "linux": linux})
			d := cctest.NewDriver(t, cu, mss)
			d.SendWindow()
			d.LoseN(1)
			want := units.Bytes(tt.wantSS) * mss
			if linux == 0 {
				want = units.Bytes(tt.rfcSS * float64(mss))
			}
			if got := cu.Ssthresh(); got != want {
				t.Errorf("linux=%g, cwnd %d: ssthresh = %.2f segments, want %.2f", linux, tt.cwnd, segs(got), segs(want))
			}
		}
	}
}

// TestLinuxFastConvergence: a loss below the previous plateau remembers
// cwnd*(1024+717)/2048, truncated (8 -> 6, where the RFC's W_max is 6.8).
func TestLinuxFastConvergence(t *testing.T) {
	l := newLinuxCubic(0.7, 0.4, 250)
	if ss := l.ssthresh(10, true); ss != 7 || l.lastMaxCwnd != 10 {
		t.Fatalf("loss at 10: ssthresh %d, last_max_cwnd %d; want 7, 10", ss, l.lastMaxCwnd)
	}
	if ss := l.ssthresh(8, true); ss != 5 || l.lastMaxCwnd != 6 {
		t.Errorf("loss at 8 below 10: ssthresh %d, last_max_cwnd %d; want 5, 6", ss, l.lastMaxCwnd)
	}
	if ss := l.ssthresh(8, false); ss != 5 || l.lastMaxCwnd != 8 {
		t.Errorf("without fast convergence: ssthresh %d, last_max_cwnd %d; want 5, 8", ss, l.lastMaxCwnd)
	}
}

// TestLinuxRenoFriendlyHandComputed follows bictcp_update and
// tcp_cong_avoid_ai by hand for one-segment ACKs 40 ms apart (more than
// HZ/32, so every ACK recomputes ca->cnt) from cwnd 7 at the plateau
// (last_max_cwnd = 7: K = 0, and the cubic term stays below one segment
// for the first 1.2 s). beta_scale = 8*1741/3/307 = 15, so the
// Reno-friendly ca->tcp_cwnd gains a segment once more than (7*15)>>3 = 13
// segments are counted, and cwnd follows at once with the 13 credits it
// earned at cnt = 700 ("credits accumulated at a higher w"): cwnd 8 at ACK
// 14. At 8 the step is (8*15)>>3 = 15, so cwnd 9 at ACK 29.
func TestLinuxRenoFriendlyHandComputed(t *testing.T) {
	l := newLinuxCubic(0.7, 0.4, 250)
	l.lastMaxCwnd = 7
	if l.betaScale != 15 {
		t.Fatalf("beta_scale = %d, want 15", l.betaScale)
	}
	cwnd := uint32(7)
	want := func(ack int) uint32 {
		switch {
		case ack < 14:
			return 7
		case ack < 29:
			return 8
		default:
			return 9
		}
	}
	for ack := 1; ack <= 29; ack++ {
		now := clock.Time(time.Duration(ack) * 40 * time.Millisecond)
		l.update(now, cwnd, 1, 0, true)
		cwnd = l.congAvoidAI(cwnd, l.cnt, 1)
		if cwnd != want(ack) {
			t.Fatalf("ACK %d: cwnd %d, want %d (cnt %d, tcp_cwnd %d, ack_cnt %d, snd_cwnd_cnt %d)",
				ack, cwnd, want(ack), l.cnt, l.tcpCwnd, l.ackCnt, l.cwndCnt)
		}
	}
	if l.tcpCwnd != 9 || l.ackCnt != 1 {
		t.Errorf("after ACK 29: tcp_cwnd %d, ack_cnt %d; want 9, 1", l.tcpCwnd, l.ackCnt)
	}
}

// TestLinuxCubicTermHandComputed: after a loss at 100 segments (cwnd 70,
// last_max_cwnd 100), K = cbrt(2^40/410 * 30) = 4316/1024 s (4.21 s;
// the RFC's cbrt(30/0.4) = 4.22 s), and at t = K the target is the plateau.
// With cwnd 99 at that moment, ca->cnt = 99/(100-99) = 99.
func TestLinuxCubicTermHandComputed(t *testing.T) {
	l := newLinuxCubic(0.7, 0.4, 250)
	l.lastMaxCwnd = 100
	l.update(0, 70, 1, 0, false)
	if l.bicK != 4316 || l.originPoint != 100 {
		t.Fatalf("bic_K %d, origin %d; want 4316, 100", l.bicK, l.originPoint)
	}
	// K in jiffies at HZ 250: 4316*250/1024 = 1053.7; at jiffy 1054 the
	// curve's time is 1054*1024/250 = 4317, one unit past K: the cubic
	// offset 410*1^3>>40 is 0, so the target is exactly 100.
	l.update(clock.Time(1054*4*time.Millisecond), 99, 1, 0, false)
	if l.cnt != 99 {
		t.Errorf("cnt at the plateau = %d, want 99", l.cnt)
	}
	// Below the plateau by more than the window can grow in a step:
	// cnt = cwnd/(target - cwnd), at least 2.
	l.update(clock.Time(1054*4*time.Millisecond+time.Second), 50, 1, 0, false)
	if l.cnt != 2 {
		t.Errorf("cnt far below the target = %d, want the floor 2", l.cnt)
	}
}

// TestLinuxWholeSegments drives the controller through losses and
// recoveries on a path and checks that cwnd and ssthresh stay whole
// segments, and that the RFC arithmetic does not (so the test can fail).
func TestLinuxWholeSegments(t *testing.T) {
	for _, linux := range []float64{1, 0} {
		cu := newCubic(t, map[string]float64{"iw": 9, "hystart": 0, "linux": linux})
		d := cctest.NewDriver(t, cu, mss)
		d.SetRTT(50 * time.Millisecond)
		fractional := 0
		for round := range 60 {
			d.SendWindow()
			if round%7 == 3 {
				d.LoseN(1)
				d.Retransmit()
			}
			d.Advance(d.RTT())
			for d.InFlight() > 0 {
				d.AckN(min(2, int(d.InFlight()/mss)))
				if cu.CongestionWindow()%mss != 0 || (cu.ssthreshSet && cu.Ssthresh()%mss != 0) {
					fractional++
				}
			}
		}
		if linux == 1 && fractional != 0 {
			t.Errorf("linux=1: %d ACKs left a fractional cwnd or ssthresh", fractional)
		}
		if linux == 0 && fractional == 0 {
			t.Errorf("linux=0: every window whole; the RFC arithmetic should keep fractions")
		}
	}
}

// TestLinuxIdleShiftsEpoch: CA_EVENT_TX_START moves epoch_start by the
// idle time in jiffies.
func TestLinuxIdleShiftsEpoch(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 10, "hystart": 0, "linux": 1})
	d, _ := enterCA(t, cu, 10, 100*time.Millisecond)
	if !cu.lx.inEpoch {
		t.Fatal("no epoch after the first congestion-avoidance ACK")
	}
	start := cu.lx.epochStart
	d.Advance(2 * time.Second) // nothing in flight: idle
	d.Send(1)
	if got := cu.lx.epochStart - start; got != 500 {
		t.Errorf("epoch moved by %d jiffies after 2 s idle, want 500 (HZ 250)", got)
	}
}

func TestLinuxOnAckDoesNotAllocate(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 10, "hystart": 0, "linux": 1})
	d, a := enterCA(t, cu, 10, 10*time.Millisecond)
	a.CwndLimited = true
	now := d.Now()
	if n := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Millisecond)
		cu.OnAck(now, &a)
	}); n != 0 {
		t.Errorf("OnAck allocates %.1f times per call", n)
	}
}

// TestLinuxHystartInRecovery: Linux's snd_cwnd during fast recovery is
// PRR's (what is in flight plus its allowance), below ssthresh, so
// tcp_in_slow_start holds and cubictcp_acked runs HyStart there: a round
// of RTT samples 50 ms above the minimum sets ssthresh, and the window
// recovery ends at, to that reduced window, a second cut within one loss
// episode (the kernel's CUBIC did this on the cellular trace: ssthresh 167
// -> 117 in recovery, with no state change, in a tcp_probe trace; see
// docs/fidelity.md). With linux: 0 the window during recovery is the
// controller's, at ssthresh, and HyStart does not run.
func TestLinuxHystartInRecovery(t *testing.T) {
	for _, linux := range []float64{1, 0} {
		cu := newCubic(t, map[string]float64{"iw": 100, "linux": linux})
		now := clock.Time(time.Second)
		cu.OnCongestionEvent(now, &cc.LossEvent{PriorInFlight: 100 * mss, LostBytes: mss})
		ss := cu.Ssthresh()
		ack := func(rtt time.Duration, prior, total units.Bytes) {
			now = now.Add(10 * time.Millisecond) // no ACK train
			cu.OnAck(now, &cc.Ack{AckedBytes: mss, RTT: rtt, PriorInFlight: 40 * mss, InFlight: 40 * mss,
				InRecovery: true, CwndLimited: true, TotalDelivered: total, Rate: cc.RateSample{PriorDelivered: prior}})
		}
		ack(100*time.Millisecond, 0, 10*mss) // the minimum delay, in an earlier round
		for k := range units.Bytes(10) {
			ack(150*time.Millisecond, (10+k)*mss, (100+k)*mss)
		}
		got, cwnd := cu.Ssthresh(), cu.CongestionWindow()
		if linux == 1 && (got != 40*mss || cwnd != 40*mss) {
			t.Errorf("linux: ssthresh %.1f and cwnd %.1f segments after a delay rise in recovery, want both 40 (the window in flight)", segs(got), segs(cwnd))
		}
		if linux == 0 && got != ss {
			t.Errorf("linux: 0: ssthresh %.1f segments, want %.1f unchanged", segs(got), segs(ss))
		}
	}
}

// TestLinuxRenoFriendlySmallBeta: with beta 0.05 (beta_scale 2) the
// Reno-friendly step (cwnd*beta_scale)>>3 is 0 below four segments; the
// update must still end (it once looped forever, hanging the simulator in
// a way no interrupt could stop) and count every acknowledged segment
// towards the Reno estimate.
func TestLinuxRenoFriendlySmallBeta(t *testing.T) {
	l := newLinuxCubic(0.05, 0.4, 250)
	if l.betaScale != 2 {
		t.Fatalf("beta_scale = %d, want 2", l.betaScale)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ack := 1; ack <= 10; ack++ {
			l.update(clock.Time(time.Duration(ack)*40*time.Millisecond), 2, 3, 0, true)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("bictcp_update did not return within 5 s at cwnd 2, beta 0.05")
	}
	// Steps of one segment: each ACK's 3 segments (plus what is left from
	// the last) raise the estimate by one per segment beyond the first.
	if l.tcpCwnd < 2+25 {
		t.Errorf("tcp_cwnd %d after 30 segments acknowledged from 2", l.tcpCwnd)
	}
}
