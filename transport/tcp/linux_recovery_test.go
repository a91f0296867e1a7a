package tcp_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
	_ "github.com/cclab/cclab/traces" // the cellular scenario's trace
)

// TestLinkSwitchRetransmitsOnlyLosses runs CUBIC's 600 KB transfer of the
// satcom-uhf scenario, whose link switches from SATCOM (1 Mbit/s, 500 ms
// one way) to UHF (256 kbit/s, 125 ms, 3% loss): at the switch the queue
// drains four times slower and packets still on the satellite are
// overtaken by the first ones over UHF, so the RTT rises by seconds and
// arrivals reorder, though nothing is lost but the queue's drops and the
// radio's random losses. Linux 6.18's kernel TCP, measured through cclab's
// emulator on the same scenario (seeds 1-6, docs/fidelity.md), resends
// little beyond those: 55-65 retransmissions for 51-65 drops and losses
// with the switch at 10 s (1.0-1.1 per loss), and 9-14 for 4-14 with the
// switch at 5 s (1.1 per loss over the six). The default transport, which
// follows Linux's recovery (RACK alone marks losses and keeps its
// reordering window once reordering is seen; a timeout spares segments
// sent within the last RTT, and SACKs of data sent before the head's
// retransmission restart the timer, and an ACK looks for losses only if
// it delivered a segment with an unambiguous RTT, as tcp_rack_mark_lost's
// rack.advanced requires), makes 1.01 per loss with the switch at 10 s and
// 1.12 with it at 5 s over seeds 1-10 (without the rack.advanced rule,
// the ACK of an overtaken original just resent at the first reordering
// marked the rest of the overtaken segments lost: 1.8; the transport
// before all these changes made 1.5 and 6.5); RFC 6675's rules with a
// go-back-N timeout (`rack: false`, as ns-3) make 2.8 at 5 s.
func TestLinkSwitchRetransmitsOnlyLosses(t *testing.T) {
	run := func(switchAt string, rack bool) (retx, lost float64) {
		const seeds = 10
		for seed := 1; seed <= seeds; seed++ {
			r := runBuiltIn(t, "satcom-uhf", "", int64(seed),
				"bottleneck.schedule.0.at="+switchAt, fmt.Sprintf("transport.rack=%v", rack))
			f := r.Flows[0]
			if f.FCT == nil {
				t.Fatalf("switch at %s, seed %d: the transfer did not finish", switchAt, seed)
			}
			retx += float64(f.Retransmissions) / seeds
			lost += float64(f.Drops+f.Losses) / seeds
		}
		return retx, lost
	}
	for _, c := range []struct {
		at       string
		maxRatio float64 // retransmissions per drop or loss, at most
	}{{"10s", 1.1}, {"5s", 1.3}} {
		retx, lost := run(c.at, true)
		old, oldLost := run(c.at, false)
		t.Logf("switch at %s: %.1f retransmissions for %.1f drops and losses; rack: false %.1f for %.1f", c.at, retx, lost, old, oldLost)
		if retx > c.maxRatio*lost {
			t.Errorf("switch at %s: %.1f retransmissions for %.1f drops and losses, want at most %.1f per loss", c.at, retx, lost, c.maxRatio)
		}
		if c.at == "5s" && old < 1.5*retx {
			t.Errorf("switch at 5s: rack: false makes %.1f retransmissions, want at least 1.5 times the default's %.1f", old, retx)
		}
	}
}

