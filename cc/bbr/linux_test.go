package bbr

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// TestLinuxMaxFilterLagsAFallingRate works Linux's win_minmax through a
// rate that falls one step per round after ten rounds at 19 (window 10):
// its second and third choices are taken a quarter and a half window
// after the best, so the samples in between are never held, and when the
// best ages out the estimate falls to the second choice, below the exact
// maximum of the window.
func TestLinuxMaxFilterLagsAFallingRate(t *testing.T) {
	f := NewMaxFilter(10)
	f.SetLinux(true)
	seq := []units.Bandwidth{19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 10, 9, 8, 7, 6, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}
	var linux, exact []units.Bandwidth
	for r, v := range seq {
		f.Update(uint64(r), v)
		linux = append(linux, f.Get())
		f.SetLinux(false)
		exact = append(exact, f.Get())
		f.SetLinux(true)
	}
	// By hand, lib/win_minmax.c: the 19s reset the filter each round
	// (v >= best) up to round 9; round 12 is more than win/4 = 2 rounds
	// after the best, so 8 becomes the 2nd and 3rd choice; round 15 more
	// than win/2 = 5 after, so 5 the 3rd; at round 20 the best is 11
	// rounds old and 8 takes its place, at round 23 5 does.
	for r := range seq {
		want := units.Bandwidth(19)
		switch {
		case r >= 23:
			want = 5
		case r >= 20:
			want = 8
		}
		if linux[r] != want {
			t.Errorf("round %d: Linux's filter %d, want %d", r, linux[r], want)
		}
	}
	// The exact filter holds round 10's 10 at round 20.
	if exact[20] != 10 || exact[23] != 7 {
		t.Errorf("exact filter at rounds 20 and 23: %d and %d, want 10 and 7", exact[20], exact[23])
	}
}

// TestLinuxMaxFilterNeverAboveExact: whatever the samples and the window,
// Linux's estimate is a sample taken within the window, so never above the
// exact windowed maximum, and equal to it whenever the newest sample is
// the largest.
func TestLinuxMaxFilterNeverAboveExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 200 {
		w := 1 + rng.IntN(20)
		f := NewMaxFilter(w)
		f.SetLinux(true)
		round := uint64(0)
		for range 300 {
			round += uint64(rng.IntN(3)) // several samples a round, or rounds without any
			v := units.Bandwidth(1 + rng.IntN(100))
			f.Update(round, v)
			got := f.Get()
			f.SetLinux(false)
			exact := f.Get()
			f.SetLinux(true)
			if got > exact {
				t.Fatalf("trial %d, window %d, round %d: Linux's %d above the exact %d", trial, w, round, got, exact)
			}
			if v >= exact && got != v {
				t.Fatalf("trial %d, round %d: a new maximum %d, Linux's filter says %d", trial, round, v, got)
			}
		}
	}
}

// TestLinuxMinRTTRule: an RTT sample equal to the estimate renews it under
// the BBR draft's rule, so a flow that drains its queue now and then never
// enters PROBE_RTT; under Linux's (linux = 1) only a smaller sample does,
// and PROBE_RTT comes 10 s after the estimate was taken.
func TestLinuxMinRTTRule(t *testing.T) {
	for _, linux := range []float64{0, 1} {
		b := newTestBBR(t, map[string]float64{"linux": linux})
		f := newFeeder(t, b)
		toProbeBW(t, b, f)
		stamp := b.Snapshot().MinRTTStamp
		probed := false
		for f.now < stamp.Add(15*time.Second) && !probed {
			f.ack(10*time.Millisecond, false) // every sample equals the estimate
			probed = b.Snapshot().Mode == ProbeRTT
		}
		switch {
		case linux == 0 && probed:
			t.Errorf("draft rule: PROBE_RTT at %v though every sample renewed the estimate", f.now)
		case linux == 1 && !probed:
			t.Errorf("Linux's rule: no PROBE_RTT within 15 s of the estimate (stamped %v)", stamp)
		case linux == 1 && f.now.Sub(stamp) < 10*time.Second:
			t.Errorf("Linux's rule: PROBE_RTT after %v, want after the 10-s window", f.now.Sub(stamp))
		}
	}
}

