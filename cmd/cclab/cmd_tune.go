package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/operator"
	"github.com/cclab/cclab/experiment/scenario"
	vegasstudy "github.com/cclab/cclab/papers/vegas"
	"github.com/cclab/cclab/netsim/trace"
	"github.com/cclab/cclab/analysis/tune"
)

// The Vegas study's defaults: the paper's problem, and a split of the
// shipped cellular traces by recording (see papers/vegas/README.md).
var (
	vegasParams      = []string{"vegas.alpha=1:20:int", "vegas.beta=1:30:int"}
	vegasConstraints = []string{"vegas.alpha < vegas.beta"}
	vegasObjectives  = []string{"max:goodput_mbps", "min:qdelay_mean_ms"}
	vegasTrain       = []string{"ATT-LTE-driving.down.gz", "TMobile-LTE-short.down.gz"}
	vegasTest        = []string{"TMobile-LTE-driving.down.gz", "ATT-LTE-driving-2016.down.gz", "Verizon-LTE-short.down.gz"}
)

func init() {
	register(&command{name: "tune", summary: "tune controller parameters for several objectives with NSGA-II over simulations", run: runTune})
	register(&command{name: "study vegas", summary: "the Vegas NSGA-II study: tune alpha and beta on cellular traces, report on held-out traces", run: runStudyVegas})
}

// tuneFlags are the flags tune and the Vegas study share.
type tuneFlags struct {
	pop, gens, jobs, seeds int
	seed                   uint64
	crossover, mutation    string
	piece                  time.Duration
	traceMode              string
	noSeedDefault          bool
	progress               string
	out                    string
	asJSON                 bool
}

func (tf *tuneFlags) register(fs *flag.FlagSet, pop, gens int) {
	fs.IntVar(&tf.pop, "pop", pop, "population size (also offspring per generation)")
	fs.IntVar(&tf.gens, "gens", gens, "generations, the initial population being generation 1 (pymoo's n_gen)")
	fs.IntVar(&tf.jobs, "jobs", 0, "simulations at once (0: one per core); results do not depend on it")
	fs.Uint64Var(&tf.seed, "seed", 1, "optimiser seed")
	fs.IntVar(&tf.seeds, "seeds", 1, "scenario seeds per case (seed, seed+1, ...); only scenarios with random elements need more than 1")
	fs.StringVar(&tf.crossover, "crossover", "sbx", "crossover: "+strings.Join(operator.CrossoverNames, ", ")+" (mean: the Vegas paper's)")
	fs.StringVar(&tf.mutation, "mutation", "pm", "mutation: "+strings.Join(operator.MutationNames, ", ")+" (uniform: the Vegas paper's)")
	fs.BoolVar(&tf.noSeedDefault, "no-seed-default", false, "do not put the default parameters in the first population (they are still simulated, for reference)")
	fs.StringVar(&tf.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, a line per generation otherwise), bar, lines, none")
	fs.StringVar(&tf.out, "out", "", "write tables (CSV), summary.json, plots and report.html to this directory")
	fs.BoolVar(&tf.asJSON, "json", false, "print one JSON object instead of tables")
}

func (tf *tuneFlags) check() error {
	switch {
	case tf.pop < 2:
		return usagef("--pop %d: want at least 2", tf.pop)
	case tf.gens < 1:
		return usagef("--gens %d: want at least 1", tf.gens)
	case tf.jobs < 0:
		return usagef("--jobs %d: want 0 (one per core) or more", tf.jobs)
	case tf.seeds < 1:
		return usagef("--seeds %d: want at least 1", tf.seeds)
	case tf.piece < 0 || tf.piece%time.Millisecond != 0:
		return usagef("--piece %v: want a positive whole number of milliseconds, e.g. 120s", tf.piece)
	}
	if !slices.Contains(operator.CrossoverNames, tf.crossover) {
		return usagef("--crossover %q: accepted: %s", tf.crossover, strings.Join(operator.CrossoverNames, ", "))
	}
	if !slices.Contains(operator.MutationNames, tf.mutation) {
		return usagef("--mutation %q: accepted: %s", tf.mutation, strings.Join(operator.MutationNames, ", "))
	}
	switch tf.traceMode {
	case "", "exact", "average":
	default:
		return usagef("--trace-mode %q: accepted: exact, average", tf.traceMode)
	}
	switch tf.progress {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("--progress %q: accepted: auto, bar, lines, none", tf.progress)
	}
	return nil
}

