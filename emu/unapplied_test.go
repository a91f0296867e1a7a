package emu_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/scenarios"
)

// unappliedPaths returns the paths Unapplied lists, each entry checked to
// be "path: why".
func unappliedPaths(t *testing.T, yaml string) []string {
	t.Helper()
	var paths []string
	for _, u := range emu.Unapplied(parse(t, yaml)) {
		p, why, ok := strings.Cut(u, ": ")
		if !ok || why == "" {
			t.Errorf("entry %q is not \"path: why\"", u)
		}
		paths = append(paths, p)
	}
	return paths
}

const unappliedBase = `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
`

// TestUnappliedListsWhatKernelIgnores: the fields the kernel path does not
// apply are each listed with their path, scenario-wide and per flow.
func TestUnappliedListsWhatKernelIgnores(t *testing.T) {
	got := unappliedPaths(t, `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms, ack_jitter: 100us, ack_read_delay: 50us, serialize_acks: true}
transport:
  recv_window: 16KB
  mss: 1000
  delayed_ack: false
  min_rto: 5ms
  rack: false
  tlp: false
  prr: rfc6937
  receive_window: none
flows:
  - name: a
    cc: cubic
    transport: {min_rto: 10ms, sack: false, frto: false}
  - {name: b, cc: cubic, stack: cclab, transport: {min_rto: 10ms}}
`)
	want := []string{
		"bottleneck.serialize_acks", "bottleneck.ack_jitter", "bottleneck.ack_read_delay",
		"transport.mss", "transport.delayed_ack", "transport.min_rto", "transport.recv_window",
		"transport.tlp", "transport.rack", "transport.prr", "transport.receive_window",
		"flows[0].transport.sack", "flows[0].transport.min_rto", "flows[0].transport.frto",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Unapplied lacks %s; got %v", w, got)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("Unapplied lists %s, which the emulator applies (or a cclab-stack flow's); got %v", g, got)
		}
	}
	if msg := emu.Unapplied(parse(t, unappliedBase+"transport: {recv_window: 16KB}\nflows: [{name: a, cc: cubic}]\n")); len(msg) != 1 ||
		msg[0] != "transport.recv_window: simulator-only (the kernel autotunes its receive window)" {
		t.Errorf("recv_window: got %q", msg)
	}
}

// TestUnappliedQuiet: what the emulator applies, Linux's own values and
// the profiles (which fill fields with what the kernel does) are not
// listed.
func TestUnappliedQuiet(t *testing.T) {
	for _, yaml := range []string{
		unappliedBase + "flows: [{name: a, cc: cubic}]\n",
		unappliedBase + "profile: linux\nflows: [{name: a, cc: cubic}]\n",
		unappliedBase + "profile: linux-host\nflows: [{name: a, cc: cubic}]\n",
		unappliedBase + `transport: {sack: false, ecn: true, nagle: true, mss: 1448, min_rto: 200ms, delayed_ack: true,
  receive_window: linux, prr: linux, pacing: linux, lost_retransmissions: rack, srtt_sample: oldest,
  kernel_hz: 250, sack_compression: true, send_buffer: linux, handshake_ack: true}
flows: [{name: a, cc: cubic, loss: {p: 0.01}, loss_hops: 4, extra_delay: 5ms}]
`,
		// Only cclab's own transport runs: it takes the transport.
		unappliedBase + "transport: {recv_window: 16KB, min_rto: 5ms}\nflows: [{name: a, cc: cubic, stack: cclab}]\n",
	} {
		if got := emu.Unapplied(parse(t, yaml)); len(got) > 0 {
			t.Errorf("listed %q for\n%s", got, yaml)
		}
	}
}

// TestUnappliedDatacenter: the built-in datacenter scenario's
// data-centre minimum RTO is not the kernel's.
func TestUnappliedDatacenter(t *testing.T) {
	s, err := scenarios.Load("datacenter")
	if err != nil {
		t.Fatal(err)
	}
	got := emu.Unapplied(s)
	if len(got) != 1 || !strings.HasPrefix(got[0], "transport.min_rto: ") {
		t.Errorf("datacenter: got %q, want transport.min_rto", got)
	}
}

// TestSupportedHints: cclab's own controllers, parameterised kernel
// controllers and too many flows are refused saying what to do.
func TestSupportedHints(t *testing.T) {
	s := parse(t, unappliedBase+`
flows:
  - {name: a, cc: fixed}
  - {name: b, cc: {name: bbr, bw_window_rounds: 10}}
background:
  - {name: bg, type: tcp, cc: external}
`)
	msg := emu.Supported(s, false).Error()
	for _, want := range []string{
		"flows[0].cc: fixed is one of cclab's own controllers, not the kernel's", "--set flows.0.stack=cclab",
		"flows[1].cc: kernel controllers take no parameters", "--cc bbr runs the kernel's bbr with its own defaults",
		"background[0].cc: external is one of cclab's own controllers",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "modprobe tcp_fixed") || strings.Contains(msg, "modprobe tcp_external") {
		t.Errorf("error %q suggests a kernel module for cclab's controller", msg)
	}
	s = parse(t, unappliedBase+"flows: [{name: a, cc: cubic, count: 100000}]\n")
	msg = emu.Supported(s, false).Error()
	for _, want := range []string{"flows[0].count (100000)", "at most 499 measured flows, got 100000", "receiver ports, 5001-5499"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

// TestBackgroundArrivalsSentAndOffered: flow arrivals on the emulator
// report what they sent (never 0 beside a delivered rate) and offer what
// the simulator says they offer.
func TestBackgroundArrivalsSentAndOffered(t *testing.T) {
	needEmulator(t)
	s := parse(t, `
name: arrivals
seed: 2
duration: 2s
bottleneck: {rate: 20Mbps, delay: 5ms, queue: {limit: 200}}
flows: [{name: a, cc: cubic}]
background:
  - {name: web, type: arrivals, sizes: websearch, load: 0.3, cc: cubic}
`)
	sim, _, err := experiment.Run(context.Background(), s.Clone())
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := emu.Run(context.Background(), s, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Background) != 1 || len(sim.Background) != 1 {
		t.Fatalf("background: emulator %+v, simulator %+v", res.Background, sim.Background)
	}
	b := res.Background[0]
	if b.DeliveredMbps <= 0 || b.Flows == 0 {
		t.Fatalf("no arrivals delivered: %+v", b)
	}
	if b.SentMbps < b.DeliveredMbps {
		t.Errorf("sent %.3f Mbit/s below delivered %.3f", b.SentMbps, b.DeliveredMbps)
	}
	if want := sim.Background[0].OfferedMbps; want <= 0 || math.Abs(b.OfferedMbps-want) > 1e-6 {
		t.Errorf("offered %.6f Mbit/s, the simulator's %.6f", b.OfferedMbps, want)
	}
}
