package deepcc

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// goalPolicy is a hand-made DeepCC policy that follows its goal: action =
// tanh(4 g_thr - 2), so a larger throughput weight means a larger window
// gain (more throughput and more queueing), the monotone response a
// trained agent has. It lets the tuner be tested in the simulator without
// training.
func goalPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	obs, act := PolicySpaces()
	net := nn.NewMLP([]int{ObservationSize, 1}, nn.Tanh, nn.Tanh)
	net.Params[goalOffset] = 4       // weight of g_thr (W is 1 x ObservationSize)
	net.Params[ObservationSize] = -2 // bias
	p, err := policy.New(obs, act, policy.Rescale, net, nil, policy.Meta{Algo: "hand", Command: "goalPolicy"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var fixed10 = Link{Name: "fixed10", Rate: 10 * units.Mbps, Delay: 20 * time.Millisecond, Queue: 300, Capacity: 10 * units.Mbps}

func TestGoalPolicyFollowsGoal(t *testing.T) {
	p := goalPolicy(t)
	var prevThr, prevDelay float64
	for i, gt := range []float64{0.45, 0.6, 0.8} {
		g, _ := NewGoal(gt, 1-gt-0.05, 0.05)
		r, err := RunDeepCC(p, Run{Link: fixed10, Duration: 8 * time.Second, Seed: 1, Goal: g})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !(r.ThroughputMbps >= prevThr && r.DelayP95Ms > prevDelay) {
			t.Errorf("goal %v: %.2f Mbit/s, %.1f ms; want both above the previous goal's %.2f, %.1f", g, r.ThroughputMbps, r.DelayP95Ms, prevThr, prevDelay)
		}
		prevThr, prevDelay = r.ThroughputMbps, r.DelayP95Ms
	}
}

// TestTunerMeetsReachableTarget runs the online tuner in the simulator: from
// a low-delay goal whose throughput is far too low, it must find goals that
// give >= 8 Mbit/s with a 95th-percentile queueing delay <= 50 ms on a
// 10 Mbit/s link.
func TestTunerMeetsReachableTarget(t *testing.T) {
	p := goalPolicy(t)
	target := tuner.Target{MinThroughputMbps: 8, MaxDelayMs: 50, MaxLoss: 0.01}
	r, err := RunDeepCC(p, Run{Link: fixed10, Duration: 20 * time.Second, Seed: 1, Goal: Goal{0.2, 0.75, 0.05}, Target: &target, Trajectory: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trajectory) < 50 {
		t.Fatalf("%d tuning intervals in 20 s, want one every 4 RTTs (about 120)", len(r.Trajectory))
	}
	met := 0
	half := r.Trajectory[len(r.Trajectory)/2:]
	for _, pt := range half {
		if err := pt.Goal.Validate(); err != nil {
			t.Fatalf("tuned goal at %.1f s: %v", pt.T, err)
		}
		if target.Met(pt.Measured) {
			met++
		}
	}
	if frac := float64(met) / float64(len(half)); frac < 0.8 {
		t.Errorf("target met in %.0f%% of the second half's intervals, want >= 80%% (final goal %v)", 100*frac, r.FinalGoal)
	}
	if !target.Met(r.Metrics()) {
		t.Errorf("whole run %+v misses target %v", r.Outcome, target)
	}
	if start := r.Trajectory[0].Goal[0]; r.FinalGoal[0] <= start {
		t.Errorf("throughput weight went from %.2f to %.2f, want an increase (throughput was short)", start, r.FinalGoal[0])
	}
}

func TestRunsAreDeterministic(t *testing.T) {
	p := goalPolicy(t)
	link, err := TraceLink(NewTraceSet(), testTrace, 10*time.Second, 5*time.Second, 20*time.Millisecond, 100, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	tg := tuner.Target{MinThroughputMbps: 2, MaxDelayMs: 80}
	run := Run{Link: link, Duration: 5 * time.Second, Seed: 3, Goal: Goal{0.6, 0.35, 0.05}, Target: &tg, Trajectory: true}
	a, err := RunDeepCC(p, run)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := RunDeepCC(p, run)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("same run twice differs:\n%s\n%s", ja, jb)
	}
	c1, err := RunClassic(scenario.CC{Name: "cubic"}, run)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := RunClassic(scenario.CC{Name: "cubic"}, run)
	if c1.Outcome != c2.Outcome || c1.ThroughputMbps <= 0 || c1.Loss <= 0 {
		t.Errorf("cubic runs %+v and %+v: want equal, positive throughput, and loss with 1%% random loss", c1, c2)
	}
}

func TestEvaluateSmall(t *testing.T) {
	p := goalPolicy(t)
	cfg := EvalConfig{
		Policy: p, Traces: []string{testTrace},
		Goals:   []NamedGoal{{"hi", Goal{0.9, 0.05, 0.05}}, {"lo", Goal{0.4, 0.55, 0.05}}},
		Classic: []string{"cubic"}, Duration: 4 * time.Second, Runs: 2,
		Targets: func(c float64) []tuner.Target {
			return []tuner.Target{{MinThroughputMbps: 0.3 * c, MaxDelayMs: 300}, {MinThroughputMbps: 10 * c, MaxDelayMs: 10}}
		},
	}
	one := cfg
	one.Jobs = 1
	r1, err := Evaluate(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	two := cfg
	two.Jobs = 3
	r2, err := Evaluate(context.Background(), two)
	if err != nil {
		t.Fatal(err)
	}
	r1.WallSeconds, r2.WallSeconds = 0, 0
	j1, err := json.Marshal(r1)
	if err != nil {
		t.Fatalf("report does not encode as JSON: %v", err)
	}
	j2, _ := json.Marshal(r2)
	if string(j1) != string(j2) {
		t.Errorf("reports with 1 and 3 jobs differ")
	}
	tr := r1.Traces[0]
	if len(tr.Schemes) != 3 || tr.Schemes[0].Scheme != "cubic" || tr.Schemes[1].Scheme != "deepcc-hi" || tr.Schemes[1].Goal == nil {
		t.Fatalf("schemes %+v, want cubic, deepcc-hi, deepcc-lo", tr.Schemes)
	}
	if len(tr.Windows) != 2 || tr.Windows[1].TraceStart <= tr.Windows[0].TraceStart {
		t.Errorf("windows %+v, want two increasing offsets", tr.Windows)
	}
	if tr.HighThroughput == nil || tr.HighThroughput.Goal != "deepcc-hi" {
		t.Errorf("high-throughput comparison %+v, want one for deepcc-hi", tr.HighThroughput)
	}
	if len(r1.TCR) != 4 || r1.TCR[0].Scheme != TunedScheme {
		t.Fatalf("TCR rows %+v, want tuned DeepCC then 3 schemes", r1.TCR)
	}
	for _, s := range r1.TCR {
		// 2 targets x 2 runs; the second target (10x capacity in 10 ms)
		// is infeasible, the first easy for every scheme.
		if s.Total != 4 || s.Met > 2 {
			t.Errorf("%s: %v, want 4 attempts and at most 2 met", s.Scheme, s.Completion)
		}
	}
	for _, s := range tr.Schemes {
		for _, o := range s.Runs {
			if math.IsNaN(o.ThroughputMbps) || o.ThroughputMbps <= 0 {
				t.Errorf("%s: run throughput %g", s.Scheme, o.ThroughputMbps)
			}
		}
	}
	if tr.Trajectory == nil || tr.TrajTarget == nil {
		t.Errorf("no tuner trajectory kept for the report")
	}
	bad := cfg
	bad.Traces = []string{"nope.gz"}
	if _, err := Evaluate(context.Background(), bad); err == nil {
		t.Errorf("a missing trace gave no error")
	}
	bad = cfg
	bad.Policy = nil
	if _, err := Evaluate(context.Background(), bad); err == nil {
		t.Errorf("no policy gave no error")
	}
}
