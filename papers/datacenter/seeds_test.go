package datacenter

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl"
)

// seedRow is a crafted row whose two episodes both have reward r.
func seedRow(cond, scheme string, r float64) Row {
	return Row{Condition: cond, Scheme: scheme, Rewards: []float64{r, r},
		Metrics: map[string]Estimate{"reward": {Mean: r, N: 2}, "util": {Mean: r / 10, N: 2}}}
}

// TestSummarizeSeeds checks the across-policy intervals against a hand
// computation: per-policy rewards 1, 2, 6 give mean 3 and half-width
// t(0.975, 2) sqrt(7/3) = 6.572411; against a static best of 0 on the
// same episodes the paired gains are the same numbers, and against a
// default of 1 they are 0, 1, 5 (mean 2, the same half-width).
func TestSummarizeSeeds(t *testing.T) {
	rows := []Row{seedRow("train", "default BBR", 1), seedRow("train", "static best", 0),
		seedRow("train", "PPO seed 1", 1), seedRow("train", "PPO seed 2", 2), seedRow("train", "PPO seed 3", 6),
		seedRow("load", "default BBR", 0), seedRow("load", "PPO seed 1", 4), seedRow("load", "PPO seed 2", 4), seedRow("load", "PPO seed 3", 4)}
	s, err := SummarizeSeeds(rows, "PPO", []string{"PPO seed 1", "PPO seed 2", "PPO seed 3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 2 || s.Rows[0].Condition != "train" || s.Rows[1].Condition != "load" {
		t.Fatalf("rows %+v, want train then load", s.Rows)
	}
	tr := s.Rows[0]
	if r := tr.Metrics["reward"]; r.Mean != 3 || math.Abs(r.CI95-6.572411) > 1e-5 || r.N != 3 {
		t.Errorf("reward over policies %+v, want 3 ± 6.572411", r)
	}
	if u := tr.Metrics["util"]; math.Abs(u.Mean-0.3) > 1e-12 || math.Abs(u.CI95-0.6572411) > 1e-6 {
		t.Errorf("util over policies %+v, want 0.3 ± 0.6572411", u)
	}
	if g := tr.VsStatic; g.Mean != 3 || math.Abs(g.CI95-6.572411) > 1e-5 {
		t.Errorf("gain vs static best %+v, want 3 ± 6.572411", g)
	}
	if g := tr.VsDefault; g.Mean != 2 || math.Abs(g.CI95-6.572411) > 1e-5 {
		t.Errorf("gain vs default %+v, want 2 ± 6.572411", g)
	}
	ld := s.Rows[1]
	if ld.Metrics["reward"].CI95 != 0 || ld.VsDefault.Mean != 4 || !math.IsNaN(ld.VsStatic.Mean) {
		t.Errorf("load: %+v; want interval 0, gain 4 over default and no static-best gain", ld)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("JSON (with an undefined gain): %v", err)
	}
	var text strings.Builder
	s.WriteText(&text)
	if !strings.Contains(text.String(), "3.000 ±6.572 [1.000 2.000 6.000]") {
		t.Errorf("text lacks the interval:\n%s", text.String())
	}
	if _, err := SummarizeSeeds(rows, "PPO", []string{"PPO seed 1", "PPO seed 4"}); err == nil || !strings.Contains(err.Error(), "PPO seed 4") {
		t.Errorf("a missing scheme gave %v", err)
	}
	if tr.VsStaticPerAgent != nil || strings.Contains(text.String(), "static/agent") {
		t.Errorf("without a per-agent baseline: gain %+v, text\n%s", tr.VsStaticPerAgent, text.String())
	}
	// With the per-agent static baseline, its gain is a column of its own.
	rows = append(rows, seedRow("train", StaticPerAgentName, 2), seedRow("load", StaticPerAgentName, 1))
	if s, err = SummarizeSeeds(rows, "PPO", []string{"PPO seed 1", "PPO seed 2", "PPO seed 3"}); err != nil {
		t.Fatal(err)
	}
	if g := s.Rows[0].VsStaticPerAgent; g == nil || g.Mean != 1 || s.Rows[0].VsStatic.Mean != 3 {
		t.Errorf("gain vs static best per agent %+v (vs static best %+v), want 1 and 3", g, s.Rows[0].VsStatic)
	}
	if g := s.Rows[1].VsStaticPerAgent; g == nil || g.Mean != 3 {
		t.Errorf("load: gain vs static best per agent %+v, want 3", g)
	}
	text.Reset()
	s.WriteText(&text)
	if !strings.Contains(text.String(), "vs static/agent") || !strings.Contains(text.String(), "1.000 ±6.572 [-1.000 0.000 4.000]") {
		t.Errorf("text lacks the per-agent column:\n%s", text.String())
	}
}

// TestSelectPolicy trains three tiny policies and applies the rule on
// validation episodes: overlapping evaluation seeds are refused; the
// choice is the median of the scores, which are minus the policies' mean
// rewards on those episodes, and it reproduces.
func TestSelectPolicy(t *testing.T) {
	cfg := smokeConfig(t)
	var seeds []Learned
	for s := uint64(1); s <= 3; s++ {
		res, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Steps: 32, Envs: 1, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, Learned{Name: SeedSchemeName("PPO", s), Policies: res.Policies, Action: cfg.Action})
	}
	ctx := context.Background()
	if _, err := SelectPolicy(ctx, cfg, seeds, 3, 52, 50, 4, 1); err == nil || !strings.Contains(err.Error(), "seed 52") {
		t.Fatalf("validation seeds 52-54 against evaluation seeds 50-53 gave %v, want an error naming seed 52", err)
	}
	if _, err := SelectPolicy(ctx, cfg, seeds, 0, 500, 50, 4, 1); err == nil {
		t.Error("zero validation runs gave no error")
	}
	sel, err := SelectPolicy(ctx, cfg, seeds, 3, 500, 50, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rl.MedianSeed(sel.Scores)
	if sel.Index != want || len(sel.Scores) != 3 || !strings.Contains(sel.Validation, "seeds 500-502") {
		t.Errorf("selection %+v, want the median (index %d) on seeds 500-502", sel, want)
	}
	for i, l := range seeds {
		var sum float64
		for s := uint64(500); s < 503; s++ {
			st, err := RunEpisode(cfg, s, PolicyScheme(l.Name, l.Policies, l.Action).New())
			if err != nil {
				t.Fatal(err)
			}
			sum += st.Metrics().Reward
		}
		if math.Abs(-sum/3-sel.Scores[i]) > 1e-12 {
			t.Errorf("policy %d: score %g, standalone episodes give %g", i, sel.Scores[i], -sum/3)
		}
	}
	again, err := SelectPolicy(ctx, cfg, seeds, 3, 500, 50, 4, 1)
	if err != nil || again.Index != sel.Index || again.Scores[1] != sel.Scores[1] {
		t.Errorf("with 1 job: %+v (%v); with 2: %+v", again, err, sel)
	}
}
