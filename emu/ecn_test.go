package emu_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestECNConflictRefused: the kernel-TCP senders share one namespace and
// so one net.ipv4.tcp_ecn; flows (and background TCP sources) that
// disagree on transport.ecn are refused with the flows on each side named,
// and agreeing ones are accepted.
func TestECNConflictRefused(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string // empty: accepted
	}{
		{"flow override", `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
flows:
  - {name: a, cc: cubic, transport: {ecn: true}}
  - {name: b, cc: cubic}
`, []string{"transport.ecn", "on for flows[0] (a)", "off for flows[1] (b)"}},
		{"scenario default against a flow's false", `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
transport: {ecn: true}
flows:
  - {name: a, cc: cubic}
  - {name: b, cc: newreno, transport: {ecn: false}}
`, []string{"on for flows[0] (a)", "off for flows[1] (b)"}},
		{"background source", `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
flows:
  - {name: a, cc: cubic, transport: {ecn: true}}
background:
  - {name: web, type: tcp, cc: cubic}
`, []string{"on for flows[0] (a)", "off for background[0] (web"}},
		{"agreeing", `
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms}
transport: {ecn: false}
flows:
  - {name: a, cc: cubic, transport: {ecn: true}}
  - {name: b, cc: newreno, transport: {ecn: true}}
`, nil},
	} {
		err := emu.Supported(parse(t, c.yaml), false)
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
}

