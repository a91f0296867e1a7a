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

// TestECNFeatures: on a flow with ECN behind a marking queue, the step's
// ECE fraction is in [0, 1], some steps see marks, and the steps' ECN
// reductions add up to the flow's; without ECN both features stay 0.
func TestECNFeatures(t *testing.T) {
	for _, ecn := range []bool{true, false} {
		s, err := scenarios.Load("dumbbell")
		if err != nil {
			t.Fatal(err)
		}
		sets := [][2]string{{"bottleneck.queue.limit", "100"}, {"bottleneck.queue.mark_threshold", "20"}, {"flows.0.cc", "cubic"}}
		if ecn {
			sets = append(sets, [2]string{"transport.ecn", "true"})
		}
		for _, kv := range sets {
			if err := s.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		c := Config{Scenario: s, Step: 100 * time.Millisecond, EpisodeSteps: 40, Action: "param:beta",
			Features: []string{"ece_fraction", "ecn_reductions", "throughput"}}
		e, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(1)
		var marked int
		var reductions float64
		for k := range 40 {
			obs, _, term, trunc, _ := e.Step([]float32{0})
			if f := obs[0]; !(f >= 0 && f <= 1) {
				t.Fatalf("ecn=%v step %d: ECE fraction %g", ecn, k, f)
			}
			if obs[0] > 0 {
				marked++
			}
			reductions += float64(obs[1])
			if term || trunc {
				break
			}
		}
		total := e.flow.Sender.ECNReductions()
		t.Logf("ecn=%v: %d of 40 steps with echoes, %g reductions (flow: %d)", ecn, marked, reductions, total)
		if reductions != float64(total) {
			t.Errorf("ecn=%v: the steps' reductions add to %g, the flow's %d", ecn, reductions, total)
		}
		if ecn && (marked < 2 || total < 2) {
			t.Errorf("with ECN: %d steps with echoes, %d reductions; want both", marked, total)
		}
		if !ecn && (marked != 0 || total != 0) {
			t.Errorf("without ECN: %d steps with echoes, %d reductions; want none", marked, total)
		}
	}
}

// TestMarkThresholdAction: the agent sets the bottleneck's marking
// threshold; at a = -1 (one packet) the ECN flow keeps the queue shorter
// and more of its data is echoed than at a = +1 (the queue's limit), and
// flows without ECN, or a queue that marks by its own rule, are refused.
func TestMarkThresholdAction(t *testing.T) {
	load := func(sets ...[2]string) Config {
		s, err := scenarios.Load("dumbbell")
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range append([][2]string{{"bottleneck.queue.limit", "100"}, {"flows.0.cc", "cubic"}}, sets...) {
			if err := s.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		return Config{Scenario: s, Step: 100 * time.Millisecond, EpisodeSteps: 50, Action: ActionMarkThreshold,
			Features: []string{"queue_delay", "ece_fraction"}}
	}
	run := func(a float32) (qdelay, ece, threshold float64) {
		e, err := New(load([2]string{"transport.ecn", "true"}))
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(1)
		for range 50 {
			obs, _, term, trunc, info := e.Step([]float32{a})
			qdelay += float64(obs[0]) / 50
			ece += float64(obs[1]) / 50
			threshold = info["mark_threshold"]
			if term || trunc {
				break
			}
		}
		return
	}
	lq, le, lt := run(-1)
	hq, he, ht := run(1)
	t.Logf("threshold %g: queueing delay %.2f ms, ECE fraction %.4f; threshold %g: %.2f ms, %.4f", lt, lq, le, ht, hq, he)
	if lt != 1 || ht != 100 {
		t.Errorf("thresholds %g and %g packets, want 1 and the limit 100", lt, ht)
	}
	if !(lq < hq/2 && le > he) {
		t.Errorf("a low threshold should halve the queueing delay and echo more: %.2f ms against %.2f, ECE %.4f against %.4f", lq, hq, le, he)
	}
	for _, c := range []struct {
		sets [][2]string
		want string
	}{
		{nil, "not ECN-capable"},
		{[][2]string{{"transport.ecn", "true"}, {"bottleneck.queue.discipline", "red"}}, "needs a droptail"},
	} {
		if _, err := New(load(c.sets...)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.sets, err, c.want)
		}
	}
}
