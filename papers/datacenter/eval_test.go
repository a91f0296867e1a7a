package datacenter

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/scenarios"
)

// nanEqual is == with NaN equal to itself: a metric undefined in both runs
// (the agents' Jain index with one agent) is the same in both.
func nanEqual(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }

func TestEvaluateIsPairedAndDeterministic(t *testing.T) {
	cfg := smokeConfig(t)
	conds, err := LookupConditions([]string{"train", "load"})
	if err != nil {
		t.Fatal(err)
	}
	p := Params{MinRTTWindow: 0.3, BwWindowRounds: 3}
	schemes := []Scheme{StaticScheme("a", p), StaticScheme("b", p), StaticScheme("default", DefaultParams)}
	ec := EvalConfig{Env: cfg, Conditions: conds, Schemes: schemes, Runs: 3, Seed: 50, Jobs: 1}
	rows1, err := Evaluate(context.Background(), ec)
	if err != nil {
		t.Fatal(err)
	}
	ec.Jobs = 3
	rows3, err := Evaluate(context.Background(), ec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows1) != len(conds)*len(schemes) {
		t.Fatalf("%d rows, want %d", len(rows1), len(conds)*len(schemes))
	}
	same := func(a, b Estimate) bool { return nanEqual(a.Mean, b.Mean) && nanEqual(a.CI, b.CI) && a.N == b.N }
	for i := range rows1 {
		if len(rows1[i].Metrics) != len(MetricNames) || !maps.EqualFunc(rows1[i].Metrics, rows3[i].Metrics, same) {
			t.Fatalf("row %d differs between 1 and 3 parallel jobs", i)
		}
	}
	for _, r := range rows1 {
		if r.Scheme == "b" {
			// Same setting, same seeds: identical episodes.
			if g := r.RewardGain; g.Mean != 0 || g.CI != 0 {
				t.Fatalf("%s: identical schemes differ by %v", r.Condition, g)
			}
		}
		if e := r.Get("reward"); e.N != 3 || !(e.Mean > 0 && e.Mean <= 1) {
			t.Fatalf("%s/%s reward %+v, want 3 runs in (0, 1]", r.Condition, r.Scheme, e)
		}
	}
	for i := 0; i < len(rows1); i += len(schemes) {
		a, b, def := rows1[i], rows1[i+1], rows1[i+2]
		if g := PairedGain(b, a); g.Mean != 0 || g.N != 3 {
			t.Fatalf("PairedGain of identical schemes %+v", g)
		}
		if g := PairedGain(def, a); math.Abs(g.Mean-def.RewardGain.Mean) > 1e-15 || math.Abs(g.CI-def.RewardGain.CI) > 1e-15 {
			t.Fatalf("PairedGain(default, a) %+v, RewardGain %+v", g, def.RewardGain)
		}
	}
	// Each run equals a standalone episode with the same seed.
	var viaEval float64
	for _, r := range rows1 {
		if r.Condition == "load" && r.Scheme == "default" {
			viaEval = r.Get("util").Mean
		}
	}
	var mean float64
	for s := uint64(50); s < 53; s++ {
		st, err := RunEpisode(mustCondition(t, cfg, conds[1]), s, func(int, []float32) Params { return DefaultParams })
		if err != nil {
			t.Fatal(err)
		}
		mean += st.Metrics().Util / 3
	}
	if math.Abs(mean-viaEval) > 1e-12 {
		t.Fatalf("Evaluate's mean utilisation %v, standalone episodes %v", viaEval, mean)
	}
}

