package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/papers/deepcc/tuner"
	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
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
		CSV: tr.curve, Progress: tr.progress, Command: cmdline,
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
	pol := fs.String("policy", deepcc.ShippedPolicyPath, "trained policy file (the default is built into cclab)")
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
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
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
	p, err := deepcc.LoadPolicy(*pol)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if err := p.Check(deepcc.PolicySpaces()); err != nil {
		return fmt.Errorf("--policy %s: %w", *pol, err)
	}
	bar := newProgress(stderr, "deepcc eval")
	rep, err := deepcc.Evaluate(ctx, deepcc.EvalConfig{
		Policy: p, Traces: deepcc.TracePaths(*traceDir, names), Classic: splitList(*classic),
		Duration: *duration, Runs: *runs, Delay: *delay, Queue: *queue, NoTargets: *noTargets,
		TunerStart: &start, Tuner: tuner.Config{K: *tk, LearningRate: *tlr, RawSlopes: *traw}, DelayWindow: *tdw, TunerMargin: *tm,
		Seed: *seed, Jobs: *jobs, Progress: bar.update,
	})
	bar.finish()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeDeepCCOutputs(*out, rep); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, rep, func(w io.Writer) { printDeepCC(w, rep) })
}

func printDeepCC(w io.Writer, r *deepcc.Report) {
	fmt.Fprintf(w, "DeepCC evaluation: %d runs of %.0f s per held-out trace (one-way delay %.0f ms, %d-packet DropTail queue)\npolicy: %s, %d steps, %.0f s of training\n",
		r.Runs, r.Duration, r.DelayMs, r.Queue, r.Policy, r.PolicySteps, r.TrainingWallS)
	for _, t := range r.Traces {
		fmt.Fprintf(w, "\n%s (mean capacity %.2f Mbit/s over the runs)\n", t.Name, t.CapacityMbps)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\tgoal\tthroughput Mbit/s\tp95 qdelay ms\tmean qdelay ms\tloss %\t")
		for _, s := range t.Schemes {
			g := ""
			if s.Goal != nil {
				g = s.Goal.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f ±%.2f\t%.1f ±%.1f\t%.1f\t%.2f\t\n", s.Scheme, g, s.ThroughputMbps, s.ThroughputCI, s.DelayP95Ms, s.DelayP95CI, s.DelayMeanMs, 100*s.Loss)
		}
		tw.Flush()
		if c := t.HighThroughput; c != nil {
			fmt.Fprintf(w, "high-throughput mode (%s) vs CUBIC: %.2fx throughput, %.0f%% lower p95 queueing delay\n", c.Goal, c.ThroughputRatio, 100*c.DelayReduction)
		}
		if c := t.Comparable; c != nil {
			fmt.Fprintf(w, "lowest delay at >= %.0f%% of CUBIC's throughput: %s, %.2fx throughput, %.0f%% lower p95 queueing delay\n", 100*deepcc.ComparableShare, c.Goal, c.ThroughputRatio, 100*c.DelayReduction)
		}
	}
	if len(r.TCR) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTarget completion ratio (targets per trace: throughput >= %v x mean capacity, p95 queueing delay <= %v ms, loss <= %.0f%%; %d runs each)\n",
		deepcc.TargetThroughputShares, deepcc.TargetDelaysMs, 100*deepcc.TargetLoss, r.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "scheme\t")
	for _, t := range r.Traces {
		fmt.Fprintf(tw, "%s\t", t.Name)
	}
	fmt.Fprintln(tw, "all\t")
	for i, s := range r.TCR {
		fmt.Fprintf(tw, "%s\t", s.Scheme)
		for _, t := range r.Traces {
			fmt.Fprintf(tw, "%s\t", t.TCR[i].Completion)
		}
		fmt.Fprintf(tw, "%s\t\n", s.Completion)
	}
	fmt.Fprint(tw, "(met by any scheme)\t")
	for _, t := range r.Traces {
		fmt.Fprintf(tw, "%s\t", t.Reachable)
	}
	fmt.Fprintf(tw, "%s\t\n", r.Reachable)
	tw.Flush()
}