// TestDCTCPRefusedWithoutKernelModule: cc dctcp is refused, naming the
// controllers the kernel offers, when the kernel lacks it.
func TestDCTCPRefusedWithoutKernelModule(t *testing.T) {
	if _, err := endpoint.KernelCC("dctcp"); err == nil {
		t.Skip("this kernel has dctcp")
	}
	s, err := scenario.Parse([]byte(`
name: x
duration: 1s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 100, mark_threshold: 20}}
flows:
  - {name: a, cc: dctcp}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = emu.Supported(s, false)
	if err == nil || !strings.Contains(err.Error(), "flows[0].cc") || !strings.Contains(err.Error(), `"dctcp"`) || !strings.Contains(err.Error(), "this kernel offers") {
		t.Fatalf("want flows[0].cc refused as a controller the kernel lacks, got %v", err)
	}
}

// TestReceiverAnswersECN: a fresh namespace has Linux's default
// net.ipv4.tcp_ecn = 2 (answer ECN, do not ask): the emulator leaves the
// receiving namespace so and sets 1 on the sender only.
func TestReceiverAnswersECN(t *testing.T) {
	needEmulator(t)
	p, err := netns.NewPair()
	if err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("removing namespaces: %v", err)
		}
	}()
	for _, ns := range []*netns.NS{p.Snd, p.Rcv} {
		var v []byte
		if err := ns.Do(func() (err error) {
			v, err = os.ReadFile("/proc/sys/net/ipv4/tcp_ecn")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(v)); got != "2" {
			t.Errorf("namespace %s: tcp_ecn %s in a fresh namespace, want 2", ns.Name, got)
		}
	}
}

// TestECNMarksReachKernel runs two ECN-capable CUBIC flows through a
// DropTail that marks at 20 packets: the kernel must negotiate ECN and
// answer the marks, so the queue never overflows and nothing is
// retransmitted; every mark leaves in the IP header (CE, valid header
// checksum, counted once) and the receivers echo it (ECE); without
// transport.ecn nothing is marked and the queue overflows.
func TestECNMarksReachKernel(t *testing.T) {
	needEmulator(t)
	const yaml = `
name: ecn
seed: 1
duration: 6s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {limit: 100, mark_threshold: 20}}
transport: {ecn: %s}
flows:
  - {name: bulk, cc: cubic, count: 2}
`
	var departures bytes.Buffer
	res, _, err := emu.Run(context.Background(), parse(t, strings.Replace(yaml, "%s", "true", 1)), emu.Options{Pcap: &departures})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Emulator
	var retx int64
	for _, f := range res.Flows {
		retx += f.Retransmissions
	}
	t.Logf("ecn: %d CE marks, %d queue drops, %d retransmissions, queueing delay p95 %.1f ms, utilisation %.3f", a.CEMarked, a.QueueDrops, retx, a.SojournP95Ms, res.Links[0].Utilization)
	if a.CEMarked < 50 || a.QueueDrops != 0 || retx != 0 {
		t.Errorf("with ECN: %d CE marks, %d queue drops, %d retransmissions; want marks, no drops, no retransmissions", a.CEMarked, a.QueueDrops, retx)
	}
	if a.SojournP95Ms > 20 {
		t.Errorf("with ECN the queue's p95 wait is %.1f ms, beyond the 20-packet threshold (12 ms) plus slack", a.SojournP95Ms)
	}
	for _, f := range res.Flows {
		if f.ECNReductions == nil || *f.ECNReductions < 5 || *f.ECNReductions > a.CEMarked {
			t.Errorf("flow %s: ecn_reductions %v with %d CE marks; want some, at most one a mark", f.Name, f.ECNReductions, a.CEMarked)
		}
	}
	// The summary's marks are the queue's: those that left, plus any
	// still queued at the end.
	if m := res.Links[0].Marks; m == nil || *m < a.CEMarked || *m > a.CEMarked+100 {
		t.Errorf("link ecn_marks %v, the forwarder rewrote %d headers", m, a.CEMarked)
	}
	ce, ect, ece, bad := scanECN(t, departures.Bytes())
	if ce != a.CEMarked || ect == 0 || ece == 0 || bad != 0 {
		t.Errorf("capture: %d CE packets (the emulator counted %d), %d ECT, %d ACKs with ECE, %d bad header checksums", ce, a.CEMarked, ect, ece, bad)
	}

	res, _, err = emu.Run(context.Background(), parse(t, strings.Replace(yaml, "%s", "false", 1)), emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Flows {
		if f.ECNReductions != nil {
			t.Errorf("without ECN flow %s reports ecn_reductions %d", f.Name, *f.ECNReductions)
		}
	}
	if a, m := res.Emulator, res.Links[0].Marks; a.CEMarked != 0 || m == nil || *m != 0 || a.QueueDrops == 0 {
		t.Errorf("without ECN: %d CE marks (link ecn_marks %v), %d queue drops; want none (0 with marking configured) and some drops", a.CEMarked, m, a.QueueDrops)
	}
}

// scanECN walks a pcap stream of raw IPv4 packets and counts CE and ECT
// packets, ACKs (no payload) with ECE and headers whose checksum fails.
func scanECN(t *testing.T, b []byte) (ce, ect, ece, bad int64) {
	t.Helper()
	if len(b) < 24 {
		t.Fatal("capture shorter than its header")
	}
	for off := 24; off+16 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+8:]))
		off += 16
		if off+n > len(b) {
			t.Fatalf("capture cut short at byte %d", off)
		}
		p := b[off : off+n]
		off += n
		if len(p) < 20 || p[0]>>4 != 4 {
			continue
		}
		ihl := int(p[0]&0x0f) * 4
		var sum uint32
		for i := 0; i+1 < ihl && i+1 < len(p); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(p[i:]))
		}
		for sum>>16 != 0 {
			sum = sum&0xffff + sum>>16
		}
		if sum != 0xffff {
			bad++
		}
		switch p[1] & 3 {
		case 3:
			ce++
		case 1, 2:
			ect++
		}
		if len(p) >= ihl+14 && p[ihl+13]&0x40 != 0 && p[ihl+13]&0x02 == 0 {
			ece++
		}
	}
	return
}

// TestControlKeepsMarking: a queue resized while the run goes (Control,
// as the network-generator RPC does) keeps the scenario's step marking:
// ECN flows behind a queue grown to 1 MB still hold it near the 20-packet
// threshold, where without marking they would fill it (400 ms at 20
// Mbit/s).
func TestControlKeepsMarking(t *testing.T) {
	needEmulator(t)
	s := parse(t, `
name: ecn-control
seed: 1
duration: 4s
bottleneck: {rate: 20Mbps, delay: 10ms, queue: {limit: 100, mark_threshold: 20}}
transport: {ecn: true}
flows:
  - {name: bulk, cc: cubic, count: 2}
`)
	set := make(chan error, 1)
	res, _, err := emu.Run(context.Background(), s, emu.Options{OnStart: func(ctl *emu.Control) {
		go func() {
			time.Sleep(500 * time.Millisecond)
			q := units.Bytes(1 << 20)
			_, err := ctl.Set(emu.LinkChange{QueueBytes: &q})
			set <- err
		}()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-set; err != nil {
		t.Fatal(err)
	}
	a := res.Emulator
	t.Logf("%d CE marks, %d queue drops, sojourn p95 %.1f ms", a.CEMarked, a.QueueDrops, a.SojournP95Ms)
	if a.CEMarked == 0 || a.QueueDrops != 0 || a.SojournP95Ms > 30 {
		t.Errorf("after the resize: %d CE marks, %d queue drops, sojourn p95 %.1f ms; want marks, no drops, the queue near 20 packets (12 ms)", a.CEMarked, a.QueueDrops, a.SojournP95Ms)
	}
}
