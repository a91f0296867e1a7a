package main

import "testing"

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