func writeDeepCCOutputs(dir string, r *deepcc.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "deepcc.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	rep := report.New("DeepCC evaluation")
	rep.Paragraph(fmt.Sprintf("%d runs of %.0f s per held-out cellular trace (one-way delay %.0f ms, %d-packet DropTail queue). Policy: %s, %d steps, %.0f s of training. Evaluation wall time %.0f s.",
		r.Runs, r.Duration, r.DelayMs, r.Queue, r.Policy, r.PolicySteps, r.TrainingWallS, r.WallSeconds))
	rep.Heading("Multi-objective evaluation")
	rep.Paragraph("Throughput against 95th-percentile queueing delay (Pantheon style, logarithmic delay axis reversed: better is up and to the right). DeepCC runs with five fixed goals, from high-throughput mode g1 to low-delay mode g5. Points are means over the runs (different windows of the trace); the tables give 95% confidence intervals.")
	for _, t := range r.Traces {
		fig := deepccPantheon(t)
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "pantheon_"+fileStem(t.Name)), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		rep.Subheading(t.Name)
		rep.PlotAs(fmt.Sprintf("%s (mean capacity %.2f Mbit/s).", t.Name, t.CapacityMbps), "svg", fig)
		rows := [][]any{}
		for _, s := range t.Schemes {
			g := ""
			if s.Goal != nil {
				g = s.Goal.String()
			}
			rows = append(rows, []any{s.Scheme, g, report.MeanCI{Mean: s.ThroughputMbps, CI: s.ThroughputCI}, report.MeanCI{Mean: s.DelayP95Ms, CI: s.DelayP95CI}, s.DelayMeanMs, 100 * s.Loss})
		}
		rep.Table(t.Name, []string{"scheme", "goal", "throughput (Mbit/s)", "p95 queueing delay (ms)", "mean queueing delay (ms)", "loss (%)"}, rows)
		var notes []string
		if c := t.HighThroughput; c != nil {
			notes = append(notes, fmt.Sprintf("High-throughput mode (%s) vs CUBIC: %.2fx throughput, %.0f%% lower p95 queueing delay.", c.Goal, c.ThroughputRatio, 100*c.DelayReduction))
		}
		if c := t.Comparable; c != nil {
			notes = append(notes, fmt.Sprintf("Lowest delay at >= %.0f%% of CUBIC's throughput: %s, %.2fx throughput, %.0f%% lower p95 queueing delay.", 100*deepcc.ComparableShare, c.Goal, c.ThroughputRatio, 100*c.DelayReduction))
		}
		if len(notes) > 0 {
			rep.List(notes...)
		}
	}
	if len(r.TCR) > 0 {
		rep.Heading("Target completion")
		rep.Paragraph(fmt.Sprintf("Targets per trace: throughput >= %v of the trace's mean capacity, 95th-percentile queueing delay <= %v ms, loss <= %.0f%%. DeepCC (tuned) pursues each target with the online goal tuner, from goal %v (bounds tightened by %.0f%%); every other scheme's runs are judged against every target. A target counts as met when the whole run's throughput, 95th-percentile queueing delay and loss are within its bounds.",
			deepcc.TargetThroughputShares, deepcc.TargetDelaysMs, 100*deepcc.TargetLoss, r.TunerStart, 100*r.TunerMargin))
		fig := deepccTCRBars(r)
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "tcr"), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		rep.PlotAs("Target completion ratio per trace and overall.", "svg", fig)
		header := []string{"scheme"}
		for _, t := range r.Traces {
			header = append(header, t.Name)
		}
		header = append(header, "all")
		var rows [][]any
		for i, s := range r.TCR {
			row := []any{s.Scheme}
			for _, t := range r.Traces {
				row = append(row, t.TCR[i].Completion.String())
			}
			rows = append(rows, append(row, s.Completion.String()))
		}
		reach := []any{"(met by any scheme)"}
		for _, t := range r.Traces {
			reach = append(reach, t.Reachable.String())
		}
		rows = append(rows, append(reach, r.Reachable.String()))
		rep.Table("Target completion ratio", header, rows)
		for _, t := range r.Traces {
			if t.Trajectory == nil {
				continue
			}
			fig := deepccTrajectory(t)
			if _, err := plot.SaveAll(fig, filepath.Join(dir, "tuner_"+fileStem(t.Name)), "png", "svg"); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			rep.Plot(fmt.Sprintf("The tuner on %s pursuing %s: goal weights and the measurements of each tuning interval (four RTTs).", t.Name, t.TrajTarget), fig)
		}
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// fileStem turns a trace name into a file-name part.
func fileStem(name string) string {
	return strings.NewReplacer(".", "_", " ", "_", "/", "_").Replace(name)
}

