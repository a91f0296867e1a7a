package deepcc

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// NamedGoal is an evaluation goal with its label.
type NamedGoal struct {
	Name string `json:"name"`
	Goal Goal   `json:"goal"`
}

// DefaultGoals are the five representative goals of the multi-objective
// evaluation, from high-throughput mode (g1) to low-delay mode (g5), as in
// the paper's Figure 5. The loss weight stays at 0.05: loss is penalised by
// LossScale already.
var DefaultGoals = []NamedGoal{
	{"g1", Goal{0.90, 0.05, 0.05}},
	{"g2", Goal{0.60, 0.35, 0.05}},
	{"g3", Goal{0.35, 0.60, 0.05}},
	{"g4", Goal{0.20, 0.75, 0.05}},
	{"g5", Goal{0.05, 0.90, 0.05}},
}

// DefaultClassic are the classic controllers DeepCC is compared with.
var DefaultClassic = []string{"cubic", "bbr", "vegas", "newreno"}

// TunedScheme names DeepCC with the online tuner in TCR tables.
const TunedScheme = "deepcc-tuned"

// EvalConfig configures Evaluate. Zero values take the defaults in brackets.
type EvalConfig struct {
	// Policy is the trained agent; required.
	Policy *policy.Policy
	// Traces are the held-out traces' paths; required. Set loads them
	// [a new set].
	Traces []string
	Set    *TraceSet
	// Goals are the fixed goals of the multi-objective evaluation
	// [DefaultGoals]; Classic the baselines [DefaultClassic].
	Goals   []NamedGoal
	Classic []string
	// Duration is each run's length [30 s]; Runs the number of runs per
	// trace, started at evenly spaced offsets across the trace [4].
	Duration time.Duration
	Runs     int
	// Delay is the one-way propagation delay [20 ms]; Queue the DropTail
	// limit [200 packets].
	Delay time.Duration
	Queue int
	// NoTargets skips the target-completion study.
	NoTargets bool
	// Targets returns a trace's targets given its mean capacity
	// [TargetsFor].
	Targets func(capMbps float64) []tuner.Target
	// TunerStart is the tuner's initial goal [(0.6, 0.35, 0.05)]; Tuner
	// its settings.
	TunerStart *Goal
	Tuner      tuner.Config
	// TunerMargin tightens the bounds the tuner aims at (see Run.Margin)
	// [0: none; 0.2 made no difference on the training traces].
	TunerMargin float64
	// DelayWindow pools this many tuning intervals' delay samples into
	// the tuner's delay measurement [4].
	DelayWindow int
	// Seed offsets the runs' seeds: the run at offset k of every scheme
	// uses Seed+k+1.
	Seed uint64
	// Jobs is the number of parallel runs [GOMAXPROCS]; results do not
	// depend on it.
	Jobs int
	// Profile is the scenario profile of every run ("linux": Linux's
	// optional behaviours, docs/fidelity.md) [the default].
	Profile string
	// Progress, if set, is called after each finished run.
	Progress func(done, total int)
	// DecisionRTTs [1] and TuneRTTs [4] are DeepCC's decision and tuning
	// intervals (Run).
	DecisionRTTs, TuneRTTs float64
}

func (c *EvalConfig) defaults() {
	if c.Goals == nil {
		c.Goals = DefaultGoals
	}
	if c.Classic == nil {
		c.Classic = DefaultClassic
	}
	if c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Runs == 0 {
		c.Runs = 4
	}
	if c.Delay == 0 {
		c.Delay = 20 * time.Millisecond
	}
	if c.Queue == 0 {
		c.Queue = 200
	}
	if c.Targets == nil {
		c.Targets = TargetsFor
	}
	if c.TunerStart == nil {
		g := Goal{0.6, 0.35, 0.05}
		c.TunerStart = &g
	}
	if c.Jobs <= 0 {
		c.Jobs = runtime.GOMAXPROCS(0)
	}
	if c.DelayWindow == 0 {
		c.DelayWindow = 4
	}
	if c.Set == nil {
		c.Set = NewTraceSet()
	}
}

