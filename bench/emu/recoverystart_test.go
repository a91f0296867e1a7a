package main

import (
	"slices"
	"testing"
)

// manyFlowsBBRKernel is Linux's BBR on the staggered 100-flow workload,
// five runs (docs/fidelity.md, "Linux's pacing").
const manyFlowsBBRKernel = "testdata/kernel-manyflows-bbr-2026-12-06.tsv"

// lossyBBRKernelRecoveries is the kernel's fast recoveries per run in
// lossyBBRKernel's ten runs (its header: the -all table's mean).
const lossyBBRKernelRecoveries = 196

// TestRecoveryStartAgainstKernel: with Linux's start of recovery
// (transport.recovery_start linux, in profile linux since 2026-12-06) a
// recovery that ends with segments lost while it ran starts the next on
// the same ACK, and BBR, which keeps its window through recovery, stays
// in one recovery instead of restoring its window and conserving packets
// for a round after each (docs/fidelity.md, "Recovery after recovery").
// lossy's two BBR flows over seeds 1-10 resend within 10% of the kernel's
// mean, in fast recoveries within 10% of its count (1,536 in 199 against
// 1,520 in 196; new_loss 1,209 in 174, both outside); the staggered 100
// BBR flows resend within 5% of the kernel's runs with Jain's index within
// 0.05 of theirs (41,184 and 0.595 against 40,093-43,246 and
// 0.527-0.627; new_loss 38,040 and 0.722, both outside). The loss
// state's turn into recovery, part of the rule since the evening of
// 2026-12-06, moved the hundred flows from 41,551 and 0.613
// (docs/fidelity.md, "The loss state's turn into recovery"). Since short
// segments count as packets under the window (2026-12-07): lossy 1,521
// in 200.5, the hundred flows 40,592 and 0.572.
func TestRecoveryStartAgainstKernel(t *testing.T) {
	profile := []string{"profile=linux"}

	const lossy = "scenarios/lossy.yaml"
	sets := append([]string{"duration=20s"}, profile...)
	k := kernelRunsOf(t, lossyBBRKernel, "lossy", "bbr", 10)
	sim := simRuns(t, lossy, "bbr", 10, sets)
	checkNearKernelMean(t, "lossy, seeds 1-10", sim, k, 0.05, 0.1)
	t.Logf("lossy, seeds 1-10: %.1f fast recoveries a run (kernel %d)", sim.recoveries, lossyBBRKernelRecoveries)
	if d, ok := nearMean(sim.recoveries, lossyBBRKernelRecoveries, 0.1); !ok {
		t.Errorf("lossy, seeds 1-10: %.1f fast recoveries a run, %+.1f%% from the kernel's %d (want within 10%%)", sim.recoveries, 100*d, lossyBBRKernelRecoveries)
	}

	const many = "bench/scale/newreno-1000flows.yaml"
	k = kernelRunsOf(t, manyFlowsBBRKernel, many, "bbr", 5)
	sim = simManyFlows(t, many, "bbr", slices.Clone(profile))
	checkAgainstKernel(t, "100 BBR flows, starts over 1 s", sim, k, kernelBounds{goodput: 0.05, retx: 0.05, rtos: 0.25, jain: 0.05})
}
