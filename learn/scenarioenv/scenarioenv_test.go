package scenarioenv

import (
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/scenarios"
)

func dumbbell(t *testing.T) Config {
	t.Helper()
	s, err := scenarios.Load("dumbbell")
	if err != nil {
		t.Fatal(err)
	}
	return Config{Scenario: s, Step: 50 * time.Millisecond, EpisodeSteps: 40}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Flow = "nope" }, `no flow "nope"`},
		{func(c *Config) { c.Features = []string{"colour"} }, `unknown feature "colour"`},
		{func(c *Config) { c.Reward = "joy" }, `unknown reward "joy"`},
		{func(c *Config) { c.Action = "steer" }, `unknown action "steer"`},
		{func(c *Config) { c.Action = "param:nope" }, `no parameter "nope"`},
		{func(c *Config) { c.Step = 1 }, "step"},
	} {
		c := dumbbell(t)
		tc.edit(&c)
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}

// TestWindowAction checks the window action's arithmetic through the
// observed window: a = +1 doubles it each step (until the flow fills the
// path), a = -1 halves it down to one segment.
func TestWindowAction(t *testing.T) {
	c := dumbbell(t)
	c.Features = []string{"cwnd", "throughput", "capacity"}
	c.Reward = "utilization"
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(1)
	prev := 0.0
	for k := range 3 {
		obs, r, term, trunc, _ := e.Step([]float32{1})
		if term || trunc {
			t.Fatalf("step %d ended the episode", k)
		}
		if k > 0 && float64(obs[0]) != 2*prev {
			// The external controller's window only changes on actions.
			t.Errorf("step %d: window %g KB after %g KB, want doubled", k, obs[0], prev)
		}
		if !(r >= 0 && r <= 1.05) {
			t.Errorf("step %d: utilization %g outside [0, 1]", k, r)
		}
		if capMbps := obs[2]; capMbps < 9.5 || capMbps > 10.5 {
			t.Errorf("step %d: capacity %g Mbit/s, want the dumbbell's 10", k, capMbps)
		}
		prev = float64(obs[0])
	}
	for range 30 {
		obs, _, _, _, _ := e.Step([]float32{-1})
		prev = float64(obs[0])
	}
	if prev != float64(float32(1.448)) {
		t.Errorf("window after 30 halvings = %g KB, want one 1448-byte segment", prev)
	}
}

// TestDeterministic checks that a seed replays its episode and that the
// episode limit truncates.
func TestDeterministic(t *testing.T) {
	c := dumbbell(t)
	c.Action = "param:beta"
	c.Scenario.Flows[0].CC.Name = "cubic"
	run := func() []float32 {
		e, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(3)
		var out []float32
		for k := range c.EpisodeSteps {
			obs, _, term, trunc, _ := e.Step([]float32{float32(k%5)/2 - 1})
			out = append(out, obs...)
			if term || trunc != (k == c.EpisodeSteps-1) {
				t.Fatalf("step %d: terminated %v truncated %v", k, term, trunc)
			}
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("value %d differs between two runs of seed 3", i)
		}
	}
}
