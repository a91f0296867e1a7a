package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Linux's BBR on dc-paper (docs/fidelity.md, "Linux's pacing"): seeds 1-5
// twice with the scenario's background, seeds 1-3 twice without it, and
// two fidelity passes of seed 1 without it (per flow: goodput, queueing
// delay p95, retransmissions); and on lossy with both flows BBR, seeds
// 1-10.
const (
	lossyBBRKernel     = "testdata/kernel-lossy-bbr-2026-12-06.tsv"
	dcPaperKernel      = "testdata/kernel-dcpaper-bbr-2026-12-06.tsv"
	dcPaperQuietKernel = "testdata/kernel-dcpaper-quiet-bbr-2026-12-06.tsv"
	dcPaperQuietRef    = "testdata/kernel-dcpaper-quiet-2026-12-06.jsonl"
)

// dcPaperQuiet turns dc-paper's background off (its arrivals at a load
// of 0.1%: none within 20 s).
const dcPaperQuiet = "background.0.load=0.001"

// TestLinuxPacingAgainstKernel: with Linux's pacing (transport.pacing
// linux, in profile linux since 2026-12-06) BBR flows sharing a queue are
// where the kernel's are. dc-paper's four BBR flows alone, without the
// background, seed 1: each flow's queueing delay p95 and retransmissions
// fall within target of the kernel's two runs (with pacing: segment none
// of the eight: the flows lose nothing and keep the queue 25 ms shorter);
// this one check keeps recovery_start new_loss, the rule it was found
// with: with Linux's the flows resend 9, 5, 5 and 10 segments, two of
// them within target (the kernel's 16, 6-11, 7-9 and 5-10), a count
// too small to tell the rules apart. Over seeds 1-3 they resend within
// half of the kernel's 40 a run (21; 23 with new_loss; pacing: segment
// 0, the default 116). With the background, over seeds 1-5: goodput
// within 5% of the kernel's mean and retransmissions within 30% (369
// against 432 a run, 322 with new_loss; pacing: segment 217, the default
// 886, both outside). lossy's two BBR flows over seeds 1-10: goodput
// within 5% and retransmissions within 25% of the kernel's mean (1,536
// against 1,520, 1,209 with new_loss; pacing: segment 704, the default
// 821). Since short segments count as packets under the window
// (2026-12-07): dc-paper 347 a run, lossy 1,521.
func TestLinuxPacingAgainstKernel(t *testing.T) {
	const file = "scenarios/dc-paper.yaml"
	profile := []string{"profile=linux"}

	ref, err := loadRef([]string{dcPaperQuietRef})
	if err != nil {
		t.Fatal(err)
	}
	flows, _, err := simFlows([]string{"dc-paper"}, "bbr", 20*time.Second, sides{sets: append(slices.Clone(profile), dcPaperQuiet, "transport.recovery_start=new_loss")})
	if err != nil {
		t.Fatal(err)
	}
	in, scored := refCounts(flows, ref)
	t.Logf("dc-paper alone, seed 1: within target in %v of %d flows (goodput, qdelay p95, retransmissions)", in, scored)
	if scored != 4 || in[1] != 4 || in[2] != 4 {
		t.Errorf("dc-paper alone, seed 1: queueing delay p95 within target for %d flows and retransmissions for %d, of %d scored; want all 4", in[1], in[2], scored)
	}

	sets := append([]string{"duration=20s"}, profile...)
	for _, c := range []struct {
		what, file, ref string
		key             string // the kernel runs' scenario column
		seeds           int
		kernelRuns      int
		extra           []string
		gpTol           float64 // -1: not held
		retxTol         float64
	}{
		{"dc-paper alone", file, dcPaperQuietKernel, file, 3, 6, []string{dcPaperQuiet}, -1, 0.5},
		{"dc-paper", file, dcPaperKernel, file, 5, 10, nil, 0.05, 0.3},
		{"lossy", "scenarios/lossy.yaml", lossyBBRKernel, "lossy", 10, 10, nil, 0.05, 0.25},
	} {
		k := kernelRunsOf(t, c.ref, c.key, "bbr", c.kernelRuns)
		sim := simRuns(t, c.file, "bbr", c.seeds, append(slices.Clone(sets), c.extra...))
		checkNearKernelMean(t, fmt.Sprintf("%s, seeds 1-%d", c.what, c.seeds), sim, k, c.gpTol, c.retxTol)
	}
}

// satcomBBRKernel is Linux's BBR on satcom-uhf over seeds 1-40 through
// cclab's emulator (2026-12-03, idle; docs/fidelity.md, "Linux 6.18's
// loss recovery", the "Tail timeouts" table): the transfer's completion
// time mean and median in seconds and its retransmissions per transfer.
var satcomBBRKernel = struct{ mean, median, retx float64 }{17.08, 16.98, 52.4}

// TestLinuxPacingSatcomBBR: profile linux's BBR transfer over the
// SATCOM-to-UHF path, 40 seeds, completes where the kernel's does: mean
// and median completion time within 2% and retransmissions within 10%
// (17.06 s, 16.98 s and 53.7 against 17.08, 16.98 and 52.4). With
// pacing: segment the median is 3% early and the retransmissions 16% too
// few (16.78, 16.47, 43.9); by default the median is 5% early (16.09).
func TestLinuxPacingSatcomBBR(t *testing.T) {
	const seeds = 40
	var fct []float64
	var retx float64
	for i, res := range simResults(t, "scenarios/satcom-uhf.yaml", "bbr", seeds, []string{"profile=linux"}) {
		f := res.Flows[0]
		if f.FCT == nil {
			t.Fatalf("seed %d: the transfer did not finish", i+1)
		}
		fct = append(fct, *f.FCT)
		retx += float64(f.Retransmissions) / seeds
	}
	slices.Sort(fct)
	mean, median := stat.Mean(fct, nil), (fct[seeds/2-1]+fct[seeds/2])/2
	k := satcomBBRKernel
	t.Logf("FCT mean %.2f s (kernel %.2f), median %.2f s (kernel %.2f), retransmissions %.1f (kernel %.1f)", mean, k.mean, median, k.median, retx, k.retx)
	for _, c := range []struct {
		what      string
		v, k, tol float64
	}{
		{"mean completion time", mean, k.mean, 0.02},
		{"median completion time", median, k.median, 0.02},
		{"retransmissions per transfer", retx, k.retx, 0.1},
	} {
		if d, ok := nearMean(c.v, c.k, c.tol); !ok {
			t.Errorf("%s %.2f, %+.1f%% from the kernel's %.2f (want within %g%%)", c.what, c.v, 100*d, c.k, 100*c.tol)
		}
	}
}
