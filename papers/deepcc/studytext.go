package deepcc

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

func fmtStat(s Stat, f string) string {
	if s.Mean == -1 {
		return "-"
	}
	if s.CI95 == 0 {
		return fmt.Sprintf(f, s.Mean)
	}
	return fmt.Sprintf(f+" ±"+f, s.Mean, s.CI95)
}

// WriteText prints the coexist study's tables.
func (r *CoexistReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC coexistence (Figs 11-12): %s, each case a tested flow beside %d competing flow(s), %d runs of %.0f s\n", r.Link.Name, r.Competitors, r.Runs, r.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\ttested Mbit/s\tper competitor Mbit/s\ttested/competitor\tJain\ttested p95 qdelay ms\tutilisation\t")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, fmtStat(c.TestedMbps, "%.2f"), fmtStat(c.CompetitorMbps, "%.2f"), fmtStat(c.Ratio, "%.2f"),
			fmtStat(c.Jain, "%.3f"), fmtStat(c.TestedP95Ms, "%.1f"), fmtStat(c.Utilization, "%.3f"))
	}
	tw.Flush()
}

func sharedSeries(r SharedResult) []plot.Series {
	var out []plot.Series
	for _, f := range r.Flows {
		out = append(out, plot.Series{Name: f.Label, X: r.T, Y: f.Mbps})
	}
	return out
}