func (tf *tuneFlags) options(stderr io.Writer, label string) (tune.Options, func()) {
	o := tune.Options{Pop: tf.pop, Gens: tf.gens, Seed: tf.seed, Jobs: tf.jobs, Crossover: tf.crossover, Mutation: tf.mutation, NoSeedDefault: tf.noSeedDefault}
	mode := tf.progress
	if mode == "auto" {
		mode = "lines"
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bar"
		}
	}
	start := time.Now()
	switch mode {
	case "bar":
		bar := progressbar.NewOptions(tf.pop*tf.gens,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("evaluations"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }),
		)
		o.Progress = func(p moo.Progress) {
			if p.Total != bar.GetMax() {
				bar.ChangeMax(p.Total)
			}
			bar.Describe(fmt.Sprintf("%s: generation %d/%d", label, p.Generation, p.Generations))
			bar.Set(p.Done)
		}
		return o, func() { bar.Finish() }
	case "lines":
		o.Generation = func(g *moo.Generation) {
			el := time.Since(start)
			eta := ""
			if g.Index > 0 && g.Index < tf.gens {
				eta = fmt.Sprintf(", ETA %s", (el / time.Duration(g.Index) * time.Duration(tf.gens-g.Index)).Round(time.Second))
			}
			fmt.Fprintf(stderr, "%s: generation %d/%d done: %d evaluations, Pareto set %d points, %.1f s%s\n",
				label, g.Index, tf.gens, g.Evaluations, g.Pareto, el.Seconds(), eta)
		}
	}
	return o, func() {}
}

// globs expands glob patterns; each must match something.
func globs(flag string, patterns []string) ([]string, error) {
	var out []string
	for _, pat := range patterns {
		for _, p := range strings.Split(pat, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, usagef("%s %q: %v", flag, p, err)
			}
			if len(m) == 0 {
				return nil, usagef("%s %q matches no file", flag, p)
			}
			out = append(out, m...)
		}
	}
	return out, nil
}

func parseDefaults(defs []string) (map[string]float64, error) {
	m := map[string]float64{}
	for _, d := range defs {
		k, v, ok := strings.Cut(d, "=")
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return nil, usagef("--default %q: want NAME=NUMBER, e.g. vegas.alpha=2", d)
		}
		m[strings.TrimSpace(k)] = x
	}
	return m, nil
}

