package datacenter

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/scenarios"
)

// TestPaperWorkload: the paper's workload preset draws episodes within its
// ranges (rates 1-10 Mbit/s, propagation RTTs 10-50 ms, gaps 1-50 s) on
// the dc-paper scenario, and runs.
func TestPaperWorkload(t *testing.T) {
	w, err := LookupWorkload("paper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LookupWorkload("wan"); err == nil {
		t.Errorf("an unknown workload gave no error")
	}
	base, err := scenarios.Load(w.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Base: base, Interval: w.Interval, Steps: w.Steps, Random: w.Random, Workload: w.Name}
	m, err := NewSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	oneWay := base.Bottleneck.Delay.V
	events := 0
	for seed := uint64(1); seed <= 20; seed++ {
		s, ev, err := m.episode(seed)
		if err != nil {
			t.Fatal(err)
		}
		prev := time.Duration(0)
		for _, c := range s.Bottleneck.Schedule {
			if r := c.Rate.V; r < units.Mbps || r > 10*units.Mbps {
				t.Fatalf("capacity event to %v outside [1, 10] Mbit/s", r)
			}
			if gap := c.At.V - prev; gap < time.Second || gap > 50*time.Second {
				// Events of both kinds share one sequence; a gap
				// between two capacity events spans at least one gap.
				if gap < time.Second {
					t.Fatalf("capacity events %v apart, below the 1 s minimum gap", gap)
				}
			}
			prev = c.At.V
			events++
		}
		for _, e := range ev {
			rtt := 2 * (oneWay + e.delay)
			if rtt < 10*time.Millisecond || rtt > 50*time.Millisecond {
				t.Fatalf("path event to a %v propagation RTT, outside [10, 50] ms", rtt)
			}
			events++
		}
		for _, f := range s.Flows {
			if rtt := 2 * (oneWay + f.ExtraDelay.V); rtt < 10*time.Millisecond || rtt > 50*time.Millisecond {
				t.Fatalf("flow %s starts with a %v propagation RTT", f.Name, rtt)
			}
		}
	}
	// 120-s episodes with a gap of at most 50 s have at least two events.
	if events < 40 {
		t.Errorf("20 episodes had %d events, want at least 2 each", events)
	}
	short := cfg
	short.Steps = 3
	st, err := RunEpisode(short, 1, StaticScheme("default", DefaultParams).New())
	if err != nil {
		t.Fatal(err)
	}
	if r := st.RewardSum / float64(st.Steps); st.Steps != 3 || math.IsNaN(r) || r <= 0 || r > 1 {
		t.Errorf("%d steps, mean reward %g; want 3 and in (0, 1]", st.Steps, r)
	}
}

// TestWorkloadRecordedInPolicy: a policy trained on one workload is refused
// on another.
func TestWorkloadRecordedInPolicy(t *testing.T) {
	base := Config{Base: testBase(t)}
	p := &policy.Policy{Meta: policy.Meta{Extra: map[string]string{"workload": "paper"}}}
	if _, err := ConfigFromPolicy(base, p); err == nil {
		t.Errorf("a paper-workload policy was accepted on the datacenter workload")
	}
	base.Workload = "paper"
	if _, err := ConfigFromPolicy(base, p); err != nil {
		t.Errorf("same workload: %v", err)
	}
	old := &policy.Policy{Meta: policy.Meta{Extra: map[string]string{"steps": "30"}}}
	if _, err := ConfigFromPolicy(base, old); err == nil {
		t.Errorf("a policy without a workload (datacenter) was accepted on the paper workload")
	}
}