// WriteDir writes the coexist study's figures and report.html into dir.
func (r *CoexistReport) WriteDir(dir string) error {
	rep := report.New("DeepCC coexistence")
	rep.Paragraph(fmt.Sprintf("%s; each case runs a tested flow beside %d competing flow(s), all starting together, %d seeds of %.0f s. Wall time %.0f s.", r.Link.Name, r.Competitors, r.Runs, r.Duration, r.WallSeconds))
	var rows [][]any
	for _, c := range r.Cases {
		rows = append(rows, []any{c.Name, fmtStat(c.TestedMbps, "%.2f"), fmtStat(c.CompetitorMbps, "%.2f"), fmtStat(c.Ratio, "%.2f"), fmtStat(c.Jain, "%.3f"), fmtStat(c.TestedP95Ms, "%.1f")})
	}
	rep.Table("Mean over the runs (± 95% CI)", []string{"case", "tested (Mbit/s)", "per competitor (Mbit/s)", "ratio", "Jain", "tested p95 qdelay (ms)"}, rows)
	for i, c := range r.Cases {
		fig := plot.TimeSeries{Title: c.Name + " (first run)", X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: sharedSeries(c.Example)}
		if _, err := plot.SaveAll(fig, filepath.Join(dir, fmt.Sprintf("coexist_%d", i+1)), "png", "svg"); err != nil {
			return err
		}
		rep.PlotAs(c.Name, "svg", fig)
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// WriteText prints the convergence study's tables.
func (r *ConvergenceReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC convergence (Fig 15): %s, %d flows of each scheme joining every %.0f s, %d runs of %.0f s\n", r.Link.Name, r.Flows, r.Every, r.Runs, r.Duration)
	fmt.Fprintf(w, "ramp: first flow reaches %.0f%% of the link; converge: Jain >= %.2f after a join (- never); never: joins that did not converge\n", 100*ConvergeShare, ConvergeJain)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scheme\tramp s\tconverge s\tnever\tsteady Jain\tsingle-flow CV\t")
	for _, s := range r.Schemes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t\n", s.Scheme.Name, fmtStat(s.RampS, "%.2f"), fmtStat(s.ConvergeS, "%.2f"), s.NeverConverged, fmtStat(s.SteadyJain, "%.3f"), fmtStat(s.SteadyCV, "%.3f"))
	}
	tw.Flush()
}

// WriteDir writes the convergence study's figures and report.html into dir.
func (r *ConvergenceReport) WriteDir(dir string) error {
	rep := report.New("DeepCC convergence")
	rep.Paragraph(fmt.Sprintf("%s; %d flows of each scheme join every %.0f s; %d seeds of %.0f s. Wall time %.0f s.", r.Link.Name, r.Flows, r.Every, r.Runs, r.Duration, r.WallSeconds))
	var rows [][]any
	for _, s := range r.Schemes {
		rows = append(rows, []any{s.Scheme.Name, fmtStat(s.RampS, "%.2f"), fmtStat(s.ConvergeS, "%.2f"), s.NeverConverged, fmtStat(s.SteadyJain, "%.3f"), fmtStat(s.SteadyCV, "%.3f")})
	}
	rep.Table("Convergence", []string{"scheme", "ramp (s)", "converge (s)", "never", "steady Jain", "single-flow CV"}, rows)
	for i, s := range r.Schemes {
		var ev []plot.Event
		for k := 1; k < r.Flows; k++ {
			ev = append(ev, plot.Event{X: float64(k) * r.Every, Label: fmt.Sprintf("flow %d joins", k+1)})
		}
		fig := plot.TimeSeries{Title: s.Scheme.Name + " (first run)", X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: sharedSeries(s.Example), Events: ev}
		if _, err := plot.SaveAll(fig, filepath.Join(dir, fmt.Sprintf("convergence_%d", i+1)), "png", "svg"); err != nil {
			return err
		}
		rep.PlotAs(s.Scheme.Name, "svg", fig)
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// WriteText prints the loss study's tables.
func (r *LossReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC random-loss robustness (Fig 14): %s, one flow, %d runs of %.0f s per point; throughput Mbit/s\n", r.Link.Name, r.Runs, r.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "scheme\t")
	for _, l := range r.Losses {
		fmt.Fprintf(tw, "%g%%\t", 100*l)
	}
	fmt.Fprintln(tw)
	for _, c := range r.Curves {
		fmt.Fprintf(tw, "%s\t", c.Scheme.Name)
		for _, p := range c.Points {
			fmt.Fprintf(tw, "%.2f\t", p.ThroughputMbps.Mean)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// WriteDir writes the loss study's figures and report.html into dir.
func (r *LossReport) WriteDir(dir string) error {
	var series []plot.Series
	for _, c := range r.Curves {
		s := plot.Series{Name: c.Scheme.Name}
		for _, p := range c.Points {
			s.X, s.Y = append(s.X, 100*p.Loss), append(s.Y, p.ThroughputMbps.Mean)
		}
		series = append(series, s)
	}
	fig := plot.TimeSeries{Title: "Throughput under random loss, " + r.Link.Name, X: plot.Axis{Label: "random loss rate (%)"},
		Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: series, Markers: true}
	if _, err := plot.SaveAll(fig, filepath.Join(dir, "loss"), "png", "svg"); err != nil {
		return err
	}
	rep := report.New("DeepCC random-loss robustness")
	rep.Paragraph(fmt.Sprintf("%s, one flow per run, %d seeds of %.0f s per point. Wall time %.0f s.", r.Link.Name, r.Runs, r.Duration, r.WallSeconds))
	rep.PlotAs("Mean throughput against the random loss rate.", "svg", fig)
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// WriteText prints the intervals study's tables.
func (r *IntervalReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC decision interval (Fig 9, left): goal g1 alone on 12 Mbit/s with a one-BDP buffer; normalised throughput (p95 qdelay ms), %d runs of %.0f s\n", r.Runs, r.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "decision (min RTTs)\tRTT ms\tnormalised throughput\tp95 qdelay ms\t")
	for _, p := range r.Decision {
		fmt.Fprintf(tw, "%g\t%g\t%s\t%s\t\n", p.DecisionRTTs, p.RTTMs, fmtStat(p.Normalized, "%.3f"), fmtStat(p.DelayP95Ms, "%.1f"))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nDeepCC tuning interval (Fig 9, right): the tuner on %d windows per held-out trace, 9 targets each, decisions every %g min RTT\n", r.Runs, r.DecisionRTTs)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tuning (RTTs)\teffective\tnormalised throughput\tTCR\t")
	for _, p := range r.Tuning {
		fmt.Fprintf(tw, "%g\t%g\t%s\t%s\t\n", p.TuneRTTs, p.Effective, fmtStat(p.Normalized, "%.3f"), p.TCR)
	}
	tw.Flush()
}

// WriteDir writes the intervals study's figures and report.html into dir.
func (r *IntervalReport) WriteDir(dir string) error {
	byRTT := map[float64]*plot.Series{}
	var order []float64
	for _, p := range r.Decision {
		s, ok := byRTT[p.RTTMs]
		if !ok {
			s = &plot.Series{Name: fmt.Sprintf("RTT %g ms", p.RTTMs)}
			byRTT[p.RTTMs] = s
			order = append(order, p.RTTMs)
		}
		s.X, s.Y = append(s.X, p.DecisionRTTs), append(s.Y, p.Normalized.Mean)
	}
	var series []plot.Series
	for _, k := range order {
		series = append(series, *byRTT[k])
	}
	dec := plot.TimeSeries{Title: "Decision interval (goal g1)", X: plot.Axis{Label: "decision interval (minimum RTTs)", Log: true},
		Y: plot.Axis{Label: "normalised throughput", Min: 0, Max: 1.05}, Series: series, Markers: true}
	tn := plot.Series{Name: "normalised throughput"}
	tc := plot.Series{Name: "target completion ratio"}
	for _, p := range r.Tuning {
		tn.X, tn.Y = append(tn.X, p.TuneRTTs), append(tn.Y, p.Normalized.Mean)
		tc.X, tc.Y = append(tc.X, p.TuneRTTs), append(tc.Y, p.TCR.Ratio)
	}
	tun := plot.TimeSeries{Title: "Tuning interval (tuner on held-out traces)", X: plot.Axis{Label: "tuning interval (RTTs)", Log: true},
		Y: plot.Axis{Label: "ratio", Min: 0, Max: 1.05}, Series: []plot.Series{tn, tc}, Markers: true}
	rep := report.New("DeepCC decision and tuning intervals")
	for _, f := range []struct {
		stem string
		fig  plot.TimeSeries
	}{{"intervals_decision", dec}, {"intervals_tuning", tun}} {
		if _, err := plot.SaveAll(f.fig, filepath.Join(dir, f.stem), "png", "svg"); err != nil {
			return err
		}
		rep.PlotAs(f.fig.Title, "svg", f.fig)
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// WriteText prints the modes study's tables.
func (r *ModeReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC preference modes: %d runs of %.0f s per link set (trace windows, or seeds on the steady link)\n", r.Runs, r.Duration)
	for _, l := range r.Links {
		fmt.Fprintf(w, "\n%s\n", l.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\tthroughput Mbit/s\tnormalised\tp95 qdelay ms\tloss %\tfinal goal\t")
		for _, s := range l.Schemes {
			g := ""
			if s.FinalGoal != nil {
				g = s.FinalGoal.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t%.2f\t%s\t\n", s.Scheme.Name, fmtStat(s.ThroughputMbps, "%.2f"), s.Normalized.Mean, fmtStat(s.DelayP95Ms, "%.1f"), 100*s.Loss.Mean, g)
		}
		tw.Flush()
	}
}

// WriteDir writes the modes study's figures and report.html into dir.
func (r *ModeReport) WriteDir(dir string) error {
	rep := report.New("DeepCC preference modes")
	for _, l := range r.Links {
		var series []plot.PointSeries
		for _, s := range l.Schemes {
			series = append(series, plot.PointSeries{Name: s.Scheme.Name, Points: []plot.Point{{X: s.DelayP95Ms.Mean, Y: s.ThroughputMbps.Mean}}})
		}
		fig := plot.Pantheon(l.Name+": throughput vs p95 queueing delay", series)
		if _, err := plot.SaveAll(fig, filepath.Join(dir, "modes_"+FileStem(l.Name)), "png", "svg"); err != nil {
			return err
		}
		rep.PlotAs(l.Name, "svg", fig)
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}