// SchemeResult aggregates one scheme's runs on one trace.
type SchemeResult struct {
	// Scheme is a classic controller's name or "deepcc-gN".
	Scheme string `json:"scheme"`
	// Goal is DeepCC's fixed goal (nil for classic controllers).
	Goal *Goal `json:"goal,omitempty"`
	// Means and 95% confidence half-widths over the runs.
	ThroughputMbps float64 `json:"throughput_mbps"`
	ThroughputCI   float64 `json:"throughput_mbps_ci95"`
	DelayP95Ms     float64 `json:"delay_p95_ms"`
	DelayP95CI     float64 `json:"delay_p95_ms_ci95"`
	DelayMeanMs    float64 `json:"delay_mean_ms"`
	Loss           float64 `json:"loss"`
	// Runs are the individual runs, in offset order.
	Runs []Outcome `json:"runs"`
}

// TargetResult is one target on one trace: DeepCC's tuned runs and whether
// each scheme's runs met it.
type TargetResult struct {
	Target tuner.Target `json:"target"`
	// Tuned are DeepCC's tuned runs, in offset order.
	Tuned []RunResult `json:"tuned"`
	// Met counts, per scheme, the runs that met the target (out of the
	// trace's runs).
	Met map[string]int `json:"met"`
}

// SchemeTCR is one scheme's target completion.
type SchemeTCR struct {
	Scheme string `json:"scheme"`
	Completion
}

// Comparison relates a DeepCC goal to CUBIC on one trace.
type Comparison struct {
	Goal string `json:"goal"`
	// DelayReduction is 1 - DeepCC's p95 queueing delay / CUBIC's.
	DelayReduction float64 `json:"delay_reduction"`
	// ThroughputRatio is DeepCC's throughput / CUBIC's.
	ThroughputRatio float64 `json:"throughput_ratio"`
}

// TraceResult is the evaluation on one held-out trace.
type TraceResult struct {
	Name string `json:"name"`
	// CapacityMbps is the mean capacity over the evaluated windows.
	CapacityMbps float64 `json:"capacity_mbps"`
	// Windows are the runs' links (start offsets and capacities).
	Windows []Link         `json:"windows"`
	Schemes []SchemeResult `json:"schemes"`
	// HighThroughput compares g1 (high-throughput mode) with CUBIC;
	// Comparable is the lowest-delay goal whose throughput is at least
	// ComparableShare of CUBIC's (nil if none).
	HighThroughput *Comparison    `json:"high_throughput,omitempty"`
	Comparable     *Comparison    `json:"comparable,omitempty"`
	Targets        []TargetResult `json:"targets,omitempty"`
	TCR            []SchemeTCR    `json:"tcr,omitempty"`
	// Reachable counts the (target, run window) pairs that at least one
	// scheme met: an upper bound for any scheme's TCR here.
	Reachable Completion `json:"reachable"`
	// Trajectory is one tuned run's path (the middle target on the first
	// window), TrajTarget its target.
	Trajectory []TunePoint   `json:"trajectory,omitempty"`
	TrajTarget *tuner.Target `json:"trajectory_target,omitempty"`
}

// ComparableShare is the share of CUBIC's throughput a goal must reach to
// count as "comparable throughput" (the paper's high-throughput claim).
const ComparableShare = 0.9

// Report is the whole evaluation, the JSON of `cclab deepcc eval --json`.
type Report struct {
	Traces []TraceResult `json:"traces"`
	// TCR is the completion over every trace, per scheme; Reachable the
	// pairs any scheme met.
	TCR       []SchemeTCR `json:"tcr,omitempty"`
	Reachable Completion  `json:"reachable"`
	// Setting.
	Duration float64     `json:"run_s"`
	Runs     int         `json:"runs_per_trace"`
	DelayMs  float64     `json:"one_way_delay_ms"`
	Queue    int         `json:"queue_packets"`
	Goals    []NamedGoal `json:"goals"`
	// Tuner settings.
	TunerStart       Goal    `json:"tuner_start"`
	TunerMargin      float64 `json:"tuner_margin"`
	TunerDelayWindow int     `json:"tuner_delay_window"`
	TunerK           int     `json:"tuner_k"`
	TunerRate        float64 `json:"tuner_learning_rate"`
	// Policy provenance.
	Policy        string  `json:"policy"`
	PolicySteps   int64   `json:"policy_steps"`
	TrainingWallS float64 `json:"training_wall_s"`
	// WallSeconds is the evaluation's wall time (not simulation logic).
	WallSeconds float64 `json:"wall_seconds"`
}

