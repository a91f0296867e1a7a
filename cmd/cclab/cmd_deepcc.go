package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/internal/progress"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/policy"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

func init() {
	register(&command{name: "deepcc train", summary: "train the DeepCC agent (goal-conditioned DDPG) on cellular traces and fixed links", run: runDeepCCTrain})
	register(&command{name: "deepcc eval", summary: "evaluate DeepCC: goals vs CUBIC/BBR/Vegas/NewReno on held-out traces, and target completion with the tuner", run: runDeepCCEval})
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func runDeepCCTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("deepcc train", stderr)
	steps := fs.Int64("steps", 2_000_000, "environment steps (one decision interval, about one RTT, each)")
	envs := fs.Int("envs", 8, "parallel environments")
	seed := fs.Uint64("seed", 1, "seed of networks, exploration and episodes")
	out := fs.String("out", "deepcc.policy", "where to write the trained policy")
	traceDir := fs.String("traces", "traces", "directory holding the traces")
	trainTraces := fs.String("train-traces", strings.Join(deepcc.TrainTraces, ","), "training traces (comma-separated file names in --traces)")
	batch := fs.Int("batch", 128, "DDPG minibatch")
	gsteps := fs.Int("gradient-steps", 2, "gradient steps per vectorised step")
	hidden := fs.String("hidden", "128,128", "hidden-layer widths of actor and critic")
	ck := fs.String("checkpoint", "", "checkpoint file (default: OUT.ckpt)")
	ckEvery := fs.Duration("checkpoint-every", 0, "checkpoint interval (default 5m)")
	resume := fs.Bool("resume", false, "continue from the checkpoint")
	force := fs.Bool("force", false, "start afresh even if the checkpoint exists (overwrites it and the learning curve)")
	csvPath := fs.String("csv", "", "learning-curve CSV (default: OUT.csv)")
	decision := fs.Float64("decision-rtts", 1, "decision interval, minimum RTTs (the paper: 0.5)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("deepcc train takes no arguments, got %q", pos)
	}
	if *steps < 1 || *envs < 1 || *batch < 1 || *gsteps < 1 {
		return usagef("--steps, --envs, --batch and --gradient-steps must be positive")
	}
	hid, err := parseWidths(*hidden)
	if err != nil {
		return usagef("--hidden: %v", err)
	}
	names := splitList(*trainTraces)
	if len(names) == 0 {
		return usagef("--train-traces names no trace")
	}
	tr, err := startTraining(*out, *ck, *csvPath, *resume, *force, stderr)
	if err != nil {
		return err
	}
	cmdline := "cclab deepcc train " + strings.Join(args, " ")
	fmt.Fprintf(stderr, "training %d steps on %d environments (traces %v; checkpoint %s, learning curve %s)\n", *steps, *envs, names, tr.ck, tr.csvPath)
	res, err := deepcc.Train(ctx, deepcc.TrainConfig{
		Sampler: deepcc.Sampler{Traces: deepcc.TracePaths(*traceDir, names)},
		Steps:   *steps, Envs: *envs, Seed: *seed, Hidden: hid,
		BatchSize: *batch, GradientSteps: *gsteps,
		Checkpoint: tr.ck, CheckpointEvery: *ckEvery, Resume: *resume,
		CSV: tr.curve, Progress: tr.progress, Command: cmdline, DecisionRTTs: *decision,
	})
	if err != nil {
		return tr.finish(err, nil, 0, 0, curveFigure{}, stdout, stderr)
	}
	return tr.finish(nil, res.Policy, res.Steps, res.Run.WallSeconds,
		curveFigure{"DeepCC training: mean episode return (random goals)", "episode return (20 s episodes)", "DDPG"}, stdout, stderr)
}

// parseWidths parses comma-separated positive layer widths.
func parseWidths(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive width", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no width given")
	}
	return out, nil
}

func runDeepCCEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("deepcc eval", stderr)
	pol := fs.String("policy", deepcc.ShippedPolicyPath, "trained policy file, or comma-separated files of independently trained seeds of one configuration, or a directory of them (its *.policy files) (the default is built into cclab)")
	valTraces := fs.String("validation-traces", strings.Join(deepcc.TrainTraces, ","), "with several policies: traces (in --traces) the median seed is chosen on; must not include an --eval-traces trace")
	valRuns := fs.Int("validation-runs", 4, "with several policies: windows per validation trace for choosing the median seed (0: skip the choice)")
	traceDir := fs.String("traces", "traces", "directory holding the traces")
	evalTraces := fs.String("eval-traces", strings.Join(deepcc.EvalTraces, ","), "held-out traces (comma-separated file names in --traces)")
	classic := fs.String("classic", strings.Join(deepcc.DefaultClassic, ","), "classic controllers to compare with")
	runs := fs.Int("runs", 4, "runs per trace, at evenly spaced start offsets")
	duration := fs.Duration("duration", 30*time.Second, "length of each run")
	delay := fs.Duration("delay", 20*time.Millisecond, "one-way propagation delay")
	queue := fs.Int("queue", 200, "bottleneck DropTail limit, packets")
	noTargets := fs.Bool("no-targets", false, "skip the target-completion (TCR) study")
	tk := fs.Int("tuner-k", 0, "tuning intervals averaged by the tuner (default 4)")
	tlr := fs.Float64("tuner-lr", 0, "tuner Adam learning rate (default 0.05)")
	tdw := fs.Int("tuner-delay-window", 4, "tuning intervals pooled into each delay percentile")
	traw := fs.Bool("tuner-raw-slopes", false, "follow the numerical gradient's sign as measured (default: sign from the monotone prior)")
	tm := fs.Float64("tuner-margin", 0, "tighten the bounds the tuner aims at by this fraction")
	tstart := fs.String("tuner-start", "0.6,0.35,0.05", "tuner's initial goal (throughput,delay,loss weights)")
	seed := fs.Uint64("seed", 0, "seed offset of the runs")
	decision := fs.Float64("decision-rtts", 1, "decision interval, minimum RTTs (the shipped policy was trained at 1)")
	tune := fs.Float64("tune-rtts", deepcc.TuneEvery, "tuning interval, RTTs (rounded to whole decision intervals)")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	profile := fs.String("profile", "", "scenario profile of every run: linux turns on Linux's optional behaviours for the classic controllers' and the agent's transport, linux-host also Linux's RTT sample and 250 Hz timer wheel (docs/fidelity.md); default (or empty): none of them")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write deepcc.json, plots and report.html to this directory")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("deepcc eval takes no arguments, got %q", pos)
	}
	if *runs < 1 || *duration <= 0 || *queue < 1 || *delay < 0 {
		return usagef("--runs, --duration and --queue must be positive and --delay non-negative")
	}
	if !scenario.KnownProfile(*profile) {
		return usagef("--profile must be %s, got %q", scenario.ProfileNames, *profile)
	}
	names := splitList(*evalTraces)
	if len(names) == 0 {
		return usagef("--eval-traces names no trace")
	}
	sw := splitList(*tstart)
	if len(sw) != 3 {
		return usagef("--tuner-start wants three weights, got %q", *tstart)
	}
	var ws [3]float64
	for i, x := range sw {
		if ws[i], err = strconv.ParseFloat(x, 64); err != nil {
			return usagef("--tuner-start: %q is not a number", x)
		}
	}
	start, err := deepcc.NewGoal(ws[0], ws[1], ws[2])
	if err != nil {
		return usagef("--tuner-start: %v", err)
	}
	if !(*tm >= 0 && *tm < 1) || *tdw < 1 || *tk < 0 || *tlr < 0 {
		return usagef("--tuner-margin must be in [0, 1), --tuner-delay-window >= 1, --tuner-k and --tuner-lr >= 0")
	}
	files, err := policyFiles(*pol)
	if err != nil {
		return usagef("--policy: %v", err)
	}
	if len(files) == 0 {
		return usagef("--policy names no file")
	}
	if *valRuns < 0 {
		return usagef("--validation-runs must be non-negative, got %d", *valRuns)
	}
	if *jobs < 0 {
		return usagef("--jobs must be 0 (all cores) or more, got %d", *jobs)
	}
	var pols []*policy.Policy
	for _, f := range files {
		p, err := deepcc.LoadPolicy(f)
		if err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
		if err := p.Check(deepcc.PolicySpaces()); err != nil {
			return fmt.Errorf("--policy %s: %w", f, err)
		}
		pols = append(pols, p)
	}
	cfg := deepcc.EvalConfig{
		Policy: pols[0], Traces: deepcc.TracePaths(*traceDir, names), Classic: splitList(*classic),
		Duration: *duration, Runs: *runs, Delay: *delay, Queue: *queue, NoTargets: *noTargets,
		TunerStart: &start, Tuner: tuner.Config{K: *tk, LearningRate: *tlr, RawSlopes: *traw}, DelayWindow: *tdw, TunerMargin: *tm,
		Seed: *seed, Jobs: *jobs, DecisionRTTs: *decision, TuneRTTs: *tune, Profile: *profile,
	}
	if len(pols) > 1 {
		if err := distinctSeeds("--policy", files, pols); err != nil {
			return err
		}
		return deepccEvalSeeds(ctx, cfg, pols, files, deepcc.TracePaths(*traceDir, splitList(*valTraces)), *valRuns, *out, *asJSON, stdout, stderr)
	}
	bar := progress.NewRuns(stderr, "deepcc eval")
	cfg.Progress = bar.Update
	rep, err := deepcc.Evaluate(ctx, cfg)
	bar.Finish()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := rep.WriteDir(*out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rep, rep.WriteText)
}

// deepccEvalSeeds evaluates independently trained policies: the median
// seed on the validation traces (unless valRuns is 0), then every policy
// on the evaluation traces, summarised across policies.
func deepccEvalSeeds(ctx context.Context, cfg deepcc.EvalConfig, pols []*policy.Policy, files, valTraces []string, valRuns int, out string, asJSON bool, stdout, stderr io.Writer) error {
	var sel *rl.Selection
	if valRuns > 0 {
		if len(valTraces) == 0 {
			return usagef("--validation-traces names no trace")
		}
		names := make([]string, len(valTraces))
		for i, v := range valTraces {
			names[i] = deepcc.TraceName(v)
		}
		evalNames := make([]string, len(cfg.Traces))
		for i, v := range cfg.Traces {
			evalNames[i] = deepcc.TraceName(v)
		}
		if err := rl.CheckDisjoint("trace", names, evalNames); err != nil {
			return usagef("--validation-traces: %v", err)
		}
		bar := progress.NewRuns(stderr, "deepcc eval: validation")
		c := cfg
		c.Progress = bar.Update
		s, err := deepcc.SelectPolicy(ctx, c, pols, valTraces, valRuns)
		bar.Finish()
		if err != nil {
			return err
		}
		sel = &s
		fmt.Fprintf(stderr, "median seed on the validation traces: policy %d (%s), scores (%s) %.3f\n", s.Index+1, files[s.Index], s.Score, s.Scores)
	}
	bar := progress.NewRuns(stderr, "deepcc eval")
	cfg.Progress = bar.Update
	rep, err := deepcc.EvaluateSeeds(ctx, cfg, pols, files)
	bar.Finish()
	if err != nil {
		return err
	}
	rep.Selection = sel
	if out != "" {
		if err := rep.WriteDir(out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, asJSON, rep, rep.WriteText)
}
