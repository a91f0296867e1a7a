package main

import (
	"context"
	"fmt"
	"io"
	"math"
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
	if *jobs < 0 {
		return usagef("--jobs must be 0 (all cores) or more, got %d", *jobs)
	}
	if err := checkHopLosses(q, *hops); err != nil {
		return err
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

// maxNCRedundancy is the largest TCP/NC redundancy R a simulated flow
// accepts (experiment/scenario's coding.redundancy range).
const maxNCRedundancy = 10

// hopLossOK reports whether nc hops can simulate per-hop loss q over hops
// hops: the end-to-end loss p = 1-(1-q)^hops, which the one-hop
// comparison runs and TCP/NC's redundancy are derived from, must leave
// something to deliver and need a redundancy the simulator takes.
func hopLossOK(q float64, hops int) bool {
	p := 1 - math.Pow(1-q, float64(hops))
	return p < 1 && tcpnc.WellChosenR(p) <= maxNCRedundancy
}

// checkHopLosses refuses, before any run, the per-hop losses nc hops
// cannot simulate. Left to the runs, they fail only once all have
// finished, naming a scenario field (flows[0].loss.p, or the coding
// redundancy) that the command line never set.
func checkHopLosses(qs []float64, hops int) error {
	for _, q := range qs {
		if !(q >= 0 && q < 1) {
			return usagef("--q %g is not an erasure probability; accepted: 0 <= q < 1", q)
		}
		if hopLossOK(q, hops) {
			continue
		}
		// The largest accepted q, by bisection (acceptance falls with q),
		// cut to four decimals so that the value printed is accepted too.
		lo, hi := 0.0, 1.0
		for range 100 {
			if mid := (lo + hi) / 2; hopLossOK(mid, hops) {
				lo = mid
			} else {
				hi = mid
			}
		}
		qMax := math.Floor(lo*1e4) / 1e4
		accepted := fmt.Sprintf("accepted with --hops %d: --q up to %g (an end-to-end loss up to %.4g, for which TCP/NC needs R = %.2f)",
			hops, qMax, 1-math.Pow(1-qMax, float64(hops)), tcpnc.WellChosenR(1-math.Pow(1-qMax, float64(hops))))
		p := 1 - math.Pow(1-q, float64(hops))
		if p >= 1 {
			return usagef("--q %g over --hops %d is an end-to-end loss of 1-(1-%g)^%d ≈ 1, which no flow survives; %s", q, hops, q, hops, accepted)
		}
		return usagef("--q %g over --hops %d is an end-to-end loss of 1-(1-%g)^%d = %.4g, for which TCP/NC would need a redundancy R = %.2f coded packets per packet, above the simulator's limit of %d; %s",
			q, hops, q, hops, p, tcpnc.WellChosenR(p), maxNCRedundancy, accepted)
	}
	return nil
}