// TestLinuxStartFromHandshake: with linux = 1 the handshake's RTT starts
// RTprop (stamped when the connection is established) and the pacing
// rate (high_gain x the initial window over the SYN's SRTT), as Linux's
// bbr_init; by default BBR ignores it and paces its first flight at the
// nominal 1-ms RTT.
func TestLinuxStartFromHandshake(t *testing.T) {
	est := clock.Time(time.Second)
	for _, linux := range []float64{0, 1} {
		b := newTestBBR(t, map[string]float64{"linux": linux})
		nominal := b.PacingRate()
		b.OnEstablished(est, time.Second, 1010*time.Millisecond)
		s := b.Snapshot()
		if linux == 0 {
			if s.MinRTT != 0 || b.PacingRate() != nominal {
				t.Errorf("default: RTprop %v and pacing %v after the handshake, want 0 and the nominal %v", s.MinRTT, b.PacingRate(), nominal)
			}
			continue
		}
		if s.MinRTT != 1010*time.Millisecond || s.MinRTTStamp != est {
			t.Errorf("linux: RTprop %v stamped %v, want the SYN's 1.01 s at %v", s.MinRTT, s.MinRTTStamp, est)
		}
		want := pacingRateFor(units.BandwidthFromDelta(10*mss, time.Second), HighGain)
		if got := b.PacingRate(); got != want || got >= nominal/100 {
			t.Errorf("linux: pacing %v, want %v (the first flight over the SYN's SRTT)", got, want)
		}
	}
}

// TestLinuxRecoveryAfterLossState: when the transport turns a timeout's
// loss state into fast recovery (Linux tcp_enter_recovery from
// TCP_CA_Loss), Linux's BBR sees its state become Recovery and starts a
// round of packet conservation (bbr_set_cwnd_to_recover_or_restore: the
// window set to the flight plus what the ACK delivered); with linux = 0
// BBR keeps treating the episode as the loss state, growing its window
// by what each ACK delivers. Both restore the saved window when the
// recovery ends.
func TestLinuxRecoveryAfterLossState(t *testing.T) {
	for _, linux := range []float64{0, 1} {
		b := newTestBBR(t, map[string]float64{"linux": linux, "extra_acked_gain": 0})
		f := newFeeder(t, b)
		saved := timeOut(t, b, f)
		f.inFlight = mss
		for range 3 { // the loss state's slow start: 4, 6, 8 segments
			f.ack(time.Millisecond, false)
		}
		if got := b.CongestionWindow(); got != 8*mss {
			t.Fatalf("linux %v: cwnd after three ACKs in the loss state = %d segments, want 8", linux, got/mss)
		}
		// A retransmission is found lost: the transport enters recovery.
		b.OnCongestionEvent(f.now, &cc.LossEvent{PriorInFlight: 6 * mss, LostBytes: mss})
		f.inRecovery, f.inFlight = true, 5*mss
		f.ack(time.Millisecond, false)
		s := b.Snapshot()
		if linux == 1 {
			if !s.PacketConservation || b.CongestionWindow() != 7*mss {
				t.Errorf("linux: conserving %v, cwnd %d segments on the first ACK of the recovery, want true and the flight plus the ACK's 2 = 7",
					s.PacketConservation, b.CongestionWindow()/mss)
			}
			if s.PriorCwnd != saved {
				t.Errorf("linux: saved cwnd %d, want the timeout's %d (the larger)", s.PriorCwnd, saved)
			}
		} else if s.PacketConservation || b.CongestionWindow() != 10*mss {
			t.Errorf("default: conserving %v, cwnd %d segments, want false and the loss state's growth to 10",
				s.PacketConservation, b.CongestionWindow()/mss)
		}
		b.OnRecoveryEnd(f.now)
		f.inRecovery = false
		f.ack(time.Millisecond, false)
		if got, want := b.CongestionWindow(), min(saved, b.Snapshot().TargetCwnd); got < want {
			t.Errorf("linux %v: cwnd %d after the recovery, want restored to %d", linux, got, want)
		}
	}
}
