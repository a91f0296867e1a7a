package deepcc

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// crafted returns a one-trace report with a classic scheme (the same in
// every report) and a DeepCC goal whose throughput and TCR are given.
func crafted(thr, tcr float64) *Report {
	g := DefaultGoals[0].Goal
	return &Report{
		Traces: []TraceResult{{Name: "T", Schemes: []SchemeResult{
			{Scheme: "cubic", ThroughputMbps: 5, DelayP95Ms: 100},
			{Scheme: "deepcc-g1", Goal: &g, ThroughputMbps: thr, DelayP95Ms: 10 * thr, Loss: 0.01},
		}}},
		TCR: []SchemeTCR{{Scheme: TunedScheme, Completion: Completion{Ratio: tcr}}, {Scheme: "cubic", Completion: Completion{Ratio: 0.5}}},
	}
}

// TestSummarizeSeeds checks the across-policy intervals against a hand
// computation: per-policy values 1, 2, 6 give mean 3 and half-width
// t(0.975, 2) sqrt(7/3) = 6.572411; TCRs 0.2, 0.4, 0.6 give mean 0.4 and
// 4.302653 * 0.2 / sqrt(3) = 0.496828. A scheme that does not depend on
// the policy has interval 0.
func TestSummarizeSeeds(t *testing.T) {
	s, err := SummarizeSeeds([]*Report{crafted(1, 0.2), crafted(2, 0.4), crafted(6, 0.6)})
	if err != nil {
		t.Fatal(err)
	}
	cubic, g1 := s.Traces[0].Schemes[0], s.Traces[0].Schemes[1]
	if cubic.Throughput.Mean != 5 || cubic.Throughput.CI95 != 0 {
		t.Errorf("cubic over policies %+v, want 5 ± 0", cubic.Throughput)
	}
	if g1.Throughput.Mean != 3 || math.Abs(g1.Throughput.CI95-6.572411) > 1e-5 || math.Abs(g1.DelayP95.CI95-65.72411) > 1e-4 {
		t.Errorf("g1 throughput %+v, delay %+v; want 3 ± 6.572411 and 30 ± 65.72411", g1.Throughput, g1.DelayP95)
	}
	if g1.LossPercent.Mean != 1 || g1.Goal == nil {
		t.Errorf("g1 loss %v%%, goal %v; want 1%% and the goal kept", g1.LossPercent.Mean, g1.Goal)
	}
	if s.TCR[0].Scheme != TunedScheme || math.Abs(s.TCR[0].Ratio.Mean-0.4) > 1e-12 || math.Abs(s.TCR[0].Ratio.CI95-0.496828) > 1e-6 {
		t.Errorf("tuned TCR over policies %+v, want 0.4 ± 0.496828", s.TCR[0].Ratio)
	}
	if s.Rule != rl.MedianRule || len(s.PerPolicy) != 3 {
		t.Errorf("rule %q, %d per-policy reports", s.Rule, len(s.PerPolicy))
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("JSON: %v", err)
	}
	var text strings.Builder
	s.Policies = []string{"a", "b", "c"}
	s.WriteText(&text)
	if !strings.Contains(text.String(), "3.00 ±6.57 [1.00 2.00 6.00]") || !strings.Contains(text.String(), "40.0 ±49.7 [20.0 40.0 60.0]") {
		t.Errorf("text output lacks the across-policy intervals:\n%s", text.String())
	}
	// Evaluations of other schemes do not mix.
	other := crafted(1, 0.2)
	other.Traces[0].Schemes[1].Scheme = "deepcc-g2"
	if _, err := SummarizeSeeds([]*Report{crafted(1, 0.2), other}); err == nil {
		t.Error("reports with other schemes were summarised together")
	}
	if _, err := SummarizeSeeds(nil); err == nil {
		t.Error("no reports gave no error")
	}
}

