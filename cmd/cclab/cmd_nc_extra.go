package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cclab/cclab/internal/progress"
	"github.com/cclab/cclab/papers/tcpnc"
)

func init() {
	register(&command{name: "nc window", summary: "TCP/NC study: mean window against the window the throughput used, TCP and TCP/NC, per erasure probability", run: runNCWindow})
	register(&command{name: "nc sharing", summary: "TCP/NC study: two TCP/NC flows sharing a lossy bottleneck, throughput over time", run: runNCSharing})
}

func runNCWindow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nc window", stderr)
	seeds := fs.Int("seeds", 3, "runs per point")
	dur := fs.Duration("duration", 100*time.Second, "length of each run")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write window.json and window.png/svg to this directory")
	noSACK := fs.Bool("no-sack", false, noSACKUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("nc window takes no arguments, got %q", pos)
	}
	if *seeds < 1 || *dur <= 0 {
		return usagef("--seeds and --duration must be positive")
	}
	bar := progress.NewRuns(stderr, "nc window")
	rows, err := tcpnc.WindowStudy(ctx, tcpnc.Config{Seeds: *seeds, Duration: *dur, Jobs: *jobs, NoSACK: *noSACK, Progress: bar.Update})
	bar.Finish()
	if err != nil {
		return err
	}
	cfg := tcpnc.Config{Seeds: *seeds, Duration: *dur, NoSACK: *noSACK}
	if *out != "" {
		if err := tcpnc.SaveWindow(*out, rows); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rows, func(w io.Writer) { tcpnc.WriteWindowText(w, rows, cfg) })
}

func runNCSharing(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nc sharing", stderr)
	seed := fs.Int("seed", 1, "seed of the run")
	dur := fs.Duration("duration", 200*time.Second, "length of the run")
	interval := fs.Duration("interval", time.Second, "throughput sample interval")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write sharing.json and sharing.png/svg to this directory")
	noSACK := fs.Bool("no-sack", false, noSACKUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("nc sharing takes no arguments, got %q", pos)
	}
	if *dur <= 0 || *interval <= 0 || *seed < 1 {
		return usagef("--duration and --interval must be positive, --seed at least 1")
	}
	res, err := tcpnc.SharingOverTime(tcpnc.Config{Duration: *dur, NoSACK: *noSACK}, *seed, *interval)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := res.Save(*out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, res, func(w io.Writer) { res.WriteText(w, *seed, *dur) })
}

func init() {
	register(&command{name: "nc hops", summary: "TCP/NC study: TCP and TCP/NC over a chain of lossy hops (end-to-end loss 1-(1-q)^hops), simulated", run: runNCHops})
}

func runNCHops(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nc hops", stderr)
	hops := fs.Int("hops", 4, "lossy hops in series after the bottleneck")
	qs := fs.String("q", "0.005,0.01,0.02,0.03,0.05", "per-hop erasure probabilities")
	seeds := fs.Int("seeds", 5, "runs per point")
	dur := fs.Duration("duration", 200*time.Second, "length of each run")
	jobs := fs.Int("jobs", 0, "parallel runs (default: all cores)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	out := fs.String("out", "", "write hops.json and hops.png/svg to this directory")
	noSACK := fs.Bool("no-sack", false, noSACKUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("nc hops takes no arguments, got %q", pos)
	}
	q, err := parseFloats(*qs, 1)
	if err != nil || len(q) == 0 {
		return usagef("--q: want comma-separated probabilities, got %q", *qs)
	}
	if *seeds < 1 || *dur <= 0 || *hops < 1 || *hops > 64 {
		return usagef("--seeds and --duration must be positive, --hops in [1, 64]")
	}
	bar := progress.NewRuns(stderr, "nc hops")
	rows, err := tcpnc.HopsStudy(ctx, tcpnc.Config{Seeds: *seeds, Duration: *dur, Jobs: *jobs, NoSACK: *noSACK, Progress: bar.Update}, q, *hops)
	bar.Finish()
	if err != nil {
		return err
	}
	cfg := tcpnc.Config{Seeds: *seeds, Duration: *dur, NoSACK: *noSACK}
	if *out != "" {
		if err := tcpnc.SaveHops(*out, rows, *hops); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rows, func(w io.Writer) { tcpnc.WriteHopsText(w, rows, cfg, *hops) })
}
