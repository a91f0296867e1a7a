package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
	"gonum.org/v1/gonum/stat"
)

// phaseDelays are the one-way delays of docs/fidelity.md's phase sweep:
// from 25 to 25.15 ms, each moving the round trip by a sixth of the 300
// µs packet time, through one whole packet time.
var phaseDelays = []string{"25ms", "25.025ms", "25.05ms", "25.075ms", "25.1ms", "25.125ms", "25.15ms"}

// phaseFile is the sweep's workload, the held-out one of docs/fidelity.md
// (40 flows at 40 Mbit/s, a 60-packet queue, 15 s) with phaseSets on top.
const phaseFile = "bench/scale/newreno-1000flows.yaml"

var phaseSets = []string{"bottleneck.rate=40Mbps", "bottleneck.queue.limit=60", "flows.0.count=40", "duration=15s"}

// phaseSimSets are the simulator's further settings: Linux's host profile,
// and flows starting within 300 µs of each other, as the kernel flows
// started together did (their SYNs left within 0.07-1.5 ms); the kernel's
// start with start_spread 0, which the emulator spreads by itself.
var (
	phaseSimSets    = []string{"profile=linux-host", "flows.0.start_spread=300us"}
	phaseKernelSets = []string{"flows.0.start_spread=0s"}
)

// phaseResult is what a run's captures count from 2 s on: retransmissions
// reaching the queue, those it dropped, and timeouts (a retransmission
// after 200 ms or more of silence).
type phaseResult struct {
	retx, retxDropped, timeouts int
}

// phaseScenario is the sweep's scenario at one-way delay delay, for the
// kernel or the simulator, with sets on top; root is the repository's
// directory, where phaseFile is.
func phaseScenario(root, cc, delay string, seed int64, kernel bool, sets []string) (*scenario.Scenario, error) {
	data, err := scenarios.Read(filepath.Join(root, phaseFile))
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(phaseSets), "bottleneck.delay="+delay)
	if kernel {
		all = append(all, phaseKernelSets...)
	} else {
		all = append(all, phaseSimSets...)
	}
	return scenario.ParseWithOverrides(data, phaseFile, cc, seed, append(all, sets...))
}

// phaseRun runs s, on the kernel's TCP through the emulator (root) or in
// the simulator, with its bottleneck's arrivals and drops captured to
// files in dir, and counts them from 2 s on.
func phaseRun(ctx context.Context, s *scenario.Scenario, kernel bool, dir string) (phaseResult, error) {
	c := experiment.Capture{Arrivals: filepath.Join(dir, "arrivals.pcap"), Drops: filepath.Join(dir, "drops.pcap")}
	var err error
	if kernel {
		err = phaseEmulate(ctx, s, c)
	} else {
		_, _, err = experiment.RunCaptured(ctx, s, c)
	}
	if err != nil {
		return phaseResult{}, err
	}
	r, err := readRun(c)
	if err != nil {
		return phaseResult{}, err
	}
	f := analyseFates(r.txs, r.start, 2*time.Second, 200*time.Millisecond)
	return phaseResult{retx: f.Retx, retxDropped: f.RetxDropped, timeouts: f.Timeouts}, nil
}

// phaseEmulate runs s on the emulator with its arrivals and drops
// captured to c's files.
func phaseEmulate(ctx context.Context, s *scenario.Scenario, c experiment.Capture) error {
	fa, err := os.Create(c.Arrivals)
	if err != nil {
		return err
	}
	defer fa.Close()
	fd, err := os.Create(c.Drops)
	if err != nil {
		return err
	}
	defer fd.Close()
	if _, _, err := emu.Run(ctx, s, emu.Options{PcapArrivals: fa, PcapDrops: fd}); err != nil {
		return err
	}
	if err := fa.Close(); err != nil {
		return err
	}
	return fd.Close()
}

