package deepcc

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

var fixed12 = Link{Name: "fixed12", Rate: 12 * units.Mbps, Delay: 30 * time.Millisecond, Queue: 60, Capacity: 12 * units.Mbps}

// TestRunSharedFairAndConserving runs two DeepCC flows with the same goal
// and a late CUBIC flow: every flow gets a share, the series integrate to
// each flow's goodput, and two identical agents share fairly. Fairly over
// three minutes: the two hand-made agents' shares swing slowly (in 10-s
// windows one may get three times the other's rate for a while, then the
// order reverses), so a reading after 20 s, 10.9% apart, fell wherever
// the swing happened to be and moved to 16.5% with a transport change
// that touches only lost retransmissions (docs/deepcc.md, "With Linux's
// rule for lost retransmissions"); over 180 s they are 3.8% apart.
func TestRunSharedFairAndConserving(t *testing.T) {
	p := goalPolicy(t)
	g := Goal{0.6, 0.35, 0.05}
	const dur = 180 * time.Second
	r, err := RunShared(p, SharedRun{Link: fixed12, Duration: dur, Seed: 1, Flows: []FlowSpec{
		{Label: "a", Scheme: SchemeDeepCC, Goal: g},
		{Label: "b", Scheme: SchemeDeepCC, Goal: g},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Flows[0].ThroughputMbps, r.Flows[1].ThroughputMbps
	if a <= 0 || b <= 0 || math.Abs(a-b) > 0.15*(a+b)/2 || r.Jain < 0.98 {
		t.Errorf("two identical agents: %.2f and %.2f Mbit/s, Jain %.3f; want within 15%%", a, b, r.Jain)
	}
	if a+b > 12*1448.0/1500 || r.Utilization < 0.8 {
		t.Errorf("aggregate %.2f Mbit/s, utilisation %.3f: want at most the link's payload rate and above 80%%", a+b, r.Utilization)
	}
	for _, f := range r.Flows {
		// The series' integral is the flow's delivered payload.
		sum := 0.0
		for _, x := range f.Mbps {
			sum += x * 0.5
		}
		if got := sum / dur.Seconds(); math.Abs(got-f.ThroughputMbps) > 0.02*f.ThroughputMbps+0.05 {
			t.Errorf("%s: series mean %.3f Mbit/s, goodput %.3f", f.Label, got, f.ThroughputMbps)
		}
		if f.FinalGoal == nil || *f.FinalGoal != g {
			t.Errorf("%s: final goal %v, want the fixed %v", f.Label, f.FinalGoal, g)
		}
	}

	late, err := RunShared(p, SharedRun{Link: fixed12, Duration: 10 * time.Second, Seed: 1, Flows: []FlowSpec{
		{Label: "dcc", Scheme: SchemeDeepCC, Goal: g},
		{Label: "cubic", Scheme: "cubic", Start: 5 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := late.Flows[1]
	for i, ts := range late.T {
		if ts <= 5 && c.Mbps[i] != 0 {
			t.Fatalf("the CUBIC flow delivered %.2f Mbit/s at %.1f s, before its start at 5 s", c.Mbps[i], ts)
		}
	}
	if c.ThroughputMbps <= 0.5 {
		t.Errorf("late CUBIC flow got %.2f Mbit/s", c.ThroughputMbps)
	}

	for name, bad := range map[string]SharedRun{
		"no flows":        {Link: fixed12, Duration: time.Second},
		"late start":      {Link: fixed12, Duration: time.Second, Flows: []FlowSpec{{Label: "x", Scheme: "cubic", Start: 2 * time.Second}}},
		"classic target":  {Link: fixed12, Duration: time.Second, Flows: []FlowSpec{{Label: "x", Scheme: "cubic", Mode: ModeLowDelay}}},
		"unknown cc":      {Link: fixed12, Duration: time.Second, Flows: []FlowSpec{{Label: "x", Scheme: "nope"}}},
		"target and mode": {Link: fixed12, Duration: time.Second, Flows: []FlowSpec{{Label: "x", Scheme: SchemeDeepCC, Goal: g, Mode: ModeLowDelay, Target: &CoexistTarget}}},
	} {
		if _, err := RunShared(p, bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCoexistSmallDeterministic(t *testing.T) {
	p := goalPolicy(t)
	cases := CoexistCases(Goal{0.6, 0.35, 0.05})
	cases = []CoexistCase{cases[0], cases[3], cases[6]} // cubic/cubic, deepcc/cubic, deepcc/deepcc
	cfg := StudyConfig{Policy: p, Duration: 6 * time.Second, Runs: 2, Jobs: 1}
	r1, err := Coexist(context.Background(), cfg, fixed12, 1, cases)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Jobs = 3
	r2, err := Coexist(context.Background(), cfg, fixed12, 1, cases)
	if err != nil {
		t.Fatal(err)
	}
	r1.WallSeconds, r2.WallSeconds = 0, 0
	j1, err := json.Marshal(r1)
	if err != nil {
		t.Fatal(err)
	}
	j2, _ := json.Marshal(r2)
	if string(j1) != string(j2) {
		t.Errorf("1 and 3 jobs give different reports")
	}
	if len(r1.Cases) != 3 || len(r1.Cases[2].Example.Flows) != 2 || r1.Cases[2].Example.Flows[1].Scheme != SchemeDeepCC {
		t.Fatalf("cases %+v", r1.Cases)
	}
	for _, c := range r1.Cases {
		if !(c.TestedMbps.Mean > 0 && c.CompetitorMbps.Mean > 0 && c.Utilization.Mean > 0.8) {
			t.Errorf("%s: tested %.2f, competitor %.2f, utilisation %.3f", c.Name, c.TestedMbps.Mean, c.CompetitorMbps.Mean, c.Utilization.Mean)
		}
	}
	if _, err := Coexist(context.Background(), cfg, fixed12, 0, cases); err != nil {
		t.Errorf("0 competitors should default to 1: %v", err)
	}
	if _, err := Coexist(context.Background(), cfg, fixed12, 99, cases); err == nil {
		t.Errorf("99 competitors gave no error")
	}
}

// TestLossSweepSmall: CUBIC's throughput collapses under random loss (its
// window halves on every loss), while a DeepCC window held at a multiple
// of the bandwidth estimate barely moves (the paper's Figure 14 claim).
func TestLossSweepSmall(t *testing.T) {
	p := goalPolicy(t)
	cfg := StudyConfig{Policy: p, Duration: 8 * time.Second, Runs: 1}
	hi := Goal{0.9, 0.05, 0.05}
	r, err := LossSweep(context.Background(), cfg, []Scheme{{Name: "deepcc", Goal: &hi}, {Name: "cubic", CC: "cubic"}}, []float64{0, 0.04})
	if err != nil {
		t.Fatal(err)
	}
	d, c := r.Curves[0].Points, r.Curves[1].Points
	if !(d[1].ThroughputMbps.Mean > 0.85*d[0].ThroughputMbps.Mean) {
		t.Errorf("deepcc: %.2f Mbit/s at 0%%, %.2f at 4%% loss; want within 15%%", d[0].ThroughputMbps.Mean, d[1].ThroughputMbps.Mean)
	}
	if !(c[1].ThroughputMbps.Mean < 0.5*c[0].ThroughputMbps.Mean) {
		t.Errorf("cubic: %.2f Mbit/s at 0%%, %.2f at 4%% loss; want below half", c[0].ThroughputMbps.Mean, c[1].ThroughputMbps.Mean)
	}
	if _, err := LossSweep(context.Background(), cfg, nil, []float64{0.7}); err == nil {
		t.Errorf("70%% loss gave no error")
	}
}

func TestConvergenceOf(t *testing.T) {
	// Two flows on a 10 Mbit/s link, the second joining at 2 s; samples
	// every 0.5 s. Flow 1 reaches 8 Mbit/s at 1 s; the pair is fair from
	// 3 s (1 s after the join).
	r := SharedResult{T: []float64{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4}, Flows: []FlowOutcome{
		{Mbps: []float64{4, 8, 10, 10, 9, 5, 5, 5}},
		{Mbps: []float64{0, 0, 0, 0, 1, 5, 5, 5}, FlowSpec: FlowSpec{Start: 2 * time.Second}},
	}}
	m := convergenceOf(r, 10, 4)
	if m.ramp != 1 || len(m.conv) != 1 || m.conv[0] != 1 || m.never != 0 {
		t.Errorf("ramp %v, converge %v, never %d; want 1, [1], 0", m.ramp, m.conv, m.never)
	}
	// Second halves: (1,2] has flow 1 alone (Jain 1); (3,4] fair (1).
	if m.jain != 1 {
		t.Errorf("steady Jain %v, want 1", m.jain)
	}
	// First period's second half: 10, 10: no variation.
	if m.cv != 0 {
		t.Errorf("single-flow CV %v, want 0", m.cv)
	}
	r.Flows[1].Mbps = []float64{0, 0, 0, 0, 1, 1, 1, 1}
	if m := convergenceOf(r, 10, 4); m.never != 1 || len(m.conv) != 0 {
		t.Errorf("an unfair pair converged: %+v", m)
	}
}

func TestIntervalOptions(t *testing.T) {
	for _, c := range []struct {
		d, tu float64
		want  int
	}{{1, 4, 4}, {0, 0, 4}, {1, 0.5, 1}, {0.5, 4, 8}, {2, 8, 4}, {0.5, 0.5, 1}} {
		if got := (Run{DecisionRTTs: c.d, TuneRTTs: c.tu}).tuneSteps(); got != c.want {
			t.Errorf("decision %g, tuning %g RTTs: %d steps, want %d", c.d, c.tu, got, c.want)
		}
	}
	// Half an RTT per decision takes twice the steps of one RTT.
	steps := func(k float64) int {
		e, err := NewEnv(EnvConfig{DecisionRTTs: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(fixed12, Goal{0.6, 0.35, 0.05}, 1, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		for !e.Done() {
			e.Step([]float32{0})
		}
		return e.Steps()
	}
	one, half := steps(1), steps(0.5)
	if r := float64(half) / float64(one); r < 1.8 || r > 2.2 {
		t.Errorf("%d steps at 1 RTT, %d at 0.5: ratio %.2f, want about 2", one, half, r)
	}
	if _, err := NewEnv(EnvConfig{DecisionRTTs: 100}); err == nil {
		t.Errorf("a 100-RTT decision interval gave no error")
	}
	p := goalPolicy(t)
	r, err := Intervals(context.Background(), StudyConfig{Policy: p, Duration: 4 * time.Second, Runs: 1, Traces: []string{testTrace}},
		[]float64{0.5, 1}, []float64{40}, []float64{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Decision) != 2 || len(r.Tuning) != 2 || r.Tuning[0].TCR.Total != 9 {
		t.Fatalf("decision %+v, tuning %+v", r.Decision, r.Tuning)
	}
	for _, d := range r.Decision {
		if !(d.Normalized.Mean > 0.5 && d.Normalized.Mean <= 1) {
			t.Errorf("decision %g: normalised throughput %.3f", d.DecisionRTTs, d.Normalized.Mean)
		}
	}
}

// TestModes: the low-delay mode moves the goal towards delay and queues
// less than the high-throughput mode, which moves it towards throughput.
func TestModes(t *testing.T) {
	p := goalPolicy(t)
	run := func(m Mode) RunResult {
		r, err := RunDeepCC(p, Run{Link: fixed12, Duration: 15 * time.Second, Seed: 1, Goal: Goal{0.5, 0.45, 0.05}, Mode: m})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ld, ht := run(ModeLowDelay), run(ModeHighThroughput)
	if !(ld.FinalGoal[1] > ld.FinalGoal[0] && ht.FinalGoal[0] > 0.5) {
		t.Errorf("final goals: low-delay %v, high-throughput %v", ld.FinalGoal, ht.FinalGoal)
	}
	if !(ld.DelayP95Ms < ht.DelayP95Ms && ld.ThroughputMbps < ht.ThroughputMbps) {
		t.Errorf("low-delay %.2f Mbit/s %.1f ms; high-throughput %.2f Mbit/s %.1f ms", ld.ThroughputMbps, ld.DelayP95Ms, ht.ThroughputMbps, ht.DelayP95Ms)
	}
	if _, err := RunDeepCC(p, Run{Link: fixed12, Duration: time.Second, Goal: Goal{0.5, 0.45, 0.05}, Mode: "fast"}); err == nil {
		t.Errorf("an unknown mode gave no error")
	}
	if _, err := RunDeepCC(p, Run{Link: fixed12, Duration: time.Second, Goal: Goal{0.5, 0.45, 0.05}, Mode: ModeLowDelay, Target: &tuner.Target{MaxDelayMs: 5}}); err == nil {
		t.Errorf("a mode and a target gave no error")
	}
	if m, err := ParseMode("low-delay"); err != nil || m != ModeLowDelay {
		t.Errorf("ParseMode: %v %v", m, err)
	}
	if _, err := ParseMode("x"); err == nil {
		t.Errorf("ParseMode(x): no error")
	}
	r, err := Modes(context.Background(), StudyConfig{Policy: p, Duration: 4 * time.Second, Runs: 1, Traces: []string{testTrace}},
		[]Scheme{{Name: "ld", Mode: ModeLowDelay}, {Name: "cubic", CC: "cubic"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != 2 || r.Links[0].Schemes[0].FinalGoal == nil || r.Links[0].Schemes[1].FinalGoal != nil {
		t.Errorf("modes report %+v", r)
	}
}