// job is one run of the evaluation.
type job struct {
	trace, window int
	scheme        string // classic name, goal name, or TunedScheme
	goal          Goal
	target        int // index into the trace's targets for tuned runs
	trajectory    bool
}

// Evaluate runs the multi-objective evaluation and, unless NoTargets, the
// target-completion study on every held-out trace.
func Evaluate(ctx context.Context, cfg EvalConfig) (*Report, error) {
	start := time.Now()
	cfg.defaults()
	if cfg.Policy == nil {
		return nil, fmt.Errorf("deepcc: no policy to evaluate")
	}
	if err := cfg.Policy.Check(PolicySpaces()); err != nil {
		return nil, err
	}
	if len(cfg.Traces) == 0 {
		return nil, fmt.Errorf("deepcc: no evaluation traces")
	}
	if cfg.Runs < 1 || cfg.Duration <= 0 || cfg.Queue < 1 || cfg.Delay < 0 {
		return nil, fmt.Errorf("deepcc: runs %d, duration %v, queue %d and delay %v must be positive", cfg.Runs, cfg.Duration, cfg.Queue, cfg.Delay)
	}
	for _, g := range cfg.Goals {
		if err := g.Goal.Validate(); err != nil {
			return nil, fmt.Errorf("goal %s: %w", g.Name, err)
		}
	}
	if err := cfg.TunerStart.Validate(); err != nil {
		return nil, fmt.Errorf("tuner start: %w", err)
	}

	if cfg.DelayWindow < 1 || !(cfg.TunerMargin >= 0 && cfg.TunerMargin < 1) {
		return nil, fmt.Errorf("deepcc: tuner delay window %d must be >= 1 and margin %g in [0, 1)", cfg.DelayWindow, cfg.TunerMargin)
	}
	tc := cfg.Tuner.WithDefaults()
	if _, err := tuner.New(tuner.Target{MaxDelayMs: 1}, *cfg.TunerStart, tc); err != nil {
		return nil, err
	}
	rep := &Report{Duration: cfg.Duration.Seconds(), Runs: cfg.Runs, DelayMs: float64(cfg.Delay) / 1e6, Queue: cfg.Queue, Goals: cfg.Goals,
		TunerStart: *cfg.TunerStart, TunerMargin: cfg.TunerMargin, TunerDelayWindow: cfg.DelayWindow, TunerK: tc.K, TunerRate: tc.LearningRate}
	if p := cfg.Policy; p != nil {
		rep.Policy = fmt.Sprintf("%s (seed %d)", p.Meta.Command, p.Meta.Seed)
		rep.PolicySteps, rep.TrainingWallS = p.Meta.Steps, p.Meta.TrainingWallS
	}
	targets := make([][]tuner.Target, len(cfg.Traces))
	var jobs []job
	for ti, path := range cfg.Traces {
		t, err := cfg.Set.Load(path)
		if err != nil {
			return nil, err
		}
		if t.Period() < cfg.Duration {
			return nil, fmt.Errorf("deepcc: trace %s lasts %v, shorter than a run (%v)", path, t.Period(), cfg.Duration)
		}
		tr := TraceResult{Name: TraceName(path)}
		span := t.Period() - cfg.Duration
		var capSum float64
		for k := range cfg.Runs {
			off := time.Duration(0)
			if cfg.Runs > 1 {
				off = (span / time.Duration(cfg.Runs-1) * time.Duration(k)).Truncate(time.Second)
			}
			l, err := TraceLink(cfg.Set, path, off, cfg.Duration, cfg.Delay, cfg.Queue, 0)
			if err != nil {
				return nil, err
			}
			tr.Windows = append(tr.Windows, l)
			capSum += l.Capacity.Mbps()
		}
		tr.CapacityMbps = capSum / float64(cfg.Runs)
		rep.Traces = append(rep.Traces, tr)
		for k := range cfg.Runs {
			for _, c := range cfg.Classic {
				jobs = append(jobs, job{trace: ti, window: k, scheme: c})
			}
			for _, g := range cfg.Goals {
				jobs = append(jobs, job{trace: ti, window: k, scheme: g.Name, goal: g.Goal})
			}
		}
		if !cfg.NoTargets {
			targets[ti] = cfg.Targets(tr.CapacityMbps)
			for i, tg := range targets[ti] {
				if err := tg.Validate(); err != nil {
					return nil, err
				}
				for k := range cfg.Runs {
					// Keep one example path for the report: the middle
					// target on the first window.
					traj := k == 0 && i == len(targets[ti])/2
					jobs = append(jobs, job{trace: ti, window: k, scheme: TunedScheme, goal: *cfg.TunerStart, target: i, trajectory: traj})
				}
			}
		}
	}

	results, err := runJobs(ctx, cfg, rep, targets, jobs)
	if err != nil {
		return nil, err
	}
	assemble(cfg, rep, targets, jobs, results)
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// runJobs runs every job on cfg.Jobs goroutines; results[i] is jobs[i]'s.
func runJobs(ctx context.Context, cfg EvalConfig, rep *Report, targets [][]tuner.Target, jobs []job) ([]RunResult, error) {
	results := make([]RunResult, len(jobs))
	errs := make([]error, len(jobs))
	pols := make([]*policy.Policy, par.Workers(len(jobs), cfg.Jobs))
	for w := range pols {
		pols[w] = cfg.Policy.Clone() // ActInto owns buffers
	}
	if err := par.Do(ctx, len(jobs), cfg.Jobs, cfg.Progress, func(w, i int) {
		j := jobs[i]
		r := Run{Link: rep.Traces[j.trace].Windows[j.window], Duration: cfg.Duration, Seed: cfg.Seed + uint64(j.window) + 1, Goal: j.goal, Tuner: cfg.Tuner, DelayWindow: cfg.DelayWindow, Margin: cfg.TunerMargin, Trajectory: j.trajectory,
			DecisionRTTs: cfg.DecisionRTTs, TuneRTTs: cfg.TuneRTTs}
		r.Link.Profile = cfg.Profile
		switch {
		case j.scheme == TunedScheme:
			tg := targets[j.trace][j.target]
			r.Target = &tg
			results[i], errs[i] = RunDeepCC(pols[w], r)
		case j.goal != Goal{}:
			results[i], errs[i] = RunDeepCC(pols[w], r)
		default:
			results[i], errs[i] = RunClassic(scenario.CC{Name: j.scheme}, r)
		}
	}); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("deepcc: %s on %s: %w", jobs[i].scheme, rep.Traces[jobs[i].trace].Name, err)
		}
	}
	return results, nil
}

