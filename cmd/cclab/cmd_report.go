package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cclab/cclab/analysis/report"
)

func init() {
	register(&command{name: "report", summary: "write an HTML report with plots for a sweep or run output directory",
		args: "DIR", help: "DIR is the output directory of cclab sweep --out or cclab run --out. Other commands' --out directories (tune, study, nc study, ...) hold their own report.html, which report leaves alone. A sweep's scenario path is relative to the directory cclab sweep ran in; report looks for it from the current directory and from DIR and the directories above it, and warns when it cannot re-simulate the time series.", run: runReport})
}

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	noSeries := fs.Bool("no-series", false, "sweeps: do not re-simulate run 0 of the first combinations for time-series plots")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one directory, got %d arguments (usage: cclab report DIR)", len(pos))
	}
	dir := pos[0]
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return usagef("%s is not a directory (want a cclab sweep --out or cclab run --out directory)", dir)
	}
	warn := func(msg string) { fmt.Fprintln(stderr, "warning: "+msg) }
	path, figs, err := report.WriteDir(ctx, dir, report.DirOptions{NoSeries: *noSeries, Warn: warn})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %d plot(s) beside it (PNG and SVG)\n", path, len(figs))
	return nil
}
