package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/marlin"
)

func init() {
	register(&command{name: "marlin train", summary: "train the MARLIN agent (SAC) on the SATCOM-to-UHF scenario", run: runMarlinTrain})
	register(&command{name: "marlin eval", summary: "evaluate MARLIN against CUBIC, Mockets, a random agent and the ideal (paper figures 3 and 4)", run: runMarlinEval})
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
	action := fs.String("action", "linear", "action parametrisation: linear (the paper's, w(1+a)) or log2 (ours, w*2^a)")
	ck := fs.String("checkpoint", "", "checkpoint file (default: OUT.ckpt)")
	ckEvery := fs.Duration("checkpoint-every", 0, "checkpoint interval (default 5m)")
	resume := fs.Bool("resume", false, "continue from the checkpoint")
	csvPath := fs.String("csv", "", "learning-curve CSV (default: OUT.csv)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("marlin train takes no arguments, got %q", pos)
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
	base, err := marlinScenario(*scn, sets)
	if err != nil {
		return err
	}
	tr, err := startTraining(*out, *ck, *csvPath, *resume, stderr)
	if err != nil {
		return err
	}
	cmdline := "cclab marlin train " + strings.Join(args, " ")
	fmt.Fprintf(stderr, "training %d steps on %d environments (checkpoint %s, learning curve %s)\n", *steps, *envs, tr.ck, tr.csvPath)
	res, err := marlin.Train(ctx, marlin.TrainConfig{
		Base: base, Steps: *steps, Envs: *envs, Seed: *seed, Loss: *loss, Randomize: *randomize, Bulk: *bulk,
		BatchSize: *batch, GradientSteps: *gsteps, Gamma: *gamma,
		Checkpoint: tr.ck, CheckpointEvery: *ckEvery, Resume: *resume,
		CSV: tr.curve, Progress: tr.progress, Command: cmdline, Action: *action,
	})
	if err != nil {
		return tr.finish(err, nil, 0, 0, curveFigure{}, stdout, stderr)
	}
	return tr.finish(nil, res.Policy, res.Steps, res.Run.WallSeconds,
		curveFigure{"MARLIN training: mean episode return", "return per episode (at most 200 steps)", "SAC"}, stdout, stderr)
}

func runMarlinEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("marlin eval", stderr)
	pol := fs.String("policy", "", "trained policy file, or comma-separated files of independently trained seeds (default: the policy built into cclab)")
	valRuns := fs.Int("validation-runs", 20, "with several policies: validation transfers per policy for choosing the median seed")
	runs := fs.Int("runs", 100, "transfers per scheme and loss level")
	seed := fs.Uint64("seed", 0, "seed offset of the runs")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	scn := fs.String("scenario", "", "evaluation scenario (default: built-in satcom-uhf)")
	var sets stringList
	fs.Var(&sets, "set", "override a scenario field (dotted.path=value)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write results, plots and report.html to this directory")
	unseen := fs.Bool("unseen", true, "also evaluate on conditions never trained on")
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
	base, err := marlinScenario(*scn, sets)
	if err != nil {
		return err
	}
	var pols []*policy.Policy
	if *pol == "" {
		p, err := marlin.ShippedPolicy()
		if err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
		pols = append(pols, p)
	}
	for _, f := range strings.Split(*pol, ",") {
		if f == "" {
			continue
		}
		p, err := policy.Load(f)
		if err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
		if err := p.Check(marlin.PolicySpaces()); err != nil {
			return fmt.Errorf("--policy %s: %w", f, err)
		}
		pols = append(pols, p)
	}
	cfg := marlin.EvalConfig{Base: base, Runs: *runs, Policies: pols, Seed: *seed, Jobs: *jobs}
	var sel *marlin.Selection
	if len(pols) > 1 && *valRuns > 0 {
		i, scores, err := marlin.SelectPolicy(ctx, cfg, pols, *valRuns)
		if err != nil {
			return err
		}
		sel = &marlin.Selection{Index: i, Scores: scores, Runs: *valRuns}
		fmt.Fprintf(stderr, "median seed on %d validation transfers each: policy %d (%s), scores %.2f s\n", *valRuns, i+1, strings.Split(*pol, ",")[i], scores)
	}
	bar := newProgress(stderr, "marlin eval")
	cfg.Progress = bar.update
	res, err := marlin.EvaluateAll(ctx, cfg, *unseen)
	bar.finish()
	if err != nil {
		return err
	}
	res.Selected = sel
	if *out != "" {
		if err := writeMarlinOutputs(*out, res); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, res, func(w io.Writer) { printMarlin(w, res) })
}