// biasPolicy is goalPolicy with another bias: a different "seed".
func biasPolicy(t *testing.T, bias float32) *policy.Policy {
	p := goalPolicy(t)
	p.Net.Params[ObservationSize] = bias
	return p
}

// TestSeedsEvaluateAndSelect runs the seed evaluation and the rule on
// tiny sizes: validation traces must differ from the evaluation's; the
// choice is the median of the validation scores and reproducible; the
// per-policy values are those policies' own evaluations.
func TestSeedsEvaluateAndSelect(t *testing.T) {
	pols := []*policy.Policy{biasPolicy(t, -2), biasPolicy(t, 1), biasPolicy(t, -0.5)}
	cfg := EvalConfig{
		Traces: []string{testTrace}, Goals: []NamedGoal{{"hi", Goal{0.9, 0.05, 0.05}}},
		Classic: []string{"cubic"}, Duration: 3 * time.Second, Runs: 1,
		Targets: func(c float64) []tuner.Target {
			return []tuner.Target{{MinThroughputMbps: 0.3 * c, MaxDelayMs: 300}, {MinThroughputMbps: 0.6 * c, MaxDelayMs: 50}, {MinThroughputMbps: 0.8 * c, MaxDelayMs: 20}}
		},
	}
	ctx := context.Background()
	if _, err := SelectPolicy(ctx, cfg, pols, []string{filepath.Join("..", "..", "traces", filepath.Base(testTrace))}, 1); err == nil || !strings.Contains(err.Error(), "ATT-LTE-driving-2016.down") {
		t.Fatalf("validation on an evaluation trace gave %v, want an error naming the trace", err)
	}
	val := []string{filepath.Join("..", "..", "traces", "TMobile-LTE-driving.down.gz")}
	if _, err := SelectPolicy(ctx, cfg, pols, val, 0); err == nil {
		t.Error("zero validation runs gave no error")
	}
	sel, err := SelectPolicy(ctx, cfg, pols, val, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rl.MedianSeed(sel.Scores)
	if sel.Index != want || len(sel.Scores) != 3 || sel.Rule != rl.MedianRule || !strings.Contains(sel.Validation, "TMobile-LTE-driving.down") {
		t.Errorf("selection %+v, want index %d (median of the scores) on TMobile-LTE-driving.down", sel, want)
	}
	for _, s := range sel.Scores {
		if !(s >= 0 && s <= 1) {
			t.Errorf("score %g outside [0, 1]", s)
		}
	}
	again, err := SelectPolicy(ctx, cfg, pols, val, 2)
	if err != nil || again.Index != sel.Index || again.Scores[0] != sel.Scores[0] || again.Scores[2] != sel.Scores[2] {
		t.Errorf("second selection %+v (%v), first %+v", again, err, sel)
	}

	rep, err := EvaluateSeeds(ctx, cfg, pols[:2], []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PerPolicy) != 2 || len(rep.Traces) != 1 || len(rep.Traces[0].Schemes) != 2 {
		t.Fatalf("seed report: %d policies, traces %+v", len(rep.PerPolicy), rep.Traces)
	}
	hi := rep.Traces[0].Schemes[1]
	for i, r := range rep.PerPolicy {
		if hi.Throughput.PerSeed[i] != r.Traces[0].Schemes[1].ThroughputMbps {
			t.Errorf("policy %d: per-seed throughput %g, its own evaluation %g", i, hi.Throughput.PerSeed[i], r.Traces[0].Schemes[1].ThroughputMbps)
		}
	}
	if c := rep.Traces[0].Schemes[0]; c.Throughput.CI95 != 0 || c.Throughput.PerSeed[0] != c.Throughput.PerSeed[1] {
		t.Errorf("cubic differs between policies: %+v", c.Throughput)
	}
	if _, err := EvaluateSeeds(ctx, cfg, pols[:2], []string{"a"}); err == nil {
		t.Error("two policies with one name gave no error")
	}
}
