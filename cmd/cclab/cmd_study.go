package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cclab/cclab/analysis/tune"
	"github.com/cclab/cclab/netsim/trace"
	"github.com/cclab/cclab/papers/vegas"
)

func init() {
	register(&command{name: "study vegas", summary: "the Vegas NSGA-II study: tune alpha and beta on cellular traces, report on held-out traces",
		help: "Tunes Vegas alpha in [1, 20] and beta in [1, 30] (alpha < beta) for max goodput and min mean queueing delay\n" +
			"on 120 s pieces of the training traces, then scores the default (2, 4) and every Pareto point on the held-out traces.",
		run: runStudyVegas})
}

// studyFlags are the Vegas study's own flags; the tuning flags are tune's.
type studyFlags struct {
	tf                  tuneFlags
	scenario, tracesDir string
	mode                string
	thorough, grid      bool
	gain                float64
	train, test         stringList
}

func (sf *studyFlags) register(fs *flag.FlagSet) {
	sf.tf.register(fs, 10, 4)
	fs.StringVar(&sf.scenario, "scenario", vegas.ScenarioPath, "the study's scenario (the default is built into cclab)")
	fs.StringVar(&sf.tracesDir, "traces-dir", "", "directory of the trace files (default: the repository's traces/, i.e. SCENARIO/../../traces)")
	fs.StringVar(&sf.mode, "mode", "both", "trace mode: average (the paper's 100 ms averages), exact (every delivery opportunity) or both")
	fs.BoolVar(&sf.thorough, "thorough", false, "40 individuals x 25 generations instead of the paper's 10 x 4 (--pop and --gens override)")
	fs.Float64Var(&sf.gain, "gain", vegas.DefaultGain, "goal: held-out goodput gain over the default, Mbit/s, at no more mean queueing delay")
	fs.BoolVar(&sf.grid, "grid", false, "also simulate every (alpha, beta) of the search space on the training and held-out pieces: the true fronts, to judge the tuning and the goal")
	fs.Var(&sf.train, "train", "training trace file names in --traces-dir (repeatable or comma-separated); default "+strings.Join(vegas.TrainTraces, ", "))
	fs.Var(&sf.test, "test", "held-out trace file names in --traces-dir; default "+strings.Join(vegas.TestTraces, ", "))
}

// modes checks the flags and returns the trace modes to run.
func (sf *studyFlags) modes(fs *flag.FlagSet) ([]string, error) {
	if sf.thorough {
		if !flagGiven(fs, "pop") {
			sf.tf.pop = 40
		}
		if !flagGiven(fs, "gens") {
			sf.tf.gens = 25
		}
	}
	if err := sf.tf.check(); err != nil {
		return nil, err
	}
	if !(sf.gain >= 0) {
		return nil, usagef("--gain %v: want a number >= 0", sf.gain)
	}
	switch sf.mode {
	case "both":
		return []string{"average", "exact"}, nil
	case "average", "exact":
		return []string{sf.mode}, nil
	}
	return nil, usagef("--mode %q: accepted: average, exact, both", sf.mode)
}

// traceFiles resolves trace names in dir (def when none is given); each
// must load.
func traceFiles(flagName, dir string, names, def []string) ([]string, error) {
	if len(names) == 0 {
		names = def
	}
	var out []string
	for _, n := range names {
		for _, f := range splitList(n) {
			p := filepath.Join(dir, f)
			if _, err := trace.Shared.Load(p); err != nil {
				return nil, usagef("%s: %v (pass --traces-dir)", flagName, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// config builds the study's configuration from the flags.
func (sf *studyFlags) config(stderr io.Writer) (vegas.Config, error) {
	dir := sf.tracesDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(sf.scenario), "..", "..", "traces")
	}
	cfg := vegas.Config{Gain: sf.gain, Grid: sf.grid, Seeds: sf.tf.seeds, Piece: sf.tf.piece, Jobs: sf.tf.jobs, Out: sf.tf.out,
		Options: func(label string) (tune.Options, func()) { return sf.tf.options(stderr, label) }}
	var err error
	if cfg.TrainFiles, err = traceFiles("--train", dir, sf.train, vegas.TrainTraces); err != nil {
		return cfg, err
	}
	if cfg.TestFiles, err = traceFiles("--test", dir, sf.test, vegas.TestTraces); err != nil {
		return cfg, err
	}
	for _, f := range cfg.TrainFiles {
		if slices.Contains(cfg.TestFiles, f) {
			return cfg, usagef("trace %s is both a training and a held-out trace", f)
		}
	}
	cfg.Scenario, err = loadScenario(sf.scenario, "", -1, nil)
	return cfg, err
}

func runStudyVegas(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("study vegas", stderr)
	var sf studyFlags
	sf.register(fs)
	fs.Lookup("out").Usage = "write study.json to this directory, and each trace mode's tables, plots and report.html to DIR/average and DIR/exact"
	sf.tf.piece = vegas.Piece
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("study vegas takes no arguments, got %q", pos)
	}
	modes, err := sf.modes(fs)
	if err != nil {
		return err
	}
	cfg, err := sf.config(stderr)
	if err != nil {
		return err
	}
	prob, err := vegas.Problem(cfg.Scenario)
	if err != nil {
		return err
	}
	tune.RelaxGC()
	var results []vegas.Mode
	for _, m := range modes {
		mr, err := vegas.RunMode(ctx, cfg, prob, m)
		if err != nil {
			return err
		}
		results = append(results, mr.Mode)
		if !sf.tf.asJSON {
			printStudyMode(stdout, mr, cfg)
		}
	}
	return finishStudy(stdout, results, &sf.tf)
}

// finishStudy writes study.json and prints the JSON or the closing line.
func finishStudy(stdout io.Writer, results []vegas.Mode, tf *tuneFlags) error {
	if tf.out != "" {
		if err := vegas.WriteJSON(tf.out, results); err != nil {
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

func printStudyMode(w io.Writer, mr *vegas.ModeRun, cfg vegas.Config) {
	fmt.Fprintf(w, "=== %s trace mode: trained on %d pieces of %s; held out %d pieces of %s\n\n", mr.Mode.Mode,
		len(mr.Result.Cases), baseNames(cfg.TrainFiles), len(mr.Holdout.Cases), baseNames(cfg.TestFiles))
	mr.Result.WriteTable(w, mr.Holdout)
	fmt.Fprintln(w)
	mr.Goal.WriteText(w, mr.Mode.Mode)
	if mr.Grid != nil {
		mr.Grid.WriteText(w)
	}
	fmt.Fprintln(w)
}

func baseNames(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return strings.Join(out, ", ")
}