// tuneGC makes the garbage collector run less often. Every study
// simulation reads its trace piece anew, about 7 MB of short-lived
// allocations in 27 ms, so with the default GOGC=100 and a small live heap
// the collector runs several times per simulation; GOGC=400 saved about
// 13% of CPU time on the paper-sized study, and memory stays under 100 MB.
// An explicit GOGC setting is respected.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func runTune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tune", stderr)
	var tf tuneFlags
	tf.register(fs, 10, 4)
	var params, objectives, constraints, defaults, traces, testTraces, sets stringList
	fs.Var(&params, "param", "a parameter to tune, NAME=LO:HI[:int|:real] (repeatable), e.g. vegas.alpha=1:20:int; NAME is a scenario path: CONTROLLER.PARAM, cc.PARAM or a numeric field")
	fs.Var(&objectives, "objective", "max:METRIC or min:METRIC (repeatable), e.g. max:goodput_mbps; see --metrics")
	fs.Var(&constraints, "constraint", "a constraint on parameters and metrics (repeatable), e.g. 'vegas.alpha < vegas.beta' or 'qdelay_p95_ms <= 100'")
	fs.Var(&defaults, "default", "baseline value of a tuned parameter, NAME=V (repeatable); default: the scenario's value or the controller's default")
	fs.Var(&traces, "traces", "score every candidate on each of these trace files (glob, repeatable or comma-separated) instead of the scenario's bottleneck")
	fs.Var(&testTraces, "test-traces", "after tuning, score the default and the Pareto set on these held-out trace files (glob)")
	fs.DurationVar(&tf.piece, "piece", 0, "cut each trace into pieces this long (e.g. 120s, the Vegas paper's), each piece a case")
	fs.StringVar(&tf.traceMode, "trace-mode", "", "override the scenario's bottleneck.trace_mode: average (rate updated every trace_window to its average) or exact (every delivery opportunity)")
	ccName := fs.String("cc", "", "override every flow's congestion controller")
	fs.Var(&sets, "set", "override a scenario field, dotted.path=value (repeatable)")
	metrics := fs.Bool("metrics", false, "list the metrics objectives and constraints may use, and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab tune SCENARIO.yaml... --param NAME=LO:HI[:int] --objective max:METRIC --objective min:METRIC [flags]")
		fs.PrintDefaults()
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *metrics {
		return printMetrics(stdout)
	}
	if len(pos) == 0 {
		return usagef("want at least one scenario file (usage: cclab tune SCENARIO.yaml... --param ... --objective ...)")
	}
	if err := tf.check(); err != nil {
		return err
	}
	defs, err := parseDefaults(defaults)
	if err != nil {
		return err
	}
	var scns []*scenario.Scenario
	for _, path := range pos {
		s, err := loadScenario(path, *ccName, -1, sets)
		if err != nil {
			return err
		}
		scns = append(scns, s)
	}
	trainFiles, err := globs("--traces", traces)
	if err != nil {
		return err
	}
	testFiles, err := globs("--test-traces", testTraces)
	if err != nil {
		return err
	}
	prob, err := tune.NewProblem(scns, tune.Spec{Params: params, Objectives: objectives, Constraints: constraints, Defaults: defs})
	if err != nil {
		return &usageError{err.Error()}
	}
	cs, err := makeCases(scns, trainFiles, testFiles, &tf)
	if err != nil {
		return err
	}
	defer cs.Close()
	tuneGC()
	res, h, err := tuneAndTest(ctx, prob, cs, &tf, stderr, "tune")
	if err != nil {
		return err
	}
	return writeTuneOutputs(stdout, res, h, &tf)
}

// caseSets are the tuning and held-out cases, with the directory holding
// their trace pieces.
type caseSets struct {
	train, test []tune.Case
	dir         string
}

// makeCases expands the scenarios over the training and held-out trace
// files (none: the scenarios as they are, and no held-out cases). Close
// removes the pieces.
func makeCases(scns []*scenario.Scenario, trainFiles, testFiles []string, tf *tuneFlags) (*caseSets, error) {
	dir, err := os.MkdirTemp("", "cclab-tune-pieces-")
	if err != nil {
		return nil, err
	}
	cs := &caseSets{dir: dir}
	co := tune.CaseOptions{Traces: trainFiles, Piece: tf.piece, Seeds: tf.seeds, TraceMode: tf.traceMode, Dir: dir}
	if cs.train, err = tune.Cases(scns, co); err != nil {
		cs.Close()
		return nil, err
	}
	if len(testFiles) > 0 {
		co.Traces = testFiles
		if cs.test, err = tune.Cases(scns, co); err != nil {
			cs.Close()
			return nil, fmt.Errorf("--test-traces: %w", err)
		}
	}
	return cs, nil
}

func (cs *caseSets) Close() { os.RemoveAll(cs.dir) }

// tuneAndTest runs the tuning and, if there are held-out cases, scores the
// default and the Pareto set on them.
func tuneAndTest(ctx context.Context, prob *tune.Problem, cs *caseSets, tf *tuneFlags, stderr io.Writer, label string) (*tune.Result, *tune.Holdout, error) {
	opts, finish := tf.options(stderr, label)
	res, err := tune.Run(ctx, prob, cs.train, opts)
	finish()
	if err != nil {
		return nil, nil, err
	}
	var h *tune.Holdout
	if len(cs.test) > 0 {
		if h, err = res.Holdout(ctx, cs.test, tf.jobs); err != nil {
			return nil, nil, err
		}
	}
	return res, h, nil
}

