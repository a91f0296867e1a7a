package deepcc

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// TestLiveAgentMatchesEnv: driven by the simulated sender at the same
// instants, the live agent builds the environment's observation and sets
// the environment's window, step after step.
func TestLiveAgentMatchesEnv(t *testing.T) {
	p, err := LoadPolicy(ShippedPolicyPath)
	if err != nil {
		t.Fatal(err)
	}
	goal := Goal{0.6, 0.3, 0.1}
	e, err := NewEnv(EnvConfig{})
	if err != nil {
		t.Fatal(err)
	}
	link := Link{Name: "change", Rate: 12 * units.Mbps, ChangeAt: 3 * time.Second, ChangeRate: 4 * units.Mbps,
		Delay: 20 * time.Millisecond, Queue: 100, Loss: 0.01, Capacity: 8 * units.Mbps}
	if err := e.Start(link, goal, 5, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	a, err := NewLiveAgent(p, goal)
	if err != nil {
		t.Fatal(err)
	}
	snd := e.flow.Sender
	a.snd, a.mss = snd, snd.Config().MSS
	a.ext = snd.CC().(cc.WindowSetter)
	a.pace = snd.CC().(cc.PacingSetter)
	prev := snd.OnRTT
	snd.OnRTT = func(now clock.Time, rtt time.Duration) {
		prev(now, rtt)
		a.onRTT(rtt)
	}
	a.start(e.net.Now())
	act := p.Clone()
	for k := 0; !e.Done(); k++ {
		want := e.Observation()
		for i := range want {
			if a.obs[i] != want[i] && !(math.IsNaN(float64(a.obs[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("step %d: observation[%d] = %g, env has %g", k, i, a.obs[i], want[i])
			}
		}
		a.decide(e.net.Now())
		if _, _, term, _, _ := e.Step(act.ActInto(want)); term {
			break
		}
		if w := e.Last().Window; snd.CC().CongestionWindow() != w {
			t.Fatalf("step %d: window %d, env set %d", k, snd.CC().CongestionWindow(), w)
		}
		a.observe(e.net.Now())
	}
	if a.Steps < 50 {
		t.Fatalf("only %d steps", a.Steps)
	}
}
