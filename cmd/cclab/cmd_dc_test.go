package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDCUsageErrors(t *testing.T) {
	expectUsageErrors(t, [][]string{
		{"dc", "train", "extra"},
		{"dc", "train", "--algo", "sac"},
		{"dc", "train", "--agents", "0"},
		{"dc", "train", "--mode", "both"},
		{"dc", "train", "--algo", "dqn", "--action", "continuous"},
		{"dc", "train", "--action", "grid"},
		{"dc", "train", "--alpha", "2"},
		{"dc", "train", "--resume"},
		{"dc", "train", "--agents", "2", "--mode", "independent", "--checkpoint", "x.ckpt"},
		{"dc", "train", "--steps", "0"},
		{"dc", "train", "--fairness", "0.5"},
		{"dc", "eval", "--runs", "0"},
		{"dc", "eval", "--policy", "none", "--static-best", "0.01,2"},
		{"dc", "eval", "--policy", "none", "--static-best", "fast"},
		{"dc", "eval", "--policy", "none", "--conditions", "train,mars"},
		{"dc", "eval", "--compare", "nofile"},
		{"dc", "eval", "--policy", "none", "--static-best", "0.1,3", "--static-per-agent"},
		// A NaN passed every ordering test, and its arrival gaps filled
		// memory with events until the process was killed.
		{"dc", "eval", "--load", "NaN,0.2"},
		{"dc", "train", "--load", "0.1,NaN"},
		{"dc", "train", "--load", "0.1,Inf"},
		{"dc", "eval", "--churn", "NaN"},
	})
	// Bad files are errors naming the problem, not panics.
	expectJunkPolicy(t, "dc", "eval")
	dir := t.TempDir()
	if code, _, errs := runCmd(t, "dc", "train", "--scenario", filepath.Join(dir, "missing.yaml")); code != 1 || !strings.Contains(errs, "missing.yaml") {
		t.Errorf("missing scenario: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "dc", "train", "--scenario", "dumbbell"); code != 1 || !strings.Contains(errs, "must use bbr") {
		t.Errorf("non-BBR scenario: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "dc", "train", "--agents", "9"); code != 1 || !strings.Contains(errs, "9 agents for 8") {
		t.Errorf("too many agents: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "dc", "train", "--agents", "2", "--fairness", "11"); code != 1 || !strings.Contains(errs, "fairness weight 11 must be in [0, 10]") {
		t.Errorf("fairness weight out of range: exit %d, stderr %q", code, errs)
	}
	// A run without --resume overwrote an earlier run's checkpoint, curve
	// and policy; a policy path that cannot be written failed only after
	// training. Both now fail before it.
	ck := filepath.Join(dir, "old.ckpt")
	os.WriteFile(ck, []byte("x"), 0o644)
	if code, _, errs := runCmd(t, "dc", "train", "--checkpoint", ck, "--out", filepath.Join(dir, "p.policy")); code != 1 || !strings.Contains(errs, "left by an earlier training run") {
		t.Errorf("existing checkpoint: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "dc", "train", "--out", dir); code != 1 || !strings.Contains(errs, "--out: cannot save the policy to "+dir+": it is a folder") {
		t.Errorf("--out a folder: exit %d, stderr %q", code, errs)
	}
}

// TestDCTrainEval trains tiny policies (one agent; two independent agents)
// and evaluates them against the baselines, with all outputs.
func TestDCTrainEval(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.policy")
	tiny := []string{"--episode", "3", "--interval", "20ms", "--envs", "1"}
	code, out, errs := runCmd(t, append([]string{"dc", "train", "--steps", "48", "--out", pol}, tiny...)...)
	if code != 0 || !strings.Contains(out, "policy written to "+pol) {
		t.Fatalf("train exit %d: %s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.csv")); err != nil {
		t.Fatalf("learning curve: %v", err)
	}
	ma := filepath.Join(dir, "m.policy")
	code, out, errs = runCmd(t, append([]string{"dc", "train", "--algo", "a2c", "--agents", "2", "--mode", "independent", "--steps", "16", "--out", ma}, tiny...)...)
	if code != 0 || !strings.Contains(out, "m.agent0.policy") || !strings.Contains(out, "m.agent1.policy") {
		t.Fatalf("multi-agent train exit %d: %s%s", code, out, errs)
	}
	// The two-agent policies do not fit a one-agent comparison.
	code, _, errs = runCmd(t, "dc", "eval", "--policy", pol, "--compare", "ma="+filepath.Join(dir, "m.agent0.policy")+","+filepath.Join(dir, "m.agent1.policy"),
		"--runs", "1", "--static-best", "0.1,3", "--conditions", "train")
	if code != 1 || !strings.Contains(errs, "other environment settings") {
		t.Fatalf("mixed agents: exit %d, stderr %q", code, errs)
	}
	res := filepath.Join(dir, "eval")
	code, out, errs = runCmd(t, "dc", "eval", "--policy", pol, "--runs", "2", "--static-best", "0.1,3", "--conditions", "train,load",
		"--out", res, "--json", "--jobs", "2")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		StaticBest struct{ MinRTTWindow float64 } `json:"static_best"`
		Results    []struct {
			Condition, Scheme string
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.StaticBest.MinRTTWindow != 0.1 || len(rep.Results) != 6 {
		t.Fatalf("report: static best %v, %d rows (want 0.1 s and 2 conditions x 3 schemes)", rep.StaticBest, len(rep.Results))
	}
	for _, f := range []string{"dc_eval.json", "report.html", "bars_reward.svg", "trace_rtt.png"} {
		if _, err := os.Stat(filepath.Join(res, f)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
	// The table names every scheme; the multi-agent policies evaluate on
	// their own, also against one static setting per agent.
	code, out, errs = runCmd(t, "dc", "eval", "--policy", filepath.Join(dir, "m.agent0.policy")+","+filepath.Join(dir, "m.agent1.policy"),
		"--runs", "1", "--static-best", "10,10", "--conditions", "train", "--static-per-agent", "--grid-runs", "1")
	if code != 0 || !strings.Contains(out, "A2C ×2 independent") || !strings.Contains(out, "default BBR") || !strings.Contains(out, "2 agent(s)") ||
		!strings.Contains(out, "static best per agent: [") || !strings.Contains(out, "vs static/agent") {
		t.Fatalf("multi-agent eval exit %d: %s%s", code, out, errs)
	}
}

// TestDCEvalSeeds evaluates two tiny independently trained policies as
// seeds: the rule's choice and the across-policy summary are in the JSON;
// bad combinations are usage errors.
func TestDCEvalSeeds(t *testing.T) {
	shipped := "papers/datacenter/policy/ppo.policy"
	expectUsageErrors(t, [][]string{
		{"dc", "eval", "--policy", shipped, "--seed-policy", shipped},
		{"dc", "eval", "--seed-policy", shipped, "--seed-policy", shipped, "--static-best", "0.1,3", "--runs", "1"},
		{"dc", "eval", "--seed-policy", "a", "--validation-runs", "-1"},
		{"dc", "eval", "--seed-policy", "a", "--seed-policy", "b", "--seed", "10", "--runs", "5", "--validation-seed", "14"},
	})
	if _, _, errs := runCmd(t, "dc", "eval", "--seed-policy", "a", "--seed-policy", "b", "--seed", "10", "--runs", "5", "--validation-seed", "14"); !strings.Contains(errs, "seed 14") {
		t.Errorf("overlapping validation seeds: stderr %q does not name the shared seed", errs)
	}
	dir := t.TempDir()
	tiny := []string{"--episode", "3", "--interval", "20ms", "--envs", "1", "--steps", "24"}
	var pols []string
	for _, s := range []string{"1", "2"} {
		p := filepath.Join(dir, "p"+s+".policy")
		if code, out, errs := runCmd(t, append([]string{"dc", "train", "--seed", s, "--out", p}, tiny...)...); code != 0 {
			t.Fatalf("train seed %s exit %d: %s%s", s, code, out, errs)
		}
		pols = append(pols, p)
	}
	code, out, errs := runCmd(t, "dc", "eval", "--seed-policy", pols[0], "--seed-policy", pols[1], "--validation-runs", "2",
		"--runs", "2", "--static-best", "0.1,3", "--conditions", "train", "--json", "--out", filepath.Join(dir, "eval"))
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Results []struct{ Scheme string } `json:"results"`
		Seeds   struct {
			Schemes   []string
			Selection struct {
				Index  int
				Scores []float64
			}
			Results []struct {
				Condition string
				Metrics   map[string]struct {
					Mean      float64
					PerPolicy []float64 `json:"per_policy"`
				}
			}
		} `json:"seeds"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	sd := rep.Seeds
	if len(rep.Results) != 4 || len(sd.Schemes) != 2 || sd.Schemes[0] != "PPO seed 1" || sd.Schemes[1] != "PPO seed 2" {
		t.Fatalf("rows %+v, seed schemes %v; want default, static and two PPO seeds", rep.Results, sd.Schemes)
	}
	if len(sd.Selection.Scores) != 2 || sd.Selection.Index != 0 && sd.Selection.Index != 1 {
		t.Errorf("selection %+v", sd.Selection)
	}
	if len(sd.Results) != 1 || len(sd.Results[0].Metrics["reward"].PerPolicy) != 2 {
		t.Errorf("summary %+v, want one condition with two per-policy rewards", sd.Results)
	}
	if !strings.Contains(errs, "median seed on 2 validation episodes") {
		t.Errorf("stderr does not report the choice: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "eval", "report.html")); err != nil {
		t.Errorf("--out: %v", err)
	}
}

// TestDCEvalAlpha scores the baselines with three reward weights on the
// same episodes: the reward is linear in alpha per episode (r(1/2) =
// 2 r(3/4) - r(1)), at alpha 1 it is the utilisation term alone, and the
// weight is recorded; a weight outside (0, 1] is a usage error.
func TestDCEvalAlpha(t *testing.T) {
	expectUsageErrors(t, [][]string{
		{"dc", "eval", "--alpha", "0"},
		{"dc", "eval", "--alpha", "1.5"},
		{"dc", "eval", "--alpha", "-0.5", "--policy", "none"},
	})
	type result struct {
		Scheme  string
		Rewards []float64
		Metrics map[string]struct{ Mean float64 }
	}
	rewards := map[string]map[string][]float64{}
	for _, a := range []string{"1", "0.75", "0.5"} {
		code, out, errs := runCmd(t, "dc", "eval", "--policy", "none", "--alpha", a, "--static-best", "0.1,3", "--conditions", "train", "--runs", "1", "--json")
		if code != 0 {
			t.Fatalf("alpha %s: exit %d: %s", a, code, errs)
		}
		var rep struct {
			Alpha   float64
			Results []result
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if want := map[string]float64{"1": 1, "0.75": 0.75, "0.5": 0.5}[a]; rep.Alpha != want || len(rep.Results) != 2 {
			t.Fatalf("alpha %s: recorded %g, %d rows", a, rep.Alpha, len(rep.Results))
		}
		rewards[a] = map[string][]float64{}
		for _, r := range rep.Results {
			rewards[a][r.Scheme] = r.Rewards
			if u := r.Metrics["util"].Mean; a == "1" && math.Abs(r.Rewards[0]-u) > 1e-12 {
				t.Errorf("%s at alpha 1: reward %v, utilisation %v", r.Scheme, r.Rewards[0], u)
			}
		}
	}
	for _, s := range []string{"default BBR", "static best"} {
		r1, r3, r5 := rewards["1"][s][0], rewards["0.75"][s][0], rewards["0.5"][s][0]
		if math.Abs(r5-(2*r3-r1)) > 1e-12 || r1 == r5 {
			t.Errorf("%s: rewards %v (alpha 1), %v (3/4), %v (1/2) are not linear in alpha", s, r1, r3, r5)
		}
	}
}
