package deepcc

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

// WriteDir writes the evaluation into dir: json, the figures (PNG
// and SVG: a Pantheon-style scatter per trace, the target completion
// ratios and the tuner's trajectories) and report.html.
func (r *Report) WriteDir(dir string) error {
	if err := report.WriteJSON(filepath.Join(dir, "deepcc.json"), r); err != nil {
		return err
	}
	rep := report.New("DeepCC evaluation")
	rep.Paragraph(fmt.Sprintf("%d runs of %.0f s per held-out cellular trace (one-way delay %.0f ms, %d-packet DropTail queue). Policy: %s, %d steps, %.0f s of training. Evaluation wall time %.0f s.",
		r.Runs, r.Duration, r.DelayMs, r.Queue, r.Policy, r.PolicySteps, r.TrainingWallS, r.WallSeconds))
	rep.Heading("Multi-objective evaluation")
	rep.Paragraph("Throughput against 95th-percentile queueing delay (Pantheon style, logarithmic delay axis reversed: better is up and to the right). DeepCC runs with five fixed goals, from high-throughput mode g1 to low-delay mode g5. Points are means over the runs (different windows of the trace); the tables give 95% confidence intervals.")
	for _, t := range r.Traces {
		fig := pantheonFigure(t)
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "pantheon_"+FileStem(t.Name)), "png", "svg"); err != nil {
			return err
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
			notes = append(notes, fmt.Sprintf("Lowest delay at >= %.0f%% of CUBIC's throughput: %s, %.2fx throughput, %.0f%% lower p95 queueing delay.", 100*ComparableShare, c.Goal, c.ThroughputRatio, 100*c.DelayReduction))
		}
		if len(notes) > 0 {
			rep.List(notes...)
		}
	}
	if len(r.TCR) > 0 {
		rep.Heading("Target completion")
		rep.Paragraph(fmt.Sprintf("Targets per trace: throughput >= %v of the trace's mean capacity, 95th-percentile queueing delay <= %v ms, loss <= %.0f%%. DeepCC (tuned) pursues each target with the online goal tuner, from goal %v (bounds tightened by %.0f%%); every other scheme's runs are judged against every target. A target counts as met when the whole run's throughput, 95th-percentile queueing delay and loss are within its bounds.",
			TargetThroughputShares, TargetDelaysMs, 100*TargetLoss, r.TunerStart, 100*r.TunerMargin))
		fig := tcrFigure(r)
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "tcr"), "png", "svg"); err != nil {
			return err
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
			fig := trajectoryFigure(t)
			if _, err := plot.SaveAll(fig, filepath.Join(dir, "tuner_"+FileStem(t.Name)), "png", "svg"); err != nil {
				return err
			}
			rep.Plot(fmt.Sprintf("The tuner on %s pursuing %s: goal weights and the measurements of each tuning interval (four RTTs).", t.Name, t.TrajTarget), fig)
		}
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// FileStem turns a trace name into a file-name part.
func FileStem(name string) string {
	return strings.NewReplacer(".", "_", " ", "_", "/", "_").Replace(name)
}

// pantheonFigure draws one trace's throughput vs p95 queueing delay
// scatter: one series per classic controller, one for DeepCC's goals.
func pantheonFigure(t TraceResult) plot.Scatter {
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

// tcrFigure draws the completion ratio per trace and overall.
func tcrFigure(r *Report) plot.Bars {
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

// trajectoryFigure draws a tuned run: goal weights, throughput and delay per
// tuning interval, with the target's bounds.
func trajectoryFigure(t TraceResult) plot.Stacked {
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
