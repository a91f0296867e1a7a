package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cclab/cclab/internal/progress"

	"github.com/cclab/cclab/analysis/tune"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/operator"
)

func init() {
	register(&command{name: "tune", summary: "tune controller parameters for several objectives with NSGA-II over simulations",
		args: "SCENARIO... --param NAME=LO:HI[:int] --objective max:METRIC --objective min:METRIC", run: runTune})
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
	mode := progress.Mode(tf.progress, stderr)
	start := time.Now()
	switch mode {
	case "bar":
		bar := progress.NewEvaluations(stderr, tf.pop*tf.gens, label)
		o.Progress = func(p moo.Progress) { bar.Update(p.Done, p.Total, p.Generation, p.Generations) }
		return o, bar.Finish
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
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *metrics {
		return tune.WriteMetrics(stdout)
	}
	if len(pos) == 0 {
		return usagef("want at least one scenario file (usage: cclab tune SCENARIO.yaml... --param ... --objective ...)")
	}
	if err := tf.check(); err != nil {
		return err
	}
	defs, err := tune.ParseDefaults(defaults)
	if err != nil {
		return usagef("--default %v", err)
	}
	var scns []*scenario.Scenario
	for _, path := range pos {
		s, err := loadScenario(path, *ccName, -1, sets)
		if err != nil {
			return err
		}
		scns = append(scns, s)
	}
	trainFiles, err := tune.Globs(traces)
	if err != nil {
		return usagef("--traces %v", err)
	}
	testFiles, err := tune.Globs(testTraces)
	if err != nil {
		return usagef("--test-traces %v", err)
	}
	prob, err := tune.NewProblem(scns, tune.Spec{Params: params, Objectives: objectives, Constraints: constraints, Defaults: defs})
	if err != nil {
		return &usageError{err.Error()}
	}
	cs, err := tune.NewCaseSets(scns, trainFiles, testFiles, tune.CaseOptions{Piece: tf.piece, Seeds: tf.seeds, TraceMode: tf.traceMode})
	if err != nil {
		return err
	}
	defer cs.Close()
	tune.RelaxGC()
	opts, finish := tf.options(stderr, "tune")
	res, h, err := cs.Tune(ctx, prob, opts, finish)
	if err != nil {
		return err
	}
	return writeTuneOutputs(stdout, res, h, &tf)
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