// TestEvaluateKeepsCDFSamples: the first condition's rows carry the
// per-(flow, step) samples of Figure 3(b) and 3(d), consistent with the
// episode's other counters; later conditions' rows do not; the figures
// include both CDFs.
func TestEvaluateKeepsCDFSamples(t *testing.T) {
	cfg := shortConfig(t)
	conds, err := LookupConditions([]string{"train", "load"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Evaluate(t.Context(), EvalConfig{Env: cfg, Conditions: conds, Schemes: []Scheme{StaticScheme("default BBR", DefaultParams)}, Runs: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	st, err := RunEpisode(cfg, 5, StaticScheme("x", DefaultParams).New())
	if err != nil {
		t.Fatal(err)
	}
	r0 := rows[0]
	if len(r0.RTpropSqErrMs2) < st.RTpropSamples || len(r0.FlowGoodputMbps) == 0 {
		t.Fatalf("train row has %d squared errors (run 1 alone has %d) and %d goodputs", len(r0.RTpropSqErrMs2), st.RTpropSamples, len(r0.FlowGoodputMbps))
	}
	for i, e := range st.RTpropSqErr {
		if e < 0 || r0.RTpropSqErrMs2[i] != e {
			t.Fatalf("squared error %d: %g in the row, %g in the episode", i, r0.RTpropSqErrMs2[i], e)
		}
	}
	// The per-flow goodputs integrate to the controlled flows' goodput.
	sum := 0.0
	for _, g := range st.FlowGoodput {
		sum += g * cfg.Interval.Seconds() * 1e6 / 8
	}
	if want := float64(st.CtlGoodput); math.Abs(sum-want) > 1e-6*want+1 {
		t.Errorf("per-flow goodputs sum to %.0f bytes, the episode delivered %.0f", sum, want)
	}
	if rows[1].RTpropSqErrMs2 != nil || rows[1].FlowGoodputMbps != nil {
		t.Errorf("the second condition kept CDF samples")
	}
	rep := &EvalReport{Rows: rows}
	found := 0
	for _, f := range rep.Figures() {
		if f.Name == "cdf_rtprop_sq_err" || f.Name == "cdf_goodput" {
			found++
		}
	}
	if found != 2 {
		t.Errorf("%d CDF figures, want 2", found)
	}
}

// TestSharing: with T1 sharing after every iteration the independent
// agents end with identical actors and critics; without it they differ.
// The pull itself moves each agent towards the mean taken before anyone
// moved.
func TestSharing(t *testing.T) {
	a := [][][]float32{{{0, 4}}, {{2, 0}}}
	pullTowardsMean(a, 0.5)
	if a[0][0][0] != 0.5 || a[1][0][0] != 1.5 || a[0][0][1] != 3 || a[1][0][1] != 1 {
		t.Errorf("half a pull: %v", a)
	}
	run := func(share int) (actorsEqual, criticsEqual bool) {
		cfg := smokeConfig(t)
		cfg.Agents = 2
		res, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: Independent, Steps: 256, Envs: 2, Seed: 3,
			ShareEvery: share})
		if err != nil {
			t.Fatal(err)
		}
		n, err := actorCritics(res.Learners)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Equal(n.actors[0][0], n.actors[1][0]), slices.Equal(n.critics[0][0], n.critics[1][0])
	}
	if ae, ce := run(0); ae || ce {
		t.Errorf("independent agents without sharing are equal: actors %v, critics %v", ae, ce)
	}
	if ae, ce := run(1); !ae || !ce {
		t.Errorf("sharing every iteration: actors equal %v, critics equal %v; want both", ae, ce)
	}
	cfg := smokeConfig(t)
	if _, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "dqn", Mode: Independent, Steps: 10, Envs: 1, ShareEvery: 1}); err == nil {
		t.Errorf("sharing with DQN gave no error")
	}
}

