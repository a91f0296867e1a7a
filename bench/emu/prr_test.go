package main

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// dcPaperCubicKernel holds Linux's CUBIC on dc-paper (four flows and the
// scenario's background), seeds 1-10 twice (docs/fidelity.md, "Linux's
// PRR joins the profile").
const dcPaperCubicKernel = "testdata/kernel-dcpaper-cubic-2026-12-07.tsv"

// TestLinuxPRRInProfileAgainstKernel: Linux's PRR (transport.prr linux,
// in profile linux since 2026-12-07) is what brings a hundred CUBIC flows
// sharing a queue to the kernel's retransmissions: with the profile they
// resend 8,634 segments a run over seeds 1-5, within 3% of both hosts'
// five runs (8,424-8,607 and 8,450-8,602), where with RFC 6937's PRR
// they resend 9,148, 6% above the most, and fail here. Hybla and
// Westwood+ on satcom-uhf, the other rows it moved, are held by
// TestHyblaSatcomAgainstKernel. On dc-paper's four CUBIC flows, where a
// single seed's fidelity pass put three flows' retransmissions under the
// kernel's range with it, the means over seeds 1-10 stay near the
// kernel's twenty runs: goodput within 3% (7.55 against 7.58 Mbit/s;
// 7.47 when it joined, before short segments counted as packets, and
// 7.70 with RFC 6937's PRR) and retransmissions within 20% (167 against
// 205 a run; 171 and 176).
func TestLinuxPRRInProfileAgainstKernel(t *testing.T) {
	const file = "bench/scale/newreno-1000flows.yaml"
	profile := []string{"profile=linux"}
	sim := simManyFlows(t, file, "cubic", profile)
	for _, ref := range []string{manyFlowsKernel, manyFlowsKernelLater} {
		k := kernelRunsOf(t, ref, file, "cubic", 5)
		checkAgainstKernel(t, "cubic, starts over 1 s, "+ref, sim, k, kernelBounds{goodput: 0.05, retx: 0.03, rtos: -1, jain: 0.05})
	}

	const dc = "scenarios/dc-paper.yaml"
	k := kernelRunsOf(t, dcPaperCubicKernel, dc, "cubic", 20)
	dcSim := simRuns(t, dc, "cubic", 10, append([]string{"duration=20s"}, profile...))
	checkNearKernelMean(t, "dc-paper, seeds 1-10", dcSim, k, 0.03, 0.2)
}

// dcPaperCubicKernelIntel holds the same workload on a second host
// (docs/fidelity.md, "dc-paper's CUBIC on a second host, and the timing
// noise that closes its gap").
const dcPaperCubicKernelIntel = "testdata/kernel-dcpaper-cubic-intel-2026-12-07.tsv"

// TestDCPaperTimingNoiseAgainstKernel: what separates the profile's
// dc-paper CUBIC flows from the kernel's (167 retransmissions a run
// against 205 and 198 on two hosts, and 0.3 timeouts a run against 1.7
// and 1.9) is the simulator's exact timing, which locks the flows and the
// background's BBR into a phase at the full queue (docs/fidelity.md,
// "Timing noise: phase effects at a shared DropTail queue"). With the
// emulator's noise as bottleneck.ack_jitter estimates it for the
// many-flow workloads (100 µs, not fitted here), the means over seeds
// 1-10 come within 10% of both hosts' retransmissions (188.5 a run, -8.0%
// and -4.6%) and within a timeout a run of theirs (1.5); without the
// noise the retransmissions are 18% and 15% under, and this fails. With
// all four flows BBR the noise does the same (385 retransmissions a run
// over seeds 1-5 against the kernel's 432, -11%; 347 and -20% without).
func TestDCPaperTimingNoiseAgainstKernel(t *testing.T) {
	const dc = "scenarios/dc-paper.yaml"
	noise := []string{"duration=20s", "profile=linux", "bottleneck.ack_jitter=100us"}
	bbr := simRuns(t, dc, "bbr", 5, noise)
	checkNearKernelMean(t, "dc-paper's BBR with 100 µs of ACK jitter", bbr, kernelRunsOf(t, dcPaperKernel, dc, "bbr", 10), 0.03, 0.15)
	sim := simRuns(t, dc, "cubic", 10, noise)
	for _, ref := range []struct {
		file string
		runs int
	}{{dcPaperCubicKernel, 20}, {dcPaperCubicKernelIntel, 10}} {
		k := kernelRunsOf(t, ref.file, dc, "cubic", ref.runs)
		checkNearKernelMean(t, "dc-paper with 100 µs of ACK jitter, "+ref.file, sim, k, 0.03, 0.1)
		rtos := stat.Mean(k.rtos, nil)
		t.Logf("%s: %.1f timeouts a run (kernel mean %.1f)", ref.file, sim.rtos, rtos)
		if math.Abs(sim.rtos-rtos) > 1 {
			t.Errorf("%s: %.1f timeouts a run against the kernel's %.1f (want within one)", ref.file, sim.rtos, rtos)
		}
	}
}
