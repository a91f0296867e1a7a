package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/cclab/cclab/internal/progress"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/papers/tcpnc"
)

func init() {
	register(&command{name: "nc study", summary: "reproduce the TCP/NC throughput study (simulation next to the models)", run: runNCStudy})
}

// noSACKUsage is the help of every nc command's --no-sack flag.
const noSACKUsage = "TCP without selective acknowledgements (Reno-style, as ns-2's TCP and the paper's analysis), for TCP and TCP/NC alike"

func runNCStudy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nc study", stderr)
	seeds := fs.Int("seeds", 10, "runs per point (the original study averages 100)")
	dur := fs.Duration("duration", 0, "length of each run (default 200s; the original study runs 1000s)")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write study.json, plots and report.html to this directory")
	quick := fs.Bool("quick", false, "3 seeds of 100 s and fewer points (about a second); an explicit --seeds or --duration still applies")
	noSACK := fs.Bool("no-sack", false, noSACKUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("nc study takes no arguments, got %q", pos)
	}
	// Checked here, not left to cfg.Validate: tcpnc reads a zero as "the
	// default" (10 seeds, 200 s), which an explicit 0 is not.
	switch {
	case *seeds < 1:
		return usagef("--seeds must be at least 1, got %d", *seeds)
	case flagGiven(fs, "duration") && *dur < time.Second:
		return usagef("--duration must be at least 1s, got %v", *dur)
	case *jobs < 0:
		return usagef("--jobs must be 0 (all cores) or more, got %d", *jobs)
	}
	cfg := tcpnc.Config{Seeds: *seeds, Duration: *dur, Jobs: *jobs, NoSACK: *noSACK}
	if *quick {
		// --quick's sizes are defaults, like a --workload's in the dc
		// commands: what the command line sets explicitly wins.
		if !flagGiven(fs, "seeds") {
			cfg.Seeds = 3
		}
		if !flagGiven(fs, "duration") {
			cfg.Duration = 100 * time.Second
		}
		cfg.Redundancies = []float64{1, 1.04, 1.08, 1.1, 1.11, 1.12, 1.13, 1.15, 1.2, 1.25, 1.3}
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	bar := progress.NewRuns(stderr, "nc study")
	cfg.Progress = bar.Update
	res, err := tcpnc.Run(ctx, cfg)
	bar.Finish()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeNCOutputs(*out, res); err != nil {
			return err
		}
	}
	return emit(stdout, *asJSON, res, res.WriteText)
}

func writeNCOutputs(dir string, r *tcpnc.Result) error {
	if err := report.WriteJSON(filepath.Join(dir, "study.json"), r); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var tcpPts, ncPts []plot.Point
	padhye, mathis, ncm := plot.Series{Name: "Padhye et al. (model)"}, plot.Series{Name: "Mathis et al. (model)"}, plot.Series{Name: "TCP/NC, Kim et al. (model)"}
	for _, x := range r.LossSweep {
		padhye.X, padhye.Y = append(padhye.X, x.P), append(padhye.Y, x.Padhye)
		mathis.X, mathis.Y = append(mathis.X, x.P), append(mathis.Y, x.Mathis)
		ncm.X, ncm.Y = append(ncm.X, x.P), append(ncm.Y, x.ModelTCPNC)
		tcpPts = append(tcpPts, plot.Point{X: x.P, Y: x.TCP, YErr: x.TCPCI})
		ncPts = append(ncPts, plot.Point{X: x.P, Y: x.TCPNC, YErr: x.TCPNCCI})
	}
	lossFig := plot.ModelCurves{
		Title:    "Throughput against erasure probability: simulation (points, 95% CI) and models (lines)",
		X:        plot.Axis{Label: "erasure probability p on the last hop"},
		Y:        plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true},
		Curves:   []plot.Series{padhye, ncm, mathis},
		Measured: []plot.PointSeries{{Name: "TCP (simulated)", Points: tcpPts}, {Name: "TCP/NC, R just above 1/(1-p) (simulated)", Points: ncPts}},
	}
	model := plot.Series{Name: "TCP/NC model"}
	var rPts []plot.Point
	for _, x := range r.RedundancySweep {
		model.X, model.Y = append(model.X, x.R), append(model.Y, x.Model)
		rPts = append(rPts, plot.Point{X: x.R, Y: x.TCPNC, YErr: x.TCPNCCI})
	}
	rFig := plot.ModelCurves{
		Title:    fmt.Sprintf("TCP/NC throughput against redundancy R at p = %.4g (knee at R = %.2f, 1/(1-p) = %.3f)", r.Config.SweepLoss, r.KneeR, r.OptimalR),
		X:        plot.Axis{Label: "redundancy factor R (coded packets per TCP packet)"},
		Y:        plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true},
		Curves:   []plot.Series{model},
		Measured: []plot.PointSeries{{Name: "TCP/NC (simulated)", Points: rPts}},
	}
	if _, err := plot.SaveAll(lossFig, filepath.Join(dir, "loss_sweep"), "png", "svg"); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if _, err := plot.SaveAll(rFig, filepath.Join(dir, "redundancy_sweep"), "png", "svg"); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	rep := report.New("TCP/NC throughput study")
	rep.Paragraph("Kim, Médard and Barros, \"Modeling Network Coded TCP Throughput: A Simple Model and its Validation\", reproduced in simulation next to the Padhye, Mathis and TCP/NC models.")
	rep.Plot("Throughput against erasure probability", lossFig)
	rep.Plot("Redundancy sweep", rFig)
	var rows [][]any
	for _, f := range r.Sharing.Flows {
		rows = append(rows, []any{f.Name, report.MeanCI{Mean: f.Mbps, CI: f.CI}})
	}
	rows = append(rows, []any{"Jain's index", r.Sharing.Jain})
	rep.Table(fmt.Sprintf("Two TCP/NC flows sharing %.2f Mbit/s (p = %.4g, R = %.2f)", r.Sharing.CapacityMbps, r.Sharing.P, r.Sharing.R), []string{"flow", "goodput (Mbit/s)"}, rows)
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}
