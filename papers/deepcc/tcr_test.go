package deepcc

import (
	"testing"

	"github.com/cclab/cclab/papers/deepcc/tuner"
)

func TestTCRHandComputed(t *testing.T) {
	tg := tuner.Target{MinThroughputMbps: 8, MaxDelayMs: 70, MaxLoss: 0.01}
	attempts := []Attempt{
		{tg, Outcome{ThroughputMbps: 9, DelayP95Ms: 60, Loss: 0}},                                // met
		{tg, Outcome{ThroughputMbps: 8, DelayP95Ms: 70, Loss: 0.01}},                             // met: bounds inclusive
		{tg, Outcome{ThroughputMbps: 7.9, DelayP95Ms: 20, Loss: 0}},                              // throughput short
		{tg, Outcome{ThroughputMbps: 12, DelayP95Ms: 71, Loss: 0}},                               // delay over
		{tg, Outcome{ThroughputMbps: 12, DelayP95Ms: 30, Loss: 0.02}},                            // loss over
		{tuner.Target{MaxDelayMs: 100}, Outcome{ThroughputMbps: 0.1, DelayP95Ms: 99, Loss: 0.5}}, // delay-only target: met
		// The mean delay is not what targets bound: a low mean with a
		// high 95th percentile misses.
		{tg, Outcome{ThroughputMbps: 9, DelayP95Ms: 200, DelayMeanMs: 30}},
	}
	c := TCR(attempts)
	if c.Met != 3 || c.Total != 7 || c.Ratio != 3.0/7 {
		t.Errorf("TCR = %+v, want 3 of 7 (ratio %g)", c, 3.0/7)
	}
	if got := c.String(); got != "42.9% (3/7)" {
		t.Errorf("String() = %q, want %q", got, "42.9% (3/7)")
	}
	if c0 := TCR(nil); c0.Total != 0 || c0.Ratio != 0 {
		t.Errorf("TCR(nil) = %+v, want 0 of 0 with ratio 0", c0)
	}
	sum := c.Add(Completion{Met: 1, Total: 3})
	if sum.Met != 4 || sum.Total != 10 || sum.Ratio != 0.4 {
		t.Errorf("Add = %+v, want 4 of 10 (0.4)", sum)
	}
}

func TestTargetsFor(t *testing.T) {
	ts := TargetsFor(10)
	if want := len(TargetThroughputShares) * len(TargetDelaysMs); len(ts) != want {
		t.Fatalf("%d targets, want %d", len(ts), want)
	}
	seen := map[tuner.Target]bool{}
	for _, tg := range ts {
		if err := tg.Validate(); err != nil {
			t.Errorf("target %v: %v", tg, err)
		}
		if tg.MaxLoss != TargetLoss {
			t.Errorf("target %v: loss bound %g, want %g", tg, tg.MaxLoss, TargetLoss)
		}
		seen[tg] = true
	}
	if len(seen) != len(ts) {
		t.Errorf("duplicate targets in %v", ts)
	}
	if ts[0].MinThroughputMbps != 4 || ts[0].MaxDelayMs != TargetDelaysMs[0] {
		t.Errorf("first target %v, want 0.4 x 10 = 4 Mbit/s and %g ms", ts[0], TargetDelaysMs[0])
	}
	if tiny := TargetsFor(0.01); tiny[0].MinThroughputMbps != 0.1 {
		t.Errorf("a 10 kbit/s trace's lowest throughput bound is %g, want the 0.1 Mbit/s floor", tiny[0].MinThroughputMbps)
	}
}