// TestLostRetransmissionsRuleAgainstKernelTails compares the two rules for
// lost retransmissions (transport.lost_retransmissions) on satcom-uhf with
// the kernel's runs through cclab's emulator (docs/fidelity.md, "Tail
// timeouts", 40 seeds each, 2026-12-03). Seeds 6 and 7 of CUBIC take the
// kernel 17.8 and 17.0 s; with the gap rule the simulator loses a
// retransmission that only segments sent just after it could judge and
// waits 6 s for the timeout (23.9 and 23.6 s); Linux's rule resends it on
// the reordering timer and finishes within 5% of the kernel. Over the 40
// seeds the kernel's transfers above 20 s are 1 (CUBIC), 1 (NewReno) and 2
// (BBR); the rack rule must have fewer than the gap rule for each and no
// more than three above the kernel's count.
func TestLostRetransmissionsRuleAgainstKernelTails(t *testing.T) {
	fct := func(cc, rule string, seed int) float64 {
		t.Helper()
		r := runBuiltIn(t, "satcom-uhf", cc, int64(seed), "transport.lost_retransmissions="+rule)
		if r.Flows[0].FCT == nil {
			t.Fatalf("%s, %s rule, seed %d: the transfer did not finish", cc, rule, seed)
		}
		return *r.Flows[0].FCT
	}
	for _, c := range []struct {
		seed   int
		kernel float64
	}{{6, 17.8}, {7, 17.0}} {
		gap, rack := fct("cubic", "gap", c.seed), fct("cubic", "rack", c.seed)
		if gap < 20 {
			t.Errorf("CUBIC seed %d, gap rule: %.2f s, want the late timeout (above 20 s) this test is about", c.seed, gap)
		}
		if math.Abs(rack-c.kernel) > 0.05*c.kernel {
			t.Errorf("CUBIC seed %d, rack rule: %.2f s, want within 5%% of the kernel's %.1f s", c.seed, rack, c.kernel)
		}
	}
	for _, c := range []struct {
		cc     string
		kernel int // transfers above 20 s over seeds 1-40
	}{{"cubic", 1}, {"newreno", 1}, {"bbr", 2}} {
		var gap, rack int
		for seed := 1; seed <= 40; seed++ {
			if fct(c.cc, "gap", seed) > 20 {
				gap++
			}
			if fct(c.cc, "rack", seed) > 20 {
				rack++
			}
		}
		t.Logf("%s: transfers above 20 s over 40 seeds: gap rule %d, rack rule %d, kernel %d", c.cc, gap, rack, c.kernel)
		if rack >= gap || rack > c.kernel+3 {
			t.Errorf("%s: %d transfers above 20 s with the rack rule, %d with the gap rule, kernel %d: want fewer than the gap rule and at most the kernel's + 3", c.cc, rack, gap, c.kernel)
		}
	}
}

// TestRACKRetransmissionsNotSpuriousOnTraceBursts: the cellular scenario's
// trace link delivers packets in bursts, so several ACKs reach the sender
// in one instant; one can send new data and the next, in the same
// instant, a retransmission behind it. Linux orders a retransmission
// against a segment sent in the same instant by sequence number
// (tcp_skb_sent_after), which would call that retransmission sent first
// and judge it lost as soon as the new data is delivered: with
// lost_retransmissions: rack the simulator then resent 71 segments the
// receiver already had. The path is a FIFO that loses only to its queue,
// so every retransmission must be for a drop, with the option as without
// it, and with the whole Linux profile (which includes it).
func TestRACKRetransmissionsNotSpuriousOnTraceBursts(t *testing.T) {
	for _, set := range []string{"transport.lost_retransmissions=gap", "transport.lost_retransmissions=rack", "profile=linux"} {
		f := runBuiltIn(t, "cellular", "", -1, "duration=20s", set).Flows[0]
		t.Logf("%s: %d retransmissions for %d drops and %d losses", set, f.Retransmissions, f.Drops, f.Losses)
		if f.Retransmissions > f.Drops+f.Losses {
			t.Errorf("%s: %d retransmissions for %d drops and %d losses: %d spurious on a path that neither reorders nor delays ACKs",
				set, f.Retransmissions, f.Drops, f.Losses, f.Retransmissions-f.Drops-f.Losses)
		}
	}
}

// runBuiltIn runs built-in scenario name, named as scenarios.Load names it
// (so that a trace it uses resolves), with controller cc ("" for the
// file's), seed (-1 for the file's) and the --set overrides, failing t on
// any error.
func runBuiltIn(t *testing.T, name, cc string, seed int64, sets ...string) *experiment.Result {
	t.Helper()
	data, err := scenarios.Bytes(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.ParseWithOverrides(data, "scenarios/"+name+".yaml", cc, seed, sets)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := experiment.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