func mustCondition(t *testing.T, cfg Config, c Condition) Config {
	t.Helper()
	cc, err := cfg.WithCondition(c)
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

func TestConditionsChangeTheWorkload(t *testing.T) {
	cfg := Config{Base: testBase(t), Random: TrainingRandomization()}
	for _, c := range Conditions {
		cc := mustCondition(t, cfg, c)
		m, err := NewSim(cc)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		s, ev, err := m.episode(1)
		if err != nil {
			t.Fatal(err)
		}
		switch c.Name {
		case "load":
			if l := s.Background[0].Load; l < 0.6 || l > 0.7 {
				t.Fatalf("load condition draws load %g", l)
			}
		case "rtt":
			if d := s.Flows[0].ExtraDelay.V; d < 1500*time.Microsecond || d > 3*time.Millisecond {
				t.Fatalf("rtt condition's rack delay %v", d)
			}
			for _, e := range ev {
				if e.delay < 1500*time.Microsecond {
					t.Fatalf("rtt condition's path event to %v", e.delay)
				}
			}
		case "sizes":
			if s.Background[0].Sizes != "datamining" {
				t.Fatalf("sizes condition uses %q", s.Background[0].Sizes)
			}
		case "flows":
			if m.NumFlows() != 16 {
				t.Fatalf("flows condition has %d controlled flows, want 16", m.NumFlows())
			}
		}
	}
	// The base configuration is not modified by conditions.
	if cfg.Base.Flows[0].Count != 4 || cfg.Random.Sizes != "" {
		t.Fatal("WithCondition changed the base configuration")
	}
}

func TestGridSearchPicksTheBest(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.Steps = 2
	rows, best, err := GridSearch(context.Background(), cfg, 1, 7, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(GridMinRTT)*len(GridBwRounds) {
		t.Fatalf("%d grid rows", len(rows))
	}
	top := rows[0]
	for _, r := range rows {
		if r.Reward.Mean > top.Reward.Mean {
			top = r
		}
	}
	if best != top.Params {
		t.Fatalf("best %v, highest-reward row %v", best, top.Params)
	}
	st, _ := RunEpisode(cfg, 7, func(int, []float32) Params { return best })
	if math.Abs(st.Metrics().Reward-top.Reward.Mean) > 1e-12 {
		t.Fatalf("grid reward %v, replayed episode %v", top.Reward.Mean, st.Metrics().Reward)
	}
	if _, _, err := GridSearch(context.Background(), cfg, 0, 7, 1, nil); err == nil {
		t.Fatal("a grid search with no runs succeeded")
	}
}

// TestGridSearchPerAgent: the per-agent search plays the shared search's
// episodes, so its combinations that give both agents one setting
// reproduce the shared rows exactly and its best is at least theirs; the
// best combination replays to its reward, agent by agent.
func TestGridSearchPerAgent(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.Steps = 2
	cfg.Agents = 2
	ctx := context.Background()
	shared, sharedBest, err := GridSearch(ctx, cfg, 1, 7, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, best, err := GridSearchPerAgent(ctx, cfg, 1, 7, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := len(shared)
	if len(rows) != g*g || len(best) != 2 {
		t.Fatalf("%d rows, best %v; want %d rows and two settings", len(rows), best, g*g)
	}
	top, topShared := rows[0], shared[0]
	asymmetric := false
	for _, r := range rows {
		if r.Reward.Mean > top.Reward.Mean {
			top = r
		}
		if r.Params[0] == r.Params[1] {
			i := GridIndex(r.Params[0])
			if r.Reward.Mean != shared[i].Reward.Mean {
				t.Fatalf("both agents at %v: %v, the shared search %v", r.Params[0], r.Reward.Mean, shared[i].Reward.Mean)
			}
		} else if r.Reward.Mean != shared[GridIndex(r.Params[0])].Reward.Mean {
			asymmetric = true
		}
	}
	for _, r := range shared {
		if r.Params == sharedBest {
			topShared = r
		}
	}
	if !slices.Equal(best, top.Params) || top.Reward.Mean < topShared.Reward.Mean {
		t.Fatalf("best %v (%v), highest-reward row %v; shared best %v", best, top.Reward.Mean, top.Params, topShared.Reward.Mean)
	}
	if !asymmetric {
		t.Fatal("agent 1's setting changed no reward: the combinations do not reach the second agent")
	}
	st, err := RunEpisode(cfg, 7, StaticAgentsScheme("x", best).New())
	if err != nil {
		t.Fatal(err)
	}
	if st.Metrics().Reward != top.Reward.Mean {
		t.Fatalf("search reward %v, replayed %v", top.Reward.Mean, st.Metrics().Reward)
	}
	cfg.Agents = 1
	if _, _, err := GridSearchPerAgent(ctx, cfg, 1, 7, 1, nil); err == nil || !strings.Contains(err.Error(), "two or more agents") {
		t.Fatalf("one agent: %v", err)
	}
}

// TestAgentJain: the agents' goodputs add up to the controlled flows'
// goodput, and Jain's index is 1 for equal shares, 1/K when one agent's
// flows deliver everything, undefined with one agent.
func TestAgentJain(t *testing.T) {
	for _, c := range []struct {
		g    []units.Bytes
		want float64
	}{{[]units.Bytes{5, 5}, 1}, {[]units.Bytes{7, 0}, 0.5}, {[]units.Bytes{1, 3}, 16.0 / 20}, {[]units.Bytes{4, 0, 0}, 1.0 / 3}, {[]units.Bytes{9}, math.NaN()}, {[]units.Bytes{0, 0}, math.NaN()}} {
		got := (&EpisodeStats{AgentGoodput: c.g}).Metrics().AgentJain
		if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-c.want) > 1e-12) {
			t.Errorf("goodputs %v: Jain %v, want %v", c.g, got, c.want)
		}
	}
	cfg := smokeConfig(t)
	cfg.Agents = 2
	st, err := RunEpisode(cfg, 3, StaticAgentsScheme("x", []Params{{MinRTTWindow: 0.1, BwWindowRounds: 1}, DefaultParams}).New())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.AgentGoodput) != 2 || st.AgentGoodput[0]+st.AgentGoodput[1] != st.CtlGoodput || st.AgentGoodput[0] == 0 || st.AgentGoodput[1] == 0 {
		t.Fatalf("agents' goodputs %v, controlled flows' %v", st.AgentGoodput, st.CtlGoodput)
	}
	if j := st.Metrics().AgentJain; !(j > 0.5 && j <= 1) {
		t.Fatalf("Jain's index %v of %v", j, st.AgentGoodput)
	}
}

// TestFairnessTerm: Jain's index on hand-computed cases, and the reward's
// fairness term recomputed from the flows: the same episode with λ = 0.5
// and without it differs, step by step, by exactly 0.5·(1 − J) in every
// agent's reward, J from the agents' goodputs per active flow.
func TestFairnessTerm(t *testing.T) {
	for _, c := range []struct {
		good   []float64
		active []int
		want   float64
	}{
		{[]float64{4, 4}, []int{1, 1}, 1},
		{[]float64{10, 10}, []int{1, 2}, 225.0 / 250},
		{[]float64{10, 0}, []int{1, 1}, 0.5},
		{[]float64{10, 0, 7}, []int{1, 0, 1}, 289.0 / 298},
		{[]float64{10}, []int{1}, 1},
		{[]float64{0, 0}, []int{1, 1}, 1},
	} {
		if got := FairnessIndex(c.good, c.active); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("goodputs %v over %v flows: %v, want %v", c.good, c.active, got, c.want)
		}
	}
	cfg := smokeConfig(t)
	cfg.Agents = 2
	cfg.Steps = 20
	fair := cfg
	fair.Reward.Fairness = 0.5
	a, err := NewSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSim(fair)
	if err != nil {
		t.Fatal(err)
	}
	a.Reset(4)
	b.Reset(4)
	pair := []Params{{MinRTTWindow: 0.1, BwWindowRounds: 1}, DefaultParams}
	penalised := 0
	for done := false; !done; {
		for i, p := range pair {
			if a.Apply(i, p) != nil || b.Apply(i, p) != nil {
				t.Fatal("apply")
			}
		}
		done = a.Advance()
		b.Advance()
		good, active := make([]float64, 2), make([]int, 2)
		for j, s := range b.last {
			if s.active {
				good[b.flows[j].agent] += float64(s.goodput)
				active[b.flows[j].agent]++
			}
		}
		pen := 0.5 * (1 - FairnessIndex(good, active))
		for i := range pair {
			if d := a.PartialReward(i) - b.PartialReward(i); math.Abs(d-pen) > 1e-12 {
				t.Fatalf("step %d agent %d: rewards differ by %v, want the penalty %v", a.Step(), i, d, pen)
			}
		}
		if math.Abs(a.TeamReward()-b.TeamReward()-pen) > 1e-12 {
			t.Fatalf("step %d: team rewards differ by %v, want %v", a.Step(), a.TeamReward()-b.TeamReward(), pen)
		}
		if pen > 1e-6 {
			penalised++
		}
	}
	if penalised == 0 {
		t.Fatal("no step of two differently tuned racks was penalised")
	}
	fair.Reward.Fairness = -1
	if _, err := NewSim(fair); err == nil || !strings.Contains(err.Error(), "fairness") {
		t.Fatalf("a negative fairness weight: %v", err)
	}
}