// assemble aggregates the runs into the report, in a fixed order: classic
// controllers, then goals; tuned DeepCC first in TCR tables.
func assemble(cfg EvalConfig, rep *Report, targets [][]tuner.Target, jobs []job, results []RunResult) {
	type key struct {
		trace  int
		scheme string
		target int
	}
	runs := map[key][]RunResult{}
	for i, j := range jobs {
		k := key{j.trace, j.scheme, -1}
		if j.scheme == TunedScheme {
			k.target = j.target
		}
		runs[k] = append(runs[k], results[i])
	}
	schemes := append(append([]string(nil), cfg.Classic...), goalNames(cfg.Goals)...)
	total := map[string]Completion{}
	for ti := range rep.Traces {
		tr := &rep.Traces[ti]
		for _, s := range schemes {
			rs := runs[key{ti, s, -1}]
			sr := SchemeResult{Scheme: s}
			for _, g := range cfg.Goals {
				if g.Name == s {
					gg := g.Goal
					sr.Goal = &gg
					sr.Scheme = "deepcc-" + s
				}
			}
			thr, d95, dm, loss := make([]float64, len(rs)), make([]float64, len(rs)), make([]float64, len(rs)), make([]float64, len(rs))
			for i, r := range rs {
				sr.Runs = append(sr.Runs, r.Outcome)
				thr[i], d95[i], dm[i], loss[i] = r.ThroughputMbps, r.DelayP95Ms, r.DelayMeanMs, r.Loss
			}
			st, sd := metrics.Summarize(thr), metrics.Summarize(d95)
			sr.ThroughputMbps, sr.ThroughputCI = st.Mean, finite(st.CI95)
			sr.DelayP95Ms, sr.DelayP95CI = sd.Mean, finite(sd.CI95)
			sr.DelayMeanMs, sr.Loss = metrics.Summarize(dm).Mean, metrics.Summarize(loss).Mean
			tr.Schemes = append(tr.Schemes, sr)
		}
		compare(cfg, tr)
		if cfg.NoTargets {
			continue
		}
		// Target completion: tuned DeepCC, then every fixed scheme judged
		// against every target.
		attempts := map[string][]Attempt{}
		order := append([]string{TunedScheme}, schemes...)
		for i, tg := range targets[ti] {
			res := TargetResult{Target: tg, Met: map[string]int{}}
			for _, r := range runs[key{ti, TunedScheme, i}] {
				res.Tuned = append(res.Tuned, r)
				a := Attempt{Target: tg, Outcome: r.Outcome}
				attempts[TunedScheme] = append(attempts[TunedScheme], a)
				if a.Met() {
					res.Met[TunedScheme]++
				}
				if r.Trajectory != nil {
					tr.Trajectory, tr.TrajTarget = r.Trajectory, &res.Target
				}
			}
			reached := make([]bool, cfg.Runs) // per window: met by any scheme
			for k, r := range res.Tuned {
				reached[k] = reached[k] || tg.Met(r.Metrics())
			}
			for _, sr := range tr.Schemes {
				for k, o := range sr.Runs {
					a := Attempt{Target: tg, Outcome: o}
					attempts[sr.Scheme] = append(attempts[sr.Scheme], a)
					if a.Met() {
						res.Met[sr.Scheme]++
						reached[k] = true
					}
				}
			}
			for _, ok := range reached {
				tr.Reachable.Total++
				if ok {
					tr.Reachable.Met++
				}
			}
			tr.Targets = append(tr.Targets, res)
		}
		tr.Reachable.Ratio = ratio(tr.Reachable.Met, tr.Reachable.Total)
		rep.Reachable = rep.Reachable.Add(tr.Reachable)
		for _, s := range order {
			name := s
			for _, g := range cfg.Goals {
				if g.Name == s {
					name = "deepcc-" + s
				}
			}
			c := TCR(attempts[name])
			tr.TCR = append(tr.TCR, SchemeTCR{Scheme: name, Completion: c})
			total[name] = total[name].Add(c)
		}
	}
	if !cfg.NoTargets && len(rep.Traces) > 0 {
		for _, s := range rep.Traces[0].TCR {
			rep.TCR = append(rep.TCR, SchemeTCR{Scheme: s.Scheme, Completion: total[s.Scheme]})
		}
	}
}

