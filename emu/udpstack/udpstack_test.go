package udpstack_test

import (
	"context"
	"math"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/emu/udpstack"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

func init() { udpstack.Register(nil) }

// TestCclabBesideKernel runs one scenario file under cclab emu with a
// cclab-stack flow (transport/udp, Mockets acknowledgements) and a kernel
// flow on a lossy 10 Mbit/s link: both deliver every byte, and the cclab
// flow's RTT samples and recovery counts reach the summary.
func TestCclabBesideKernel(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	s, _, err := scenario.Decode([]byte(`
name: stacks
seed: 1
duration: 30s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {discipline: droptail, limit: 60}, loss: {model: bernoulli, p: 0.03}}
flows:
  - {name: mine, cc: cubic, stack: cclab, protocol: mockets, bytes: 1MB}
  - {name: kernel, cc: cubic, stack: kernel, bytes: 1MB}
`), "stacks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	res, _, err := emu.Run(context.Background(), s, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Flows {
		if f.FCT == nil || f.BytesDelivered != 1_000_000 {
			t.Errorf("flow %s: delivered %d of 1 MB, fct %v", f.Name, f.BytesDelivered, f.FCT)
		}
		if f.RTTMeanMs < 20 {
			t.Errorf("flow %s: mean RTT %.2f ms below the 20 ms base", f.Name, f.RTTMeanMs)
		}
		t.Logf("%s: fct %.2f s, %d retransmissions, RTT mean %.1f ms", f.Name, *f.FCT, f.Retransmissions, f.RTTMeanMs)
	}
	if res.Flows[0].Retransmissions == 0 {
		t.Errorf("the cclab flow retransmitted nothing at 3%% loss")
	}
	// cclab's TCP counts its recoveries per flow; kernel TCP's are in the
	// namespace's counters only.
	if f := res.Flows[0]; f.FastRecoveries == nil || f.LossProbes == nil || *f.FastRecoveries == 0 {
		t.Errorf("the cclab flow reports fast recoveries %v and loss probes %v, want counts (some recoveries at 3%% loss)", f.FastRecoveries, f.LossProbes)
	}
	if f := res.Flows[1]; f.FastRecoveries != nil || f.LossProbes != nil {
		t.Errorf("the kernel flow reports per-flow recovery counts it does not have")
	}
}

// TestUnknownAgentRefused: an agent without a hook is refused with the
// flow's name.
func TestUnknownAgentRefused(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	s, _, err := scenario.Decode([]byte(`
name: agent
seed: 1
duration: 2s
bottleneck: {rate: 10Mbps, delay: 10ms}
flows: [{name: a, cc: external, stack: cclab, agent: marlin, bytes: 100KB}]
`), "agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := emu.Run(context.Background(), s, emu.Options{}); err == nil {
		t.Fatal("a flow with an agent ran without an agent hook")
	} else {
		t.Log(err)
	}
}

// TestECNAgainstSimulator runs ECN flows of cclab's transport on real UDP
// sockets through the emulator's marking queue (step marking at 20
// packets) and the same scenario in the simulator: the same tcp.Sender
// and tcp.Receiver, their ECN carried in the IP header and the wire
// format's flags instead of the simulator's packet fields. DCTCP (its
// exact echo) and CUBIC with RFC 3168 ECN (transport.ecn of the scenario,
// which the cclab stack takes) lose nothing in either, and the queueing
// delay agrees (below). The marks and the window reductions depend on
// the host's timing: on the host this test was written on (2026-12-06)
// DCTCP's agreed within 15% and CUBIC's reductions too (its marks 707-990
// in eight runs against the simulator's 973, with 57-60 reductions
// against 60; docs/emulator.md), while on 2026-12-07's host, a guest
// whose vCPUs stall for milliseconds (the forwarder's lateness up to 3.5
// ms), DCTCP took 2,217-2,795 marks and 195-231 reductions in six runs
// against the simulator's 3,290 and 168, every other figure (goodput,
// RTT, queueing delay) within 4%, and CUBIC 668-896 marks and 58-65
// reductions. So marks are held within 50% and DCTCP's reductions within
// 50%, CUBIC's within 15%: enough to fail a path that loses the marks,
// the echo or the reduction (none, or twice as many), not one host's
// timing; TestECNAgainstCclabOnUDP (bench/emu) holds the simulator to
// recorded runs of this transport within 20%, deterministically. The
// queueing delay is held within 15% or 1 ms, the emulator's precision
// (emu/link's delay test): on that host one CI run's CUBIC queued 6.4 ms
// on average against the simulator's 5.5 (5.8 in the runs before it),
// the endpoints' stalls counting as queueing.
func TestECNAgainstSimulator(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	for _, c := range []struct {
		name, flows      string
		marksTol, redTol float64
	}{
		{"dctcp", "flows: [{name: bulk, cc: dctcp, count: 2, stack: cclab}]", 0.5, 0.5},
		{"cubic", "transport: {ecn: true}\nflows: [{name: bulk, cc: cubic, count: 2, stack: cclab}]", 0.5, 0.15},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := scenario.Decode([]byte(`
name: ecn-udp
seed: 1
duration: 10s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {discipline: droptail, limit: 100, mark_threshold: 20}}
`+c.flows+"\n"), "ecn-udp.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			sim, _, err := experiment.Run(context.Background(), s.Clone())
			if err != nil {
				t.Fatal(err)
			}
			em, _, err := emu.Run(context.Background(), s, emu.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// near holds got within tol of want, or within slack of it
			// in absolute terms.
			near := func(what string, got, want, tol, slack float64) {
				t.Logf("%s: emulator %.2f, simulator %.2f", what, got, want)
				if d := math.Abs(got - want); want <= 0 || d > tol*want && d > slack {
					t.Errorf("%s: emulator %.2f, simulator %.2f; want within %.0f%% or %g", what, got, want, 100*tol, slack)
				}
			}
			marks := func(r *experiment.Result) float64 {
				if m := r.Links[0].Marks; m != nil {
					return float64(*m)
				}
				return 0
			}
			near("CE marks", marks(&em.Result), marks(sim), c.marksTol, 0)
			emRed, _ := em.ECNReductions()
			simRed, _ := sim.ECNReductions()
			near("ECN window reductions", float64(emRed), float64(simRed), c.redTol, 0)
			for i, f := range em.Flows {
				near(f.Name+" queueing delay mean ms", f.QdelayMeanMs, sim.Flows[i].QdelayMeanMs, 0.15, 1)
				if f.Retransmissions != 0 || f.Drops != 0 || f.ECNReductions == nil {
					t.Errorf("emulated flow %s: %d retransmissions, %d drops, ECN reductions %v; want none, none, a count", f.Name, f.Retransmissions, f.Drops, f.ECNReductions)
				}
			}
			if em.Emulator.QueueDrops != 0 || em.Emulator.CEMarked == 0 {
				t.Errorf("emulator: %d queue drops, %d CE marks; want none and some", em.Emulator.QueueDrops, em.Emulator.CEMarked)
			}
		})
	}
}