func TestPolicySettingsRoundTrip(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.History = 2
	cfg.Agents = 2
	cfg.Action = Continuous
	cfg.Reward = RewardConfig{Alpha: 0.6, Tau: 500 * time.Microsecond, Fairness: 0.25}
	res, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "a2c", Mode: Independent, Steps: 32, Envs: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	base := smokeConfig(t)
	got, err := ConfigFromPolicy(base, res.Policies[0])
	if err != nil {
		t.Fatal(err)
	}
	if got.History != 2 || got.Agents != 2 || got.Action != Continuous || got.Steps != cfg.Steps || got.Interval != cfg.Interval || got.Reward != cfg.Reward {
		t.Fatalf("settings from the policy: %+v", got)
	}
	if err := CheckPolicies(got, res.Policies); err != nil {
		t.Fatal(err)
	}
	one := got
	one.Agents = 1
	if err := CheckPolicies(one, res.Policies); err == nil || !strings.Contains(err.Error(), "2 policies for 1 agents") {
		t.Fatalf("two policies for one agent: %v", err)
	}
	one.History = 1
	if err := CheckPolicies(one, res.Policies[:1]); err == nil {
		t.Fatal("a policy trained with 2 frames accepted an environment with 1")
	}
	st, err := RunEpisode(got, 9, PolicyScheme("x", res.Policies, Continuous).New())
	if err != nil || st.Steps != cfg.Steps {
		t.Fatalf("episode with the trained policies: %v, %d steps", err, st.Steps)
	}
}