func writeTuneOutputs(stdout io.Writer, res *tune.Result, h *tune.Holdout, tf *tuneFlags) error {
	if tf.out != "" {
		if err := res.WriteDir(tf.out, h); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if tf.asJSON {
		return res.WriteJSON(stdout, h)
	}
	res.WriteTable(stdout, h)
	if tf.out != "" {
		fmt.Fprintf(stdout, "\nwrote %s (pareto.csv, evaluations.csv, hypervolume.csv, front.png, report.html, ...)\n", tf.out)
	}
	return nil
}

func printMetrics(w io.Writer) error {
	fmt.Fprintln(w, "Metrics for --objective and --constraint (each a mean over the cases a candidate runs on):")
	for _, n := range tune.MetricNames() {
		m, err := tune.LookupMetric(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-22s %s\n", n, m.Doc)
	}
	fmt.Fprintln(w, "  flowN.METRIC           METRIC of measured flow N alone (from 0), e.g. flow0.goodput_mbps")
	return nil
}

// studyMode is one trace mode's outcome in the Vegas study.
type studyMode struct {
	Mode   string        `json:"mode"`
	Tuning *tune.Summary `json:"tuning"`
	Goal   studyGoal     `json:"goal"`
	Grid   *studyGrid    `json:"grid,omitempty"`
}

// studyGrid is the exhaustive check: every point of the search space
// simulated on the training and the held-out pieces.
type studyGrid struct {
	Points int `json:"points"`
	// Simulations is the number of simulations the grid needed beyond
	// the tuning's.
	Simulations int64   `json:"simulations"`
	WallSeconds float64 `json:"wall_seconds"`
	// TrainFront is the number of points of the true Pareto set on the
	// training pieces; HypervolumeRatio the hypervolume of the tuning's
	// Pareto set over the true one's (same reference point).
	TrainFront       int     `json:"train_front_points"`
	HypervolumeRatio float64 `json:"hypervolume_ratio"`
	// FrontBest is the true training front's point with the largest
	// held-out goodput gain at no more held-out mean queueing delay than
	// the default: what a perfect tuner would offer.
	FrontBest *tune.PointJSON `json:"front_best,omitempty"`
	FrontGain *float64        `json:"front_gain_mbps,omitempty"`
	// OracleBest is the same over every point of the space, chosen with
	// hindsight on the held-out pieces: an upper bound on the goal.
	OracleBest *tune.PointJSON `json:"oracle_best,omitempty"`
	OracleGain *float64        `json:"oracle_gain_mbps,omitempty"`
	// MaxGain is the largest held-out goodput gain of any point, at any
	// delay.
	MaxGain float64 `json:"max_gain_mbps"`
}

// studyGoal checks the goal on the held-out pieces: a Pareto point
// with at least GainWanted Mbit/s more goodput than the default and no more
// mean queueing delay.
type studyGoal struct {
	GainWanted float64 `json:"gain_wanted_mbps"`
	Met        bool    `json:"met"`
	// Best is the Pareto point with the largest held-out goodput gain
	// among those with no more held-out mean queueing delay than the
	// default (absent if none has).
	Best         *tune.PointJSON `json:"best,omitempty"`
	GainMbps     *float64        `json:"gain_mbps,omitempty"`
	QdelayDiffMs *float64        `json:"qdelay_diff_ms,omitempty"`
	// MaxGainMbps is the largest held-out goodput gain of any Pareto
	// point, whatever its delay.
	MaxGainMbps float64 `json:"max_gain_mbps"`
	// Paper counts the Pareto points meeting the paper's "good QoS"
	// criterion on the held-out pieces: goodput above 4 Mbit/s and mean
	// queueing delay below 60 ms.
	Paper int `json:"paper_criterion_points"`
}

func runStudyVegas(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("study vegas", stderr)
	var tf tuneFlags
	tf.register(fs, 10, 4)
	fs.Lookup("out").Usage = "write study.json to this directory, and each trace mode's tables, plots and report.html to DIR/average and DIR/exact"
	scnPath := fs.String("scenario", vegasstudy.ScenarioPath, "the study's scenario (the default is built into cclab)")
	tracesDir := fs.String("traces-dir", "", "directory of the trace files (default: the repository's traces/, i.e. SCENARIO/../../traces)")
	mode := fs.String("mode", "both", "trace mode: average (the paper's 100 ms averages), exact (every delivery opportunity) or both")
	thorough := fs.Bool("thorough", false, "40 individuals x 25 generations instead of the paper's 10 x 4 (--pop and --gens override)")
	gain := fs.Float64("gain", 1.15, "goal: held-out goodput gain over the default, Mbit/s, at no more mean queueing delay")
	doGrid := fs.Bool("grid", false, "also simulate every (alpha, beta) of the search space on the training and held-out pieces: the true fronts, to judge the tuning and the goal")
	var train, test stringList
	fs.Var(&train, "train", "training trace file names in --traces-dir (repeatable or comma-separated); default "+strings.Join(vegasTrain, ", "))
	fs.Var(&test, "test", "held-out trace file names in --traces-dir; default "+strings.Join(vegasTest, ", "))
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab study vegas [--mode average|exact|both] [--thorough] [--out DIR] [flags]")
		fmt.Fprintln(stderr, "Tunes Vegas alpha in [1, 20] and beta in [1, 30] (alpha < beta) for max goodput and min mean queueing delay")
		fmt.Fprintln(stderr, "on 120 s pieces of the training traces, then scores the default (2, 4) and every Pareto point on the held-out traces.")
		fs.PrintDefaults()
	}
	tf.piece = 120 * time.Second
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("study vegas takes no arguments, got %q", pos)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *thorough {
		if !set["pop"] {
			tf.pop = 40
		}
		if !set["gens"] {
			tf.gens = 25
		}
	}
	if err := tf.check(); err != nil {
		return err
	}
	var modes []string
	switch *mode {
	case "both":
		modes = []string{"average", "exact"}
	case "average", "exact":
		modes = []string{*mode}
	default:
		return usagef("--mode %q: accepted: average, exact, both", *mode)
	}
	if !(*gain >= 0) {
		return usagef("--gain %v: want a number >= 0", *gain)
	}
	dir := *tracesDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(*scnPath), "..", "..", "traces")
	}
	files := func(flagName string, names []string, def []string) ([]string, error) {
		if len(names) == 0 {
			names = def
		}
		var out []string
		for _, n := range names {
			for _, f := range strings.Split(n, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				p := filepath.Join(dir, f)
				if _, err := trace.Shared.Load(p); err != nil {
					return nil, usagef("%s: %v (pass --traces-dir)", flagName, err)
				}
				out = append(out, p)
			}
		}
		return out, nil
	}
	trainFiles, err := files("--train", train, vegasTrain)
	if err != nil {
		return err
	}
	testFiles, err := files("--test", test, vegasTest)
	if err != nil {
		return err
	}
	for _, f := range trainFiles {
		if slices.Contains(testFiles, f) {
			return usagef("trace %s is both a training and a held-out trace", f)
		}
	}
	s, err := loadScenario(*scnPath, "", -1, nil)
	if err != nil {
		return err
	}
	scns := []*scenario.Scenario{s}
	prob, err := tune.NewProblem(scns, tune.Spec{Params: vegasParams, Objectives: vegasObjectives, Constraints: vegasConstraints})
	if err != nil {
		return err
	}
	tuneGC()
	var results []studyMode
	for _, m := range modes {
		mtf := tf
		mtf.traceMode = m
		if tf.out != "" {
			mtf.out = filepath.Join(tf.out, m)
		}
		cs, err := makeCases(scns, trainFiles, testFiles, &mtf)
		if err != nil {
			return err
		}
		res, h, err := tuneAndTest(ctx, prob, cs, &mtf, stderr, "vegas "+m)
		if err != nil {
			cs.Close()
			return fmt.Errorf("%s mode: %w", m, err)
		}
		var grid *studyGrid
		if *doGrid {
			grid, err = gridCheck(ctx, prob, cs, res, h, &mtf)
			if err != nil {
				cs.Close()
				return fmt.Errorf("%s mode: %w", m, err)
			}
		}
		cs.Close()
		if mtf.out != "" {
			if err := res.WriteDir(mtf.out, h); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
		}
		sm := studyMode{Mode: m, Tuning: res.Summary(h), Goal: studyGoal{GainWanted: *gain}, Grid: grid}
		best, g := h.BestGain(prob, 0)
		if best >= 0 {
			pj := sm.Tuning.Test.Pareto[best]
			dq := h.Pareto[best].Objectives[1] - h.Default.Objectives[1]
			sm.Goal.Best, sm.Goal.GainMbps, sm.Goal.QdelayDiffMs = &pj, &g, &dq
			sm.Goal.Met = g >= *gain
		}
		sm.Goal.MaxGainMbps = math.Inf(-1)
		for _, pt := range h.Pareto {
			sm.Goal.MaxGainMbps = max(sm.Goal.MaxGainMbps, pt.Objectives[0]-h.Default.Objectives[0])
			if pt.Objectives[0] > 4 && pt.Objectives[1] < 60 {
				sm.Goal.Paper++
			}
		}
		results = append(results, sm)
		if !tf.asJSON {
			fmt.Fprintf(stdout, "=== %s trace mode: trained on %d pieces of %s; held out %d pieces of %s\n\n", m,
				len(res.Cases), baseNames(trainFiles), len(h.Cases), baseNames(testFiles))
			res.WriteTable(stdout, h)
			fmt.Fprintln(stdout)
			printGoal(stdout, m, sm.Goal)
			if grid != nil {
				printGrid(stdout, grid)
			}
			fmt.Fprintln(stdout)
		}
	}
	if tf.out != "" {
		f, err := os.Create(filepath.Join(tf.out, "study.json"))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if tf.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	if tf.out != "" {
		fmt.Fprintf(stdout, "wrote %s (study.json, and per mode: pareto.csv, test.csv, front.png, test_front.png, report.html, ...)\n", tf.out)
	}
	return nil
}