// TestOnlineEvaluate: the shipped PPO policy keeps learning while it plays
// the evaluation episodes (lr 1e-4): one result per seed, the same for the
// same seeds, finite rewards, a first episode (played before any update)
// close to the frozen policy's, and a row in Evaluate.
func TestOnlineEvaluate(t *testing.T) {
	p, err := policy.Load("policy/ppo.policy")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromPolicy(Config{Base: testBase(t), Random: TrainingRandomization()}, p)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Steps = 4 // short episodes
	seeds := []uint64{5, 6, 7}
	m1, err := OnlineEvaluate(context.Background(), cfg, p, OnlineLR, seeds)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := OnlineEvaluate(context.Background(), cfg, p, OnlineLR, seeds)
	same := func(a, b Metrics) bool { return slices.EqualFunc(a.Values(), b.Values(), nanEqual) }
	if len(m1) != 3 || !slices.EqualFunc(m1, m2, same) {
		t.Fatalf("online runs: %d results, deterministic %v", len(m1), slices.EqualFunc(m1, m2, same))
	}
	for _, m := range m1 {
		if math.IsNaN(m.Reward) || m.Reward <= 0 || m.Reward > 1 {
			t.Errorf("reward %g", m.Reward)
		}
	}
	// The first episode is played before any update: its setting is the
	// frozen policy's distribution, so its utilisation matches a frozen
	// run's order of magnitude on the same seed.
	frozen, err := RunEpisode(cfg, 5, PolicyScheme("ppo", []*policy.Policy{p}, cfg.Action).New())
	if err != nil {
		t.Fatal(err)
	}
	if f := frozen.Metrics(); math.Abs(f.Util-m1[0].Util) > 0.2 {
		t.Errorf("first online episode's utilisation %.3f, frozen %.3f", m1[0].Util, f.Util)
	}
	rows, err := Evaluate(context.Background(), EvalConfig{Env: cfg, Conditions: Conditions[:1], Schemes: []Scheme{StaticScheme("default BBR", DefaultParams)},
		Runs: 2, Seed: 5, Online: []OnlineScheme{{Name: "PPO online", Policy: p}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Scheme != "PPO online" || len(rows[1].Rewards) != 2 {
		t.Errorf("rows %+v", rows)
	}
	if _, err := OnlineEvaluate(context.Background(), cfg, p, 2, seeds); err == nil {
		t.Errorf("a learning rate of 2 gave no error")
	}
	q := p.Clone()
	q.Meta.Seed++
	ens, err := policy.NewEnsemble([]*policy.Policy{p, q}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OnlineEvaluate(context.Background(), cfg, ens, OnlineLR, seeds); err == nil || !strings.Contains(err.Error(), "an ensemble of 2") {
		t.Errorf("online evaluation of an ensemble gave %v, want a refusal", err)
	}
}

// TestWorkloadPolicies: each workload's built-in policy loads from any
// directory and was trained on that workload, so dc eval's default for
// --workload is one it accepts.
func TestWorkloadPolicies(t *testing.T) {
	for _, w := range Workloads {
		p, err := LoadPolicy(w.Policy)
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		if got := p.Meta.Extra["workload"]; got != w.Name {
			t.Errorf("%s: %s was trained on workload %q", w.Name, w.Policy, got)
		}
	}
}

// TestConditionDescribe: an unseen condition names what the training
// workload it departs from had, whichever workload that is.
func TestConditionDescribe(t *testing.T) {
	paper, err := LookupWorkload("paper")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cond string
		r    Randomization
		want string
	}{
		{"train", TrainingRandomization(), "the training workload"},
		{"load", TrainingRandomization(), "background load 60-70 % (training: 10-40 %)"},
		{"load", paper.Random, "background load 60-70 % (training: 5-30 %)"},
		{"rtt", TrainingRandomization(), "rack paths of 1.5-3 ms one way (training: 10 us - 1 ms)"},
		{"rtt", paper.Random, "rack paths of 1.5-3 ms one way (training: 4 ms - 24 ms)"},
		{"sizes", paper.Random, "VL2 data-mining flow sizes for the background (training: DCTCP web search)"},
		{"flows", paper.Random, "twice as many controlled flows per rack"},
	} {
		cl, err := LookupConditions([]string{c.cond})
		if err != nil {
			t.Fatal(err)
		}
		if got := cl[0].Describe(c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.cond, got, c.want)
		}
	}
}

// TestNonFiniteRandomizationRefused: a NaN load passed every ordering
// test (all comparisons with NaN are false), and its arrivals' gaps
// filled memory with events until the process was killed.
func TestNonFiniteRandomizationRefused(t *testing.T) {
	for _, r := range []Randomization{
		{Load: [2]float64{math.NaN(), 0.2}},
		{Load: [2]float64{0.1, math.NaN()}},
		{Load: [2]float64{0.1, math.Inf(1)}},
		{Churn: math.NaN()},
	} {
		if err := r.validate(); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if err := (Randomization{Load: [2]float64{0.1, 0.4}}).validate(); err != nil {
		t.Errorf("an ordered load range refused: %v", err)
	}
}
