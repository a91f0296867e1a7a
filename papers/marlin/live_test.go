package marlin

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/env"
)

// TestLiveObserverMatchesEnv: fed the simulated sender's state and RTT
// samples, the live observer builds exactly the stacked observation the
// training environment gives the policy, step after step.
func TestLiveObserverMatchesEnv(t *testing.T) {
	core, err := NewEnv(EnvConfig{Base: base(t), Loss: 0.03, Bytes: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.NewStack(core, History, true)
	if err != nil {
		t.Fatal(err)
	}
	st.Reset(3)
	o := NewLiveObserver(0)
	snd := core.Flow().Sender
	prev := snd.OnRTT
	snd.OnRTT = func(now clock.Time, rtt time.Duration) {
		prev(now, rtt)
		o.OnRTT(rtt)
	}
	actions := []float32{0.5, 0.9, -0.2, 0.1, 0.3, 0, -0.5, 1, 0.2, 0.4, 0.1, -0.1}
	for k := range 40 {
		want, _, term, _, _ := st.Step([]float32{actions[k%len(actions)]})
		got, _ := o.Observe(core.Network().Now(), snd.State())
		for i := range want {
			if got[i] != want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("step %d: observation[%d] = %g, env has %g", k, i, got[i], want[i])
			}
		}
		if term {
			break
		}
	}
}

// TestWindowFor: both window-relative parametrisations scale as Env.Step
// does (a log2 -1 halves, a linear -1 falls to one MSS), clipped to
// [-1, 1] with NaN as 0; and Env.Step sets exactly WindowFor's window.
func TestWindowFor(t *testing.T) {
	for _, c := range []struct {
		action    string
		a         float32
		cwnd, out int64
	}{
		{ActionLinear, 0.5, 10000, 15000}, {ActionLinear, -1, 10000, 1448}, {ActionLinear, 2, 100000, 150000},
		{ActionLinear, float32(math.NaN()), 5000, 5000}, {"", 0.5, 10000, 15000},
		{ActionLog2, 1, 10000, 20000}, {ActionLog2, -1, 10000, 5000}, {ActionLog2, 0.5, 10000, 14143},
		{ActionLog2, -3, 10000, 5000}, {ActionLog2, float32(math.NaN()), 5000, 5000}, {ActionLog2, -1, 2000, 1448},
	} {
		if got := WindowFor(c.action, c.a, unitsB(c.cwnd), 1448); int64(got) != c.out {
			t.Errorf("WindowFor(%q, %g, %d) = %d, want %d", c.action, c.a, c.cwnd, got, c.out)
		}
	}
	for _, action := range []string{ActionLinear, ActionLog2} {
		e, err := NewEnv(EnvConfig{Base: base(t), Action: action})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(3)
		for i, a := range []float32{0.7, -0.4, 1, -1, 0.25} {
			cw := e.Flow().Sender.CC().CongestionWindow()
			want := WindowFor(action, a, cw, e.mss)
			e.Step([]float32{a})
			// The step's events may change the window after it is set; a
			// window-setting controller keeps it (Mockets' fixed window).
			if got := e.Flow().Sender.CC().CongestionWindow(); got != want {
				t.Errorf("%s step %d: window %d, WindowFor says %d", action, i, got, want)
			}
		}
	}
}

func unitsB(x int64) units.Bytes { return units.Bytes(x) }