// compare fills the high-throughput and comparable-throughput comparisons
// with CUBIC.
func compare(cfg EvalConfig, tr *TraceResult) {
	var cubic *SchemeResult
	for i := range tr.Schemes {
		if tr.Schemes[i].Scheme == "cubic" {
			cubic = &tr.Schemes[i]
		}
	}
	if cubic == nil || cubic.DelayP95Ms <= 0 || cubic.ThroughputMbps <= 0 {
		return
	}
	cmp := func(s SchemeResult) *Comparison {
		return &Comparison{Goal: s.Scheme, DelayReduction: 1 - s.DelayP95Ms/cubic.DelayP95Ms, ThroughputRatio: s.ThroughputMbps / cubic.ThroughputMbps}
	}
	for _, s := range tr.Schemes {
		if s.Goal == nil {
			continue
		}
		if tr.HighThroughput == nil {
			tr.HighThroughput = cmp(s) // the first goal is high-throughput mode
		}
		if s.ThroughputMbps >= ComparableShare*cubic.ThroughputMbps && (tr.Comparable == nil || s.DelayP95Ms < cubic.DelayP95Ms*(1-tr.Comparable.DelayReduction)) {
			tr.Comparable = cmp(s)
		}
	}
}

func goalNames(gs []NamedGoal) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Name
	}
	return out
}

// finite maps NaN (a CI of one run) to 0, which JSON can hold.
func finite(x float64) float64 {
	if x != x {
		return 0
	}
	return x
}
