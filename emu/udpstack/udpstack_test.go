package udpstack_test

import (
	"context"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/emu/udpstack"
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