func printMarlin(w io.Writer, r *marlin.Report) {
	fmt.Fprintf(w, "MARLIN evaluation: %d transfers of %s per scheme and loss level; policy %s (%d steps, %.0f s of training)\n\n", r.Runs, r.Bytes, r.Policy, r.PolicySteps, r.TrainingWallS)
	table := func(rows []marlin.Row) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\tUHF loss\ttransfer time s\tretransmissions\tRTI\tunfinished\t")
		for _, x := range rows {
			fmt.Fprintf(tw, "%s\t%.0f%%\t%.2f ±%.2f\t%.1f ±%.1f\t%.3f ±%.3f\t%d\t\n", x.Scheme, 100*x.Loss, x.TransferTime, x.TransferTimeCI, x.Retrans, x.RetransCI, x.RTI, x.RTICI, x.Unfinished)
		}
		tw.Flush()
	}
	table(r.Results)
	if g := r.Goals; g != nil {
		fmt.Fprintf(w, "\nAt 3%%: MARLIN/CUBIC transfer time %.2f (goal <= 0.70, paper 0.87), retransmissions %.2f (goal <= 0.20, paper 0.23), MARLIN/Mockets time %.2f (goal <= 1.4); lowest RTI at every loss level: %v\n",
			g.TimeVsCubic, g.RetransVsCubic, g.TimeVsMockets, g.LowestRTI)
	}
	for _, u := range r.Unseen {
		fmt.Fprintf(w, "\nUnseen condition: %s\n", u.Name)
		table(u.Results)
	}
}

func writeMarlinOutputs(dir string, r *marlin.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "marlin.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	figs, err := marlinFigures(r)
	if err != nil {
		return err
	}
	rep := report.New("MARLIN evaluation")
	rep.Paragraph(fmt.Sprintf("%d transfers of %s per scheme and loss level on the SATCOM-to-UHF scenario; policy %s.", r.Runs, r.Bytes, r.Policy))
	for _, f := range figs {
		if _, err := plot.SaveAll(f.fig, filepath.Join(dir, f.name), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		rep.Plot(f.caption, f.fig)
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

type namedFigure struct {
	name, caption string
	fig           plot.Figure
}

// marlinFigures draws the paper's figures 3 (transfer time and RTI per
// loss level) and 4 (retransmissions at the highest loss).
func marlinFigures(r *marlin.Report) ([]namedFigure, error) {
	var losses []float64
	schemes := []marlin.Scheme{}
	seen := map[marlin.Scheme]bool{}
	for _, x := range r.Results {
		if !seen[x.Scheme] {
			seen[x.Scheme] = true
			schemes = append(schemes, x.Scheme)
		}
		found := false
		for _, l := range losses {
			found = found || l == x.Loss
		}
		if !found {
			losses = append(losses, x.Loss)
		}
	}
	get := func(s marlin.Scheme, l float64) (marlin.Row, bool) {
		for _, x := range r.Results {
			if x.Scheme == s && x.Loss == l {
				return x, true
			}
		}
		return marlin.Row{}, false
	}
	groups := make([]string, len(losses))
	for i, l := range losses {
		groups[i] = fmt.Sprintf("%.0f%% UHF loss", 100*l)
	}
	cats := make([]string, len(schemes))
	for i, s := range schemes {
		cats[i] = string(s)
	}
	bars := func(v func(marlin.Row) plot.Estimate) [][]plot.Estimate {
		out := make([][]plot.Estimate, len(losses))
		for i, l := range losses {
			out[i] = make([]plot.Estimate, len(schemes))
			for j, s := range schemes {
				if x, ok := get(s, l); ok {
					out[i][j] = v(x)
				} else {
					out[i][j] = plot.Estimate{Mean: math.NaN()}
				}
			}
		}
		return out
	}
	tt := plot.Bars{Title: "Mean transfer time of 600 KB (95% CI)", Y: plot.Axis{Label: "transfer time (s)", IncludeZero: true},
		Groups: groups, Categories: cats, Values: bars(func(x marlin.Row) plot.Estimate { return plot.Estimate{Mean: x.TransferTime, CI: x.TransferTimeCI} })}
	rti := plot.Bars{Title: "RTT Transition Impact (95% CI; 0 is flawless)", Y: plot.Axis{Label: "RTI", IncludeZero: true},
		Groups: groups, Categories: cats, Values: bars(func(x marlin.Row) plot.Estimate { return plot.Estimate{Mean: x.RTI, CI: x.RTICI} })}
	hi := losses[len(losses)-1]
	var rcats []string
	var rvals []plot.Estimate
	for _, s := range schemes {
		if x, ok := get(s, hi); ok {
			rcats = append(rcats, string(s))
			rvals = append(rvals, plot.Estimate{Mean: x.Retrans, CI: x.RetransCI})
		}
	}
	rx := plot.Bars{Title: fmt.Sprintf("Retransmissions per transfer at %.0f%% UHF loss (95%% CI)", 100*hi), Y: plot.Axis{Label: "retransmissions", IncludeZero: true},
		Groups: []string{fmt.Sprintf("%.0f%% loss", 100*hi)}, Categories: rcats, Values: [][]plot.Estimate{rvals}}
	return []namedFigure{
		{"fig3_transfer_time", "Figure 3 (left): mean transfer time", tt},
		{"fig3_rti", "Figure 3 (right): RTT Transition Impact", rti},
		{"fig4_retransmissions", "Figure 4: retransmissions", rx},
	}, nil
}
