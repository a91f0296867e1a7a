package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/internal/progress"
	"github.com/cclab/cclab/papers/deepcc"
)

func init() {
	register(&command{name: "deepcc study", summary: "DeepCC's other experiments: coexist (Figs 11-12), convergence (Fig 15), loss (Fig 14), intervals (Fig 9), modes", args: "EXPERIMENT", help: "EXPERIMENT is one of: " + strings.Join(deepccStudies, ", ") + ".", run: runDeepCCStudy})
}

// deepccStudies names the experiments of `deepcc study`.
var deepccStudies = []string{"coexist", "convergence", "loss", "intervals", "modes"}

// parseFloats parses a comma-separated list of numbers, each scaled by
// scale.
func parseFloats(s string, scale float64) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, x*scale)
	}
	return out, nil
}

// deepccStudyFlags are deepcc study's flags.
type deepccStudyFlags struct {
	pol, traceDir, evalTraces, losses, decisions, rtts, tunings, out string
	runs, competitors, flows, jobs                                   int
	duration, every                                                  time.Duration
	seed                                                             uint64
	decision, tune                                                   float64
	asJSON                                                           bool
}

func (f *deepccStudyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.pol, "policy", deepcc.ShippedPolicyPath, "trained policy file (built into cclab)")
	fs.StringVar(&f.traceDir, "traces", "traces", "directory holding the traces (intervals, modes)")
	fs.StringVar(&f.evalTraces, "eval-traces", strings.Join(deepcc.EvalTraces, ","), "held-out traces (intervals, modes)")
	fs.IntVar(&f.runs, "runs", 0, "seeds (or trace windows) per point (default: 3 for coexist, else 2)")
	fs.DurationVar(&f.duration, "duration", 0, "length of each run (default: 60s coexist, 40s convergence, 30s others)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed offset of the runs")
	fs.Float64Var(&f.decision, "decision-rtts", 1, "DeepCC's decision interval, minimum RTTs (the paper: 0.5; the shipped policy was trained at 1)")
	fs.Float64Var(&f.tune, "tune-rtts", deepcc.TuneEvery, "the tuner's interval, RTTs (rounded to whole decision intervals)")
	fs.IntVar(&f.competitors, "competitors", 1, "coexist: competing flows beside the tested one")
	fs.IntVar(&f.flows, "flows", 3, "convergence: flows of each scheme")
	fs.DurationVar(&f.every, "every", 10*time.Second, "convergence: a flow joins every this often")
	fs.StringVar(&f.losses, "losses", "0,1,2,3,4,5,6", "loss: random-loss rates, %")
	fs.StringVar(&f.decisions, "decisions", "0.25,0.5,1,2,4", "intervals: decision intervals, minimum RTTs")
	fs.StringVar(&f.rtts, "rtts", "20,60,120,200", "intervals: path RTTs of the decision study, ms")
	fs.StringVar(&f.tunings, "tunings", "0.5,1,2,4,8", "intervals: tuning intervals, RTTs")
	fs.IntVar(&f.jobs, "jobs", 0, "parallel runs (default: all cores; results do not depend on it)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.StringVar(&f.out, "out", "", "write EXPERIMENT.json, figures and report.html to this directory")
}

// studyReport is what every deepcc study returns.
type studyReport interface {
	WriteText(w io.Writer)
	WriteDir(dir string) error
}

func runDeepCCStudy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("deepcc study", stderr)
	var f deepccStudyFlags
	f.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("deepcc study takes one experiment (%s), got %q", strings.Join(deepccStudies, ", "), pos)
	}
	name := pos[0]
	if f.runs < 0 || f.duration < 0 {
		return usagef("--runs and --duration must not be negative")
	}
	p, err := deepcc.LoadPolicy(f.pol)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	bar := progress.NewRuns(stderr, "deepcc study "+name)
	cfg := deepcc.StudyConfig{Policy: p, Duration: f.duration, Runs: f.runs, Seed: f.seed, DecisionRTTs: f.decision, TuneRTTs: f.tune,
		Traces: deepcc.TracePaths(f.traceDir, splitList(f.evalTraces)), Jobs: f.jobs, Progress: bar.Update}
	rep, err := f.study(ctx, name, cfg)
	bar.Finish()
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := writeStudy(f.out, name, rep); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, f.asJSON, rep, rep.WriteText)
}

// study runs the named experiment.
func (f *deepccStudyFlags) study(ctx context.Context, name string, cfg deepcc.StudyConfig) (studyReport, error) {
	switch name {
	case "coexist":
		if f.competitors < 1 {
			return nil, usagef("--competitors must be at least 1")
		}
		return deepcc.Coexist(ctx, cfg, deepcc.Link{}, f.competitors, nil)
	case "convergence":
		return deepcc.Convergence(ctx, cfg, nil, f.flows, f.every)
	case "loss":
		ls, err := parseFloats(f.losses, 0.01)
		if err != nil {
			return nil, usagef("--losses: %v", err)
		}
		return deepcc.LossSweep(ctx, cfg, nil, ls)
	case "intervals":
		ds, err1 := parseFloats(f.decisions, 1)
		rs, err2 := parseFloats(f.rtts, 1)
		ts, err3 := parseFloats(f.tunings, 1)
		for _, e := range []error{err1, err2, err3} {
			if e != nil {
				return nil, usagef("--decisions, --rtts, --tunings: %v", e)
			}
		}
		return deepcc.Intervals(ctx, cfg, ds, rs, ts)
	case "modes":
		return deepcc.Modes(ctx, cfg, nil)
	}
	return nil, usagef("unknown experiment %q (want one of %s)", name, strings.Join(deepccStudies, ", "))
}

// writeStudy writes NAME.json, the figures and report.html into dir.
func writeStudy(dir, name string, rep studyReport) error {
	if err := report.WriteJSON(filepath.Join(dir, name+".json"), rep); err != nil {
		return err
	}
	return rep.WriteDir(dir)
}
