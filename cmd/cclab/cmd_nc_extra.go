package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cclab/cclab/internal/progress"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/papers/tcpnc"
)

func init() {
	register(&command{name: "nc window", summary: "TCP/NC study: mean window against the window the throughput used, TCP and TCP/NC, per erasure probability", run: runNCWindow})
	register(&command{name: "nc sharing", summary: "TCP/NC study: two TCP/NC flows sharing a lossy bottleneck, throughput over time", run: runNCSharing})
}

func writeJSONFile(path string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(js, '\n'), 0o644)
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
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := writeJSONFile(filepath.Join(*out, "window.json"), rows); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		var series []plot.Series
		for _, sc := range []string{"tcp", "tcpnc"} {
			w := plot.Series{Name: sc + " mean window"}
			u := plot.Series{Name: sc + " window used (throughput x RTT)"}
			for _, r := range rows {
				if r.Scheme == sc {
					w.X, w.Y = append(w.X, r.P), append(w.Y, r.CwndPackets)
					u.X, u.Y = append(u.X, r.P), append(u.Y, r.UsedPackets)
				}
			}
			series = append(series, w, u)
		}
		fig := plot.TimeSeries{Title: "TCP and TCP/NC: window against the window the throughput used", X: plot.Axis{Label: "erasure probability p"},
			Y: plot.Axis{Label: "packets", IncludeZero: true}, Series: series, Markers: true}
		if _, err := plot.SaveAll(fig, filepath.Join(*out, "window"), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rows, func(w io.Writer) {
		fmt.Fprintf(w, "Window against throughput: 0.5 Mbit/s, 50 ms one-way, 20-packet window%s, %d runs of %v per point\n", tcpnc.SACKNote(*noSACK), *seeds, *dur)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "p\tscheme\tR\tmean cwnd pkts\tthroughput Mbit/s\tRTT ms\tused pkts\tused/cwnd\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%g\t%s\t%.2f\t%.2f\t%.3f\t%.1f\t%.2f\t%.2f\t\n", r.P, r.Scheme, r.R, r.CwndPackets, r.ThroughputMbps, r.RTTMs, r.UsedPackets, r.Efficiency)
		}
		tw.Flush()
	})
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
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := writeJSONFile(filepath.Join(*out, "sharing.json"), res); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		var series []plot.Series
		for i, n := range res.Names {
			series = append(series, plot.Series{Name: n, X: res.T, Y: res.Mbps[i]})
		}
		fig := plot.TimeSeries{Title: fmt.Sprintf("Two TCP/NC flows on %.2f Mbit/s, p = %g, R = %g", res.CapacityMbps, res.P, res.R),
			X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: series}
		if _, err := plot.SaveAll(fig, filepath.Join(*out, "sharing"), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, res, func(w io.Writer) {
		fmt.Fprintf(w, "Two TCP/NC flows on %.2f Mbit/s at p = %g, R = %g, seed %d, %v: ", res.CapacityMbps, res.P, res.R, *seed, *dur)
		for i, n := range res.Names {
			fmt.Fprintf(w, "%s %.3f Mbit/s, ", n, res.MeanMbps[i])
		}
		fmt.Fprintf(w, "Jain %.4f\n", res.Jain)
	})
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
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := writeJSONFile(filepath.Join(*out, "hops.json"), rows); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		names := []string{"TCP, chain", "TCP, one hop at p", "TCP/NC, chain", "TCP/NC, one hop at p"}
		series := make([]plot.Series, 4)
		for i := range series {
			series[i].Name = names[i]
		}
		for _, r := range rows {
			for i, v := range []float64{r.TCP, r.TCP1, r.TCPNC, r.TCPNC1} {
				series[i].X, series[i].Y = append(series[i].X, r.P), append(series[i].Y, v)
			}
		}
		fig := plot.TimeSeries{Title: fmt.Sprintf("TCP and TCP/NC over %d lossy hops (end-to-end p = 1-(1-q)^%d)", *hops, *hops),
			X: plot.Axis{Label: "end-to-end erasure probability p"}, Y: plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true}, Series: series, Markers: true}
		if _, err := plot.SaveAll(fig, filepath.Join(*out, "hops"), "png", "svg"); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return emit(stdout, *asJSON, rows, func(w io.Writer) {
		fmt.Fprintf(w, "TCP and TCP/NC over %d lossy hops in series (no re-encoding)%s, %d runs of %v per point; Mbit/s\n", *hops, tcpnc.SACKNote(*noSACK), *seeds, *dur)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "q\tp = 1-(1-q)^n\tp measured\tR\tTCP chain\tTCP 1 hop\tTCP/NC chain\tTCP/NC 1 hop\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%g\t%.4f\t%.4f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", r.Q, r.P, r.MeasuredP, r.R, r.TCP, r.TCP1, r.TCPNC, r.TCPNC1)
		}
		tw.Flush()
	})
}
