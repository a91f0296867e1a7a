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

func TestWindowFor(t *testing.T) {
	for _, c := range []struct {
		a         float32
		cwnd, out int64
	}{
		{0.5, 10000, 15000}, {-1, 10000, 1448}, {2, 100000, 150000}, {float32(math.NaN()), 5000, 5000},
	} {
		if got := WindowFor(c.a, unitsB(c.cwnd), 1448); int64(got) != c.out {
			t.Errorf("WindowFor(%g, %d) = %d, want %d", c.a, c.cwnd, got, c.out)
		}
	}
}

func unitsB(x int64) units.Bytes { return units.Bytes(x) }