func baseNames(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return strings.Join(out, ", ")
}

func printGoal(w io.Writer, mode string, g studyGoal) {
	verdict := "NOT MET"
	if g.Met {
		verdict = "MET"
	}
	fmt.Fprintf(w, "goal (%s mode): a Pareto point with >= %.2f Mbit/s more held-out goodput than the default at no more mean queueing delay: %s\n", mode, g.GainWanted, verdict)
	if g.Best != nil {
		fmt.Fprintf(w, "  best at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s, mean queueing delay %+.3f ms\n",
			g.Best.Params["vegas.alpha"], g.Best.Params["vegas.beta"], *g.GainMbps, *g.QdelayDiffMs)
	} else {
		fmt.Fprintln(w, "  no Pareto point has less or equal held-out mean queueing delay than the default")
	}
	fmt.Fprintf(w, "  largest held-out goodput gain at any delay: %+.3f Mbit/s; points meeting the paper's criterion (> 4 Mbit/s, < 60 ms): %d\n", g.MaxGainMbps, g.Paper)
}

// gridCheck simulates every point of the (integer) search space on the
// training and held-out pieces.
func gridCheck(ctx context.Context, prob *tune.Problem, cs *caseSets, res *tune.Result, h *tune.Holdout, tf *tuneFlags) (*studyGrid, error) {
	start := time.Now()
	xs, err := prob.Grid(100_000)
	if err != nil {
		return nil, err
	}
	// The tuning's evaluator already holds the points it simulated.
	trainEv := res.Evaluator()
	trainSims := trainEv.Simulations()
	testEv, err := tune.NewEvaluator(prob, cs.test, tf.jobs)
	if err != nil {
		return nil, err
	}
	train, err := trainEv.Points(ctx, xs)
	if err != nil {
		return nil, err
	}
	test, err := testEv.Points(ctx, xs)
	if err != nil {
		return nil, err
	}
	g := &studyGrid{Points: len(xs), Simulations: trainEv.Simulations() - trainSims + testEv.Simulations()}
	inds := make([]moo.Individual, len(train))
	for i, pt := range train {
		inds[i] = moo.Individual{X: pt.X, Objectives: pt.Objectives, Constraints: pt.Constraints, Violation: pt.Violation, Generation: 1, Index: i}
	}
	front := moo.ParetoSet(prob.MOO, inds)
	g.TrainFront = len(front)
	if res.Reference != nil {
		tuned, err := moo.Hypervolume(prob.MOO, res.Pareto, res.Reference)
		if err != nil {
			return nil, err
		}
		best, err := moo.Hypervolume(prob.MOO, front, res.Reference)
		if err != nil {
			return nil, err
		}
		if best > 0 {
			g.HypervolumeRatio = tuned / best
		}
	}
	index := map[string]int{}
	for i, x := range xs {
		index[fmt.Sprint(x)] = i
	}
	frontTest := &tune.Holdout{Default: h.Default}
	for _, ind := range front {
		frontTest.Pareto = append(frontTest.Pareto, test[index[fmt.Sprint(ind.X)]])
	}
	pj := func(pt *tune.Point) *tune.PointJSON {
		p := tune.PointJSON{Params: map[string]float64{}, Objectives: map[string]float64{}, Feasible: pt.Feasible()}
		for i, q := range prob.Params {
			p.Params[q.Name] = pt.X[i]
		}
		for j, o := range prob.MOO.Objectives {
			p.Objectives[o.Name] = pt.Objectives[j]
		}
		return &p
	}
	if i, gain := frontTest.BestGain(prob, 0); i >= 0 {
		g.FrontBest, g.FrontGain = pj(frontTest.Pareto[i]), &gain
	}
	all := &tune.Holdout{Default: h.Default, Pareto: test}
	if i, gain := all.BestGain(prob, 0); i >= 0 {
		g.OracleBest, g.OracleGain = pj(test[i]), &gain
	}
	g.MaxGain = math.Inf(-1)
	for _, pt := range test {
		g.MaxGain = max(g.MaxGain, pt.Objectives[0]-h.Default.Objectives[0])
	}
	g.WallSeconds = math.Round(time.Since(start).Seconds()*10) / 10
	if tf.out != "" {
		var rows [][]string
		for i := range xs {
			row := []string{}
			for j, q := range prob.Params {
				row = append(row, tune.FormatValue(q.Variable, xs[i][j]))
			}
			for _, pt := range []*tune.Point{train[i], test[i]} {
				for _, v := range pt.Objectives {
					row = append(row, strconv.FormatFloat(v, 'g', 10, 64))
				}
			}
			rows = append(rows, row)
		}
		header := []string{}
		for _, q := range prob.Params {
			header = append(header, q.Name)
		}
		for _, set := range []string{"train_", "test_"} {
			for _, o := range prob.MOO.Objectives {
				header = append(header, set+o.Name)
			}
		}
		if err := os.MkdirAll(tf.out, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(tf.out, "grid.csv"))
		if err != nil {
			return nil, err
		}
		w := csv.NewWriter(f)
		w.Write(header)
		w.WriteAll(rows)
		if err := w.Error(); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func printGrid(w io.Writer, g *studyGrid) {
	fmt.Fprintf(w, "  exhaustive check (%d points, %d more simulations, %.0f s): the tuned Pareto set has %.1f%% of the true training front's hypervolume (%d points)\n",
		g.Points, g.Simulations, g.WallSeconds, 100*g.HypervolumeRatio, g.TrainFront)
	if g.FrontBest != nil {
		fmt.Fprintf(w, "  best point of the true training front on the held-out pieces at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s\n",
			g.FrontBest.Params["vegas.alpha"], g.FrontBest.Params["vegas.beta"], *g.FrontGain)
	}
	if g.OracleBest != nil {
		fmt.Fprintf(w, "  best of all points chosen on the held-out pieces themselves at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s\n",
			g.OracleBest.Params["vegas.alpha"], g.OracleBest.Params["vegas.beta"], *g.OracleGain)
	}
	fmt.Fprintf(w, "  largest held-out goodput gain of any point at any delay: %+.3f Mbit/s\n", g.MaxGain)
}