// phase runs docs/fidelity.md's phase sweep: the held-out workload at
// the seven delays of phaseDelays, over seeds, in the simulator (or with
// -kernel on the kernel's TCP through the emulator), and prints per delay
// the share of retransmissions the queue dropped and the late timeouts,
// beside a reference of kernel runs, with their correlation over the
// delays and their means over one period (the first six).
func phase(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("phase", flag.ContinueOnError)
	cc := fs.String("cc", "cubic", "the flows' controller")
	n := fs.Int("seeds", 5, "runs per delay, seeds 1..N")
	kernel := fs.Bool("kernel", false, "run the kernel's TCP through the emulator instead of the simulator (root; 15 s per run)")
	ref := fs.String("ref", "bench/emu/testdata/kernel-phase-heldout40-2026-12-04.tsv", "kernel runs to print beside ('' for none)")
	var sets overrides
	fs.Var(&sets, "set", "override a scenario field in every run: path=value[,path=value] (repeatable; e.g. the host's timing: flows.0.extra_delay=35us,bottleneck.ack_read_delay=80us)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("phase: no arguments, got %q (flags: -cc, -seeds, -kernel, -ref, -set)", fs.Args())
	}
	if *n < 1 {
		return fmt.Errorf("phase: -seeds must be at least 1, got %d", *n)
	}
	extra := split(sets...)
	// Every delay's scenario is checked before the first run.
	for _, d := range phaseDelays {
		if _, err := phaseScenario(".", *cc, d, 1, *kernel, extra); err != nil {
			return err
		}
	}
	var kernelRuns map[[2]string][][]float64
	if *ref != "" {
		var err error
		if kernelRuns, err = readReference(*ref, 7, 3, 4, 5); err != nil {
			return err
		}
	}
	dir, err := os.MkdirTemp("", "cclab-phase-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	who := "simulator (profile linux-host, flows started within 300 µs)"
	if *kernel {
		who = "kernel through the emulator"
	}
	fmt.Printf("%s, %s, %s, seeds 1-%d; from 2 s on: retransmissions the queue dropped / timeouts a run\n\n", phaseFile, *cc, who, *n)
	fmt.Println("| one-way delay | this run | kernel reference |")
	fmt.Println("|---|---|---|")
	var mine, theirs []float64
	var mineTO, theirsTO []float64
	for _, d := range phaseDelays {
		var rates, tos []float64
		for seed := 1; seed <= *n; seed++ {
			s, err := phaseScenario(".", *cc, d, int64(seed), *kernel, extra)
			if err != nil {
				return err
			}
			r, err := phaseRun(ctx, s, *kernel, dir)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", d, seed, err)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rates = append(rates, pct(r.retxDropped, r.retx))
			tos = append(tos, float64(r.timeouts))
		}
		refCell := "-"
		if vs := kernelRuns[[2]string{d, *cc}]; len(vs) > 0 {
			var kr, kt []float64
			for _, v := range vs {
				kr, kt = append(kr, 100*v[1]/v[0]), append(kt, v[2])
			}
			refCell = fmt.Sprintf("%.2f-%.2f%% / %v (%d runs)", slices.Min(kr), slices.Max(kr), kt, len(vs))
			mine, theirs = append(mine, stat.Mean(rates, nil)), append(theirs, stat.Mean(kr, nil))
			mineTO, theirsTO = append(mineTO, stat.Mean(tos, nil)), append(theirsTO, stat.Mean(kt, nil))
		}
		fmt.Printf("| %s | %.2f%% / %.1f | %s |\n", d, stat.Mean(rates, nil), stat.Mean(tos, nil), refCell)
	}
	if len(mine) == len(phaseDelays) {
		fmt.Printf("\ncorrelation with the kernel's means over the delays: drops %.2f, timeouts %.2f; over one period (the first six): drops %.2f%% (kernel %.2f%%), timeouts %.1f (kernel %.1f)\n",
			stat.Correlation(theirs, mine, nil), stat.Correlation(theirsTO, mineTO, nil),
			stat.Mean(mine[:6], nil), stat.Mean(theirs[:6], nil), stat.Mean(mineTO[:6], nil), stat.Mean(theirsTO[:6], nil))
	}
	return nil
}
