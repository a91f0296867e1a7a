package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/cclab/cclab/internal/progress"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
	"github.com/cclab/cclab/papers/marlin"
)

func init() {
	register(&command{name: "marlin train", summary: "train the MARLIN agent (SAC) on the SATCOM-to-UHF scenario", run: runMarlinTrain})
	register(&command{name: "marlin eval", summary: "evaluate MARLIN against CUBIC, Mockets, a random agent and the ideal (paper figures 3 and 4)", run: runMarlinEval})
	register(&command{name: "marlin ensemble", summary: "combine independently trained MARLIN policies into one that acts with their mean action (ours)",
		args: "--out FILE POLICY POLICY...", help: "The policies are seeds of one configuration: the same variant, action, span, frame-skip and filter windows, and distinct training seeds. Evaluate the result with cclab marlin eval --policy FILE; several ensemble files, comma-separated, are reported over ensembles as seeds are.", run: runMarlinEnsemble})
}

// marlinScenario loads the training/evaluation scenario: a file, or the
// built-in satcom-uhf.
func marlinScenario(path string, sets []string) (*scenario.Scenario, error) {
	if path == "" {
		path = "satcom-uhf"
	}
	return loadScenario(path, "", -1, sets)
}

func runMarlinTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("marlin train", stderr)
	steps := fs.Int64("steps", 200_000, "environment steps (100 ms each)")
	envs := fs.Int("envs", 8, "parallel environments")
	seed := fs.Uint64("seed", 1, "seed of networks, exploration and episodes")
	out := fs.String("out", "marlin.policy", "where to write the trained policy")
	scn := fs.String("scenario", "", "training scenario (default: built-in satcom-uhf)")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	loss := fs.Float64("loss", 0.03, "UHF random loss during training")
	randomize := fs.Bool("randomize", true, "randomise switch time (5-15 s) and background intensity (x0.8-1.2) per episode")
	bulk := fs.Bool("bulk", false, "train on a never-ending flow (the paper's partial episodes) instead of 300 KB-1 MB transfers")
	batch := fs.Int("batch", 512, "SAC minibatch")
	gsteps := fs.Int("gradient-steps", 1, "gradient steps per vectorised step")
	gamma := fs.Float64("gamma", 0.99, "discount factor")
	action := fs.String("action", "", "action parametrisation: linear (the paper's, w(1+a); default of --variant paper), log2 (ours, w*2^a) or bdp (compact variant only, its default: window = BDP estimate * 2^(2a))")
	variant := fs.String("variant", "paper", "formulation: paper (14x7x10 observation, equation 1, [400,300]) or compact (ours: 8 features x 4 steps, a reward pricing time, retransmissions and queueing, [64,64])")
	ck := fs.String("checkpoint", "", "checkpoint file (default: OUT.ckpt)")
	ckEvery := fs.Duration("checkpoint-every", 0, "checkpoint interval (default 5m)")
	resume := fs.Bool("resume", false, "continue from the checkpoint")
	force := fs.Bool("force", false, "start afresh even if the checkpoint exists (overwrites it and the learning curve)")
	csvPath := fs.String("csv", "", "learning-curve CSV (default: OUT.csv)")
	// Training options of the ablation study (docs/marlin.md).
	frameSkip := fs.Int("frame-skip", 1, "repeat each action for this many 100-ms steps, summing the rewards (compact variant; a divisor of 200)")
	nstep := fs.Int("n-step", 1, "rewards per SAC critic target (n-step returns)")
	entCoef := fs.Float64("ent-coef", 0, "fix SAC's entropy coefficient (default: tuned automatically)")
	entInit := fs.Float64("ent-coef-init", 1, "initial entropy coefficient of the automatic tuning")
	targetEnt := fs.Float64("target-entropy", -1, "entropy target of the automatic tuning, nats (SB3: -dim(A) = -1)")
	obsNorm := fs.Bool("obs-norm", true, "running observation normalisation (the authors' VecNormalize)")
	switchRange := fs.String("switch-range", "", "with --randomize: range of the link-switch time, LO,HI (default 5s,15s)")
	switchExcl := fs.String("switch-exclude", "", "with --randomize: switch times LO,HI never drawn (keeps an evaluation condition unseen)")
	delayRange := fs.String("delay-range", "", "with --randomize: range of a factor on each link's one-way delay, drawn per episode and link, LO,HI (default: the scenario's delays; ours)")
	rateRange := fs.String("rate-range", "", "with --randomize: range of a factor on each link's rate, drawn per episode and link, LO,HI (default: the scenario's rates; ours)")
	queueRange := fs.String("queue-range", "", "with --randomize: range of a factor on the bottleneck queue's limit, drawn per episode, LO,HI (default: the scenario's limit; ours)")
	bgRange := fs.String("background-range", "", "with --randomize: range of the SATCOM background scale, LO,HI (default 0.8,1.2)")
	bgExcl := fs.String("background-exclude", "", "with --randomize: background scales LO,HI never drawn")
	queueCost := fs.Float64("queue-cost", 0, "compact reward's cost of a second at twice the nominal RTT, s (default 0.2)")
	linkShaping := fs.Bool("link-shaping", false, "compact reward: credit delivered bytes at the current link's rate instead of 50 KB/s (a step using the whole link scores 0)")
	capWin := fs.Duration("capacity-window", 0, "compact variant: the capacity estimate's max-filter window behind the BDP estimate, a multiple of 100ms up to 10s (default 2s)")
	rttFeature := fs.Bool("rtt-feature", false, "compact variant: add the windowed minimum RTT to each step's features (9 instead of 8), so a standing queue that inflates the BDP estimate can be told apart")
	windowCap := fs.String("window-cap", "", "compact variant: the largest window the agent may set, e.g. 200KB, from 15KB to 10MB (default: the paper's 150KB)")
	bdpSpan := fs.Float64("bdp-span", 0, "compact variant, --action bdp: the action's span, window = BDP estimate * 2^(span*a), from 1 to 8 (default 2: a quarter to four estimates)")
	rttWin := fs.Duration("min-rtt-window", 0, "compact variant: the minimum-RTT filter's window behind the BDP estimate, a multiple of 100ms up to 10s (default 5s)")
	demo := fs.String("demo", "", "learn from demonstrations (ours, not the paper's): bdp, a sender holding the current link's nominal bandwidth-delay product, acts for the first --demo-steps steps")
	demoSteps := fs.Int64("demo-steps", 0, "with --demo: environment steps the demonstrator acts for")
	demoNoise := fs.Float64("demo-noise", 0, "with --demo: standard deviation of Gaussian noise added to each demonstrated action")
	demoScale := fs.Float64("demo-scale", 0, "with --demo: the demonstrator's window in nominal bandwidth-delay products, within the 150 KB cap (default 1)")
	bcWeight := fs.Float64("bc-weight", 0, "with --demo: weight of a behaviour-cloning term towards the demonstrator's action in the actor's loss, for the whole of training, relative to the critic's scale (TD3+BC: 0.4)")
	valEvery := fs.Int64("validate-every", 0, "evaluate the policy every this many steps (and at the end) on --validate-runs held-out transfers at --loss, and write the snapshot with the lowest --validate-by score to OUT, the last to OUT's stem + -last (ours, not the paper's; 0: write the last)")
	valBy := fs.String("validate-by", marlin.ValidateByTime, "with --validate-every: time (mean transfer time) or goals (the larger of time / (0.87 x CUBIC's) and retransmissions / (0.23 x CUBIC's) on the same transfers, the paper's agent's goals)")
	var valSets stringList
	fs.Var(&valSets, "validate-set", "with --validate-every: override a field of the validation transfers' scenario only (dotted.path=value, repeatable), e.g. bottleneck.schedule.0.at=7s")
	valOn := fs.String("validate-on", marlin.ValidateOnPaper, "with --validate-every: the validation transfers' timeline: paper (the switch at 10 s, as eval's) or training (each transfer's switch time and background scale drawn from the training ranges, as --randomize draws them)")
	valRuns := fs.Int("validate-runs", 20, "with --validate-every: transfers per validation (seeds 2000001 on, disjoint from eval's and from its median-seed choice)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("marlin train takes no arguments, got %q", pos)
	}
	if *valEvery < 0 || *valRuns < 1 {
		return usagef("--validate-every must be >= 0 and --validate-runs >= 1, got %d and %d", *valEvery, *valRuns)
	}
	if len(valSets) > 0 && *valEvery == 0 {
		return usagef("--validate-set needs --validate-every")
	}
	if *valBy != marlin.ValidateByTime && *valBy != marlin.ValidateByGoals {
		return usagef("--validate-by must be %s or %s, got %q", marlin.ValidateByTime, marlin.ValidateByGoals, *valBy)
	}
	switch *valOn {
	case marlin.ValidateOnPaper:
	case marlin.ValidateOnTraining:
		if *valEvery == 0 || !*randomize {
			return usagef("--validate-on %s needs --validate-every and --randomize", *valOn)
		}
	default:
		return usagef("--validate-on must be %s or %s, got %q", marlin.ValidateOnPaper, marlin.ValidateOnTraining, *valOn)
	}
	var tl marlin.Timeline
	for _, f := range []struct{ name, v string }{{"switch-range", *switchRange}, {"switch-exclude", *switchExcl},
		{"background-range", *bgRange}, {"background-exclude", *bgExcl}, {"delay-range", *delayRange}, {"rate-range", *rateRange}, {"queue-range", *queueRange}} {
		if f.v == "" {
			continue
		}
		if err := tl.SetRange(f.name, f.v); err != nil {
			return usagef("--%s: %v", f.name, err)
		}
		if !*randomize {
			return usagef("--switch-range, --switch-exclude, --background-range, --background-exclude, --delay-range, --rate-range and --queue-range need --randomize")
		}
	}
	if err := tl.Check(); err != nil {
		return usagef("%v", err)
	}
	if *entCoef < 0 || !(*entInit > 0) || *queueCost < 0 || *nstep < 1 || *frameSkip < 1 {
		return usagef("--ent-coef and --queue-cost must be >= 0, --ent-coef-init > 0, --n-step and --frame-skip >= 1")
	}
	switch {
	case *demo != "" && *demo != marlin.DemoBDP:
		return usagef("--demo must be %s, got %q", marlin.DemoBDP, *demo)
	case !(*bcWeight >= 0) || math.IsInf(*bcWeight, 1) || *bcWeight > 0 && *demo == "":
		return usagef("--bc-weight must be finite and >= 0, with --demo")
	case (*demo != "") != (*demoSteps > 0 || *bcWeight > 0) || *demoSteps < 0:
		return usagef("--demo goes with a positive --demo-steps or --bc-weight, and --demo-steps with --demo")
	case !(*demoNoise >= 0) || *demoNoise > 0 && *demo == "":
		return usagef("--demo-noise must be >= 0, with --demo")
	case *demoScale != 0 && (!(*demoScale > 0 && *demoScale <= marlin.MaxDemoScale) || *demo == ""):
		return usagef("--demo-scale must be in (0, %g], with --demo", marlin.MaxDemoScale)
	}
	te := *targetEnt
	if te == 0 {
		te = rl.Zero // an explicit 0, not the default
	}
	if *steps < 1 || *envs < 1 || *batch < 1 || *gsteps < 1 {
		return usagef("--steps, --envs, --batch and --gradient-steps must be positive")
	}
	if !(*loss >= 0 && *loss < 1) {
		return usagef("--loss must be in [0, 1), got %g", *loss)
	}
	if !(*gamma > 0 && *gamma < 1) {
		return usagef("--gamma must be in (0, 1), got %g", *gamma)
	}
	if *variant != marlin.VariantPaper && *variant != marlin.VariantCompact {
		return usagef("--variant must be %s or %s, got %q", marlin.VariantPaper, marlin.VariantCompact, *variant)
	}
	for _, w := range []struct {
		name string
		d    time.Duration
	}{{"capacity-window", *capWin}, {"min-rtt-window", *rttWin}} {
		switch {
		case w.d != 0 && *variant != marlin.VariantCompact:
			return usagef("--%s needs --variant compact", w.name)
		case w.d != 0 && !marlin.ValidFilterWindow(w.d):
			return usagef("--%s must be a multiple of %v up to %v, got %v", w.name, marlin.StepInterval, marlin.MaxFilterWindow, w.d)
		}
	}
	switch *action {
	case "", marlin.ActionLinear, marlin.ActionLog2:
	case marlin.ActionBDP:
		if *variant != marlin.VariantCompact {
			return usagef("--action bdp needs --variant compact")
		}
	default:
		return usagef("--action must be linear, log2 or bdp, got %q", *action)
	}
	switch {
	case *bdpSpan != 0 && (*variant != marlin.VariantCompact || *action != "" && *action != marlin.ActionBDP):
		return usagef("--bdp-span needs --variant compact and its bdp action")
	case *bdpSpan != 0 && !marlin.ValidBDPSpan(*bdpSpan):
		return usagef("--bdp-span must be from 1 to %g, got %g", marlin.MaxBDPSpan, *bdpSpan)
	case *rttFeature && *variant != marlin.VariantCompact:
		return usagef("--rtt-feature needs --variant compact")
	}
	var wcap units.Bytes
	if *windowCap != "" {
		if wcap, err = marlin.ParseWindowCap(*windowCap); err != nil {
			return usagef("--window-cap %v", err)
		}
		if *variant != marlin.VariantCompact {
			return usagef("--window-cap needs --variant compact (the paper's agent keeps the paper's %v)", marlin.WindowCap)
		}
	}
	base, err := marlinScenario(*scn, sets)
	if err != nil {
		return err
	}
	tr, err := startTraining(*out, *ck, *csvPath, *resume, *force, stderr)
	if err != nil {
		return err
	}
	cmdline := "cclab marlin train " + strings.Join(args, " ")
	fmt.Fprintf(stderr, "training %d steps on %d environments (checkpoint %s, learning curve %s)\n", *steps, *envs, tr.ck, tr.csvPath)
	stem := strings.TrimSuffix(*out, filepath.Ext(*out))
	var valCSV io.Writer // nil without validation: Train writes no rows
	if *valEvery > 0 {
		valPath := stem + "-validation.csv"
		f, err := trainlog.OpenFile(valPath, *resume)
		if err != nil {
			tr.curve.Close()
			return err
		}
		defer f.Close()
		valCSV = f
		fmt.Fprintf(stderr, "validating every %d steps on %d transfers (%s)\n", *valEvery, *valRuns, valPath)
	}
	res, err := marlin.Train(ctx, marlin.TrainConfig{
		Base: base, Steps: *steps, Envs: *envs, Seed: *seed, Loss: *loss, Randomize: *randomize, Bulk: *bulk,
		BatchSize: *batch, GradientSteps: *gsteps, Gamma: *gamma,
		Checkpoint: tr.ck, CheckpointEvery: *ckEvery, Resume: *resume,
		CSV: tr.curve, Progress: tr.progress, Command: cmdline, Action: *action, Variant: *variant,
		FrameSkip: *frameSkip, NStep: *nstep, EntCoef: *entCoef, EntCoefInit: *entInit, TargetEntropy: te,
		NoObsNorm: !*obsNorm, Timeline: tl,
		QueueCost: *queueCost, LinkShaping: *linkShaping, Demo: *demo, DemoSteps: *demoSteps, DemoNoise: *demoNoise, DemoScale: *demoScale, BCWeight: *bcWeight,
		CapacityWindow: *capWin, MinRTTWindow: *rttWin, BDPSpan: *bdpSpan, RTTFeature: *rttFeature, WindowCap: wcap,
		ValidateEvery: *valEvery, ValidateRuns: *valRuns, ValidateBy: *valBy, ValidateSets: valSets, ValidateOn: *valOn, ValidationCSV: valCSV,
	})
	if err != nil {
		return tr.finish(err, nil, 0, 0, curveFigure{}, stdout, stderr)
	}
	if err := tr.finish(nil, res.Policy, res.Steps, res.Run.WallSeconds,
		curveFigure{"MARLIN training: mean episode return", "return per episode (at most 200 steps)", "SAC"}, stdout, stderr); err != nil || res.Last == nil {
		return err
	}
	last := stem + "-last" + filepath.Ext(*out)
	if err := res.Last.Save(last); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "validation chose the snapshot of step %s (score %s by %s); the last snapshot is in %s\n",
		res.Policy.Meta.Extra["selected_step"], res.Policy.Meta.Extra["validation_score"], *valBy, last)
	return nil
}

func runMarlinEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("marlin eval", stderr)
	pol := fs.String("policy", "", "trained policy file, or comma-separated files of independently trained seeds of one configuration, or a directory of them (its *.policy files) (default: the policy built into cclab for --variant)")
	variant := fs.String("variant", "paper", "without --policy: which built-in policy, paper (the paper's agent) or compact (our variant); with --policy the files' own")
	valRuns := fs.Int("validation-runs", 20, "with several policies: validation transfers per policy for choosing the median seed (0: skip the choice)")
	runs := fs.Int("runs", 100, "transfers per scheme and loss level")
	seed := fs.Uint64("seed", 0, "seed offset of the runs")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	scn := fs.String("scenario", "", "evaluation scenario (default: built-in satcom-uhf)")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write results, plots and report.html to this directory")
	unseen := fs.Bool("unseen", true, "also evaluate on conditions never trained on")
	heldOut := fs.Bool("held-out", false, "also evaluate on the held-out conditions (docs/marlin.md), each written down before any policy was evaluated on it: switch at 3 s, background x2, SATCOM RTT 600 ms, a faster or longer UHF link after a switch at 5 s; then queue 50 packets, a 128 kbit/s UHF link after a switch at 5 s, SATCOM 2 Mbit/s, SATCOM RTT 1.6 s, switch at 7 s with the background x1.25; then the mice doubled, UDP elephants at 400 kbit/s, 1% loss on SATCOM, a switch at 12 s to UHF at 384 kbit/s with a 400 ms RTT, queue 200 packets, SATCOM at 1.5 Mbit/s with a 1.4 s RTT")
	timeline := fs.String("timeline", "paper", "the loss levels' timeline: paper (the scenario's switch and background) or training (each run's switch time and background scale drawn from the training ranges: "+marlin.TrainingTimeline().String()+")")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("marlin eval takes no arguments, got %q", pos)
	}
	if *runs < 1 {
		return usagef("--runs must be at least 1")
	}
	if *jobs < 0 {
		return usagef("--jobs must be 0 (all cores) or more, got %d", *jobs)
	}
	if *valRuns < 0 {
		return usagef("--validation-runs must be non-negative (0: skip the choice of the median seed), got %d", *valRuns)
	}
	var tl marlin.Timeline
	switch *timeline {
	case "paper":
	case "training":
		tl = marlin.TrainingTimeline()
	default:
		return usagef("--timeline must be paper or training, got %q", *timeline)
	}
	base, err := marlinScenario(*scn, sets)
	if err != nil {
		return err
	}
	var pols []*policy.Policy
	if *pol == "" {
		shipped := marlin.ShippedPolicy
		switch *variant {
		case marlin.VariantPaper:
		case marlin.VariantCompact:
			shipped = marlin.ShippedCompactPolicy
		default:
			return usagef("--variant must be %s or %s, got %q", marlin.VariantPaper, marlin.VariantCompact, *variant)
		}
		p, err := shipped()
		if err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
		pols = append(pols, p)
	}
	files, err := policyFiles(*pol)
	if err != nil {
		return usagef("--policy: %v", err)
	}
	for _, f := range files {
		p, err := policy.Load(f)
		if err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
		if err := marlin.CheckPolicy(p); err != nil {
			return fmt.Errorf("--policy %s: %w", f, err)
		}
		if len(pols) > 0 && marlin.PolicyVariant(p) != marlin.PolicyVariant(pols[0]) {
			return fmt.Errorf("--policy %s: variant %s, the first file's is %s: evaluate one configuration's seeds at a time", f, marlin.PolicyVariant(p), marlin.PolicyVariant(pols[0]))
		}
		pols = append(pols, p)
	}
	if len(files) > 1 {
		if err := distinctSeeds("--policy", files, pols); err != nil {
			return err
		}
	}
	cfg := marlin.EvalConfig{Base: base, Runs: *runs, Policies: pols, Seed: *seed, Jobs: *jobs, Timeline: tl, HeldOut: *heldOut}
	var sel *rl.Selection
	if len(pols) > 1 && *valRuns > 0 {
		s, err := marlin.SelectPolicy(ctx, cfg, pols, *valRuns)
		if err != nil {
			return err
		}
		sel = &s
		fmt.Fprintf(stderr, "median seed on %d validation transfers each: policy %d (%s), scores %.2f s\n", *valRuns, s.Index+1, files[s.Index], s.Scores)
	}
	bar := progress.NewRuns(stderr, "marlin eval")
	cfg.Progress = bar.Update
	res, err := marlin.EvaluateAll(ctx, cfg, *unseen)
	bar.Finish()
	if err != nil {
		return err
	}
	res.Selected = sel
	if *out != "" {
		if err := res.WriteDir(*out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, res, res.WriteText)
}

func runMarlinEnsemble(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("marlin ensemble", stderr)
	out := fs.String("out", "", "ensemble policy file to write (required)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if len(pos) < 2 || len(pos) > policy.MaxMembers {
		return usagef("want 2 to %d policy files of independently trained seeds, got %d", policy.MaxMembers, len(pos))
	}
	members := make([]*policy.Policy, len(pos))
	for i, f := range pos {
		if members[i], err = policy.Load(f); err != nil {
			return err
		}
	}
	e, err := marlin.Ensemble(members, "cclab marlin ensemble "+strings.Join(args, " "))
	if err != nil {
		return err
	}
	if err := e.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ensemble of %d policies (seeds %s, variant %s) written to %s\n", len(pos), e.Meta.Extra[policy.ExtraSeeds], marlin.PolicyVariant(e), *out)
	return nil
}