// deepccPantheon draws one trace's throughput vs p95 queueing delay
// scatter: one series per classic controller, one for DeepCC's goals.
func deepccPantheon(t deepcc.TraceResult) plot.Scatter {
	var series []plot.PointSeries
	dcc := plot.PointSeries{Name: "DeepCC (goals g1..g5)"}
	for _, s := range t.Schemes {
		// Means over the runs, without error bars: the runs are different
		// windows of the trace, so their spread is the trace's variety
		// (the tables give the confidence intervals).
		pt := plot.Point{X: s.DelayP95Ms, Y: s.ThroughputMbps}
		if s.Goal != nil {
			pt.Label = strings.TrimPrefix(s.Scheme, "deepcc-")
			dcc.Points = append(dcc.Points, pt)
			continue
		}
		series = append(series, plot.PointSeries{Name: s.Scheme, Points: []plot.Point{pt}})
	}
	series = append(series, dcc)
	fig := plot.Pantheon(fmt.Sprintf("%s: throughput vs 95th-percentile queueing delay (mean of %d runs)", t.Name, len(t.Windows)), series)
	// Delays span two decades (CUBIC fills the queue); Pantheon's own
	// plots use a logarithmic delay axis too.
	fig.X.Log = true
	return fig
}

// deepccTCRBars draws the completion ratio per trace and overall.
func deepccTCRBars(r *deepcc.Report) plot.Bars {
	groups := []string{}
	for _, t := range r.Traces {
		groups = append(groups, t.Name)
	}
	groups = append(groups, "all traces")
	cats := []string{}
	for _, s := range r.TCR {
		cats = append(cats, s.Scheme)
	}
	vals := make([][]plot.Estimate, len(groups))
	for gi := range groups {
		vals[gi] = make([]plot.Estimate, len(cats))
		for ci := range cats {
			c := r.TCR[ci].Completion
			if gi < len(r.Traces) {
				c = r.Traces[gi].TCR[ci].Completion
			}
			vals[gi][ci] = plot.Estimate{Mean: 100 * c.Ratio}
		}
	}
	return plot.Bars{Title: "Target completion ratio", Y: plot.Axis{Label: "targets met (%)", IncludeZero: true, Min: 0, Max: 100},
		Groups: groups, Categories: cats, Values: vals}
}

// deepccTrajectory draws a tuned run: goal weights, throughput and delay per
// tuning interval, with the target's bounds.
func deepccTrajectory(t deepcc.TraceResult) plot.Stacked {
	n := len(t.Trajectory)
	ts := make([]float64, n)
	w := [3][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	thr, d := make([]float64, n), make([]float64, n)
	for i, p := range t.Trajectory {
		ts[i] = p.T
		for k := range 3 {
			w[k][i] = p.Goal[k]
		}
		thr[i], d[i] = p.Measured.ThroughputMbps, p.Measured.DelayMs
	}
	flat := func(v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	tg := t.TrajTarget
	return plot.Stacked{
		Title: fmt.Sprintf("Online tuner on %s, target %s", t.Name, tg),
		X:     plot.Axis{Label: "time (s)"},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "goal weight", Min: 0, Max: 1}, Step: true, Series: []plot.Series{{Name: "throughput", X: ts, Y: w[0]}, {Name: "delay", X: ts, Y: w[1]}, {Name: "loss", X: ts, Y: w[2]}}},
			{Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: []plot.Series{{Name: "measured", X: ts, Y: thr}, {Name: "target (min)", X: ts, Y: flat(tg.MinThroughputMbps)}}},
			{Y: plot.Axis{Label: "p95 queueing delay (ms)", IncludeZero: true}, Series: []plot.Series{{Name: "measured", X: ts, Y: d}, {Name: "target (max)", X: ts, Y: flat(tg.MaxDelayMs)}}},
		},
	}
}