func TestTraceAndReport(t *testing.T) {
	cfg := smokeConfig(t)
	tr, err := Trace(cfg, 4, func(int, []float32) Params { return Params{MinRTTWindow: 0.3, BwWindowRounds: 3} })
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != cfg.Steps {
		t.Fatalf("trace has %d points, want %d", len(tr), cfg.Steps)
	}
	for i, p := range tr {
		if !(p.BaseRTTMs > 0) || p.MinRTTWindow != 0.3 || p.BwWindowRounds != 3 || p.BottleneckMbps <= 0 {
			t.Fatalf("trace point %d: %+v", i, p)
		}
		if i > 0 && p.T <= tr[i-1].T {
			t.Fatalf("trace times not increasing at %d", i)
		}
	}
	rows, err := Evaluate(context.Background(), EvalConfig{Env: cfg, Conditions: Conditions[:1], Runs: 2, Seed: 1,
		Schemes: []Scheme{StaticScheme("default BBR", DefaultParams), StaticScheme("short", Params{0.1, 1})}})
	if err != nil {
		t.Fatal(err)
	}
	rep := &EvalReport{Runs: 2, Seed: 1, Agents: 1, StaticBest: Params{0.1, 1}, Rows: rows,
		Conditions: []ConditionInfo{{Conditions[0].Name, Conditions[0].Doc}},
		Traces:     map[string][]TracePoint{"default BBR": tr, "short": tr}}
	rep.Rows[0].Metrics["small_fct_p95_ms"] = Estimate{Mean: math.NaN(), CI: math.NaN()}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dc_eval.json", "report.html", "bars_reward.png", "trace_rtt.svg", "trace_params.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "dc_eval.json"))
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("dc_eval.json: %v", err)
	}
	if !strings.Contains(string(b), `"mean": null`) {
		t.Fatal("an undefined metric should be written as null")
	}
}

// TestShippedPolicies checks that the policies in papers/datacenter/policy load, fit
// the environment they record, and act within the action space.
func TestShippedPolicies(t *testing.T) {
	files, _ := filepath.Glob("policy/*.policy")
	if len(files) == 0 {
		t.Fatal("no shipped policy in papers/datacenter/policy")
	}
	for _, f := range files {
		p, err := policy.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Each policy fits the workload it was trained on (an old policy
		// records none: the data centre's).
		w, err := LookupWorkload(cmp.Or(p.Meta.Extra["workload"], "datacenter"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base, err := scenarios.Load(w.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := ConfigFromPolicy(Config{Base: base, Random: w.Random, Workload: w.Name}, p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := CheckPolicies(cfg, []*policy.Policy{p}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		obs := make([]float32, p.Obs.Dim())
		a := p.ActInto(obs)
		if cfg.Action == Discrete && (a[0] < 0 || int(a[0]) >= len(GridMinRTT)*len(GridBwRounds)) {
			t.Fatalf("%s: action %v outside the grid", f, a)
		}
		if p.Meta.TrainingWallS <= 0 || p.Meta.Steps <= 0 {
			t.Fatalf("%s: metadata lacks training steps or wall time: %+v", f, p.Meta)
		}
	}
}
