package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestCapturesAgreeWithTheSenders reads the arrivals and drops captures of
// a simulated run in which every flow completes and checks the analysis
// against the senders' own counters, kept by separate code: transmissions
// reaching the queue are the segments sent (the bottleneck is the first
// hop), retransmissions the senders' retransmissions, the drops file's
// packets the flows' drops (a few of them SYNs); each lost retransmission is sent again, and the senders found
// each one lost (their LostRetransmits: RACK, the gap rule or a timeout).
func TestCapturesAgreeWithTheSenders(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name: fates
seed: 2
duration: 30s
bottleneck: {rate: 8Mbps, delay: 15ms, queue: {limit: 4}}
flows:
  - {count: 12, cc: cubic, bytes: 600KB}
`), "fates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, r := simulateCaptured(t, s, true)
	var sent, retx, drops, lostRetx int64
	for _, f := range n.Flows {
		if !f.Done() {
			t.Fatalf("flow %s did not complete", f.Name)
		}
		st := f.Sender.Stats()
		sent += st.SegmentsSent
		retx += st.Retransmissions
		lostRetx += f.Sender.LostRetransmits()
		drops += f.Drops
	}
	txs, start, dropped, packets := r.txs, r.start, r.dropped, r.packets
	f := analyseFates(txs, start, 0, 200*time.Millisecond)
	t.Logf("%+v; senders: %d sent, %d retransmissions, %d lost retransmissions, %d drops", *f, sent, retx, lostRetx, drops)
	if int64(f.New+f.Retx) != sent || int64(f.Retx) != retx {
		t.Errorf("captures: %d new + %d retransmissions; senders: %d segments, %d retransmissions", f.New, f.Retx, sent, retx)
	}
	if int64(packets) != drops || f.NewDropped+f.RetxDropped != len(dropped) || len(dropped) > packets {
		t.Errorf("drops capture: %d packets, %d data segments (%d new + %d retransmissions matched); flows: %d drops", packets, len(dropped), f.NewDropped, f.RetxDropped, drops)
	}
	if f.Timeout == 0 || f.Timeouts == 0 {
		t.Errorf("no lost retransmission repaired by a timeout (%+v): the scenario no longer exercises that count", *f)
	}
	if f.RetxDropped == 0 || int64(f.RetxDropped) != lostRetx {
		t.Errorf("captures: %d retransmissions dropped; senders found %d lost", f.RetxDropped, lostRetx)
	}
	if p, d := f.ByPosition, f.DroppedByPosition; p[0]+p[1]+p[2] != f.New+f.Retx || d[0]+d[1]+d[2] != f.NewDropped+f.RetxDropped || p[0] == 0 || f.RetxFirst > f.Retx {
		t.Errorf("by position in a burst: %v sent, %v dropped, %d retransmissions first, against %d sent and %d dropped", p, d, f.RetxFirst, f.New+f.Retx, f.NewDropped+f.RetxDropped)
	}
	if f.Never != 0 || f.Soon+f.Timeout != f.RetxDropped || f.NothingAfter+f.AllAfterDropped+f.SomeAfterIn != f.Timeout {
		t.Errorf("lost retransmissions do not add up: %+v", *f)
	}
	var out strings.Builder
	f.write(&out, 0, 200*time.Millisecond)
	if !strings.Contains(out.String(), "lost retransmissions: ") {
		t.Errorf("report:\n%s", out.String())
	}

	// The simulator's senders answer an ACK at the instant it arrives, one
	// reverse delay (the bottleneck's 15 ms) after the capture stamped it:
	// timed so, nearly every transmission follows an ACK (the rest are the
	// first windows and timers), and retransmissions split into the two
	// kinds add up; timed without the delay, few do.
	a, err := analyseAcks(txs, start, r.acks, 15*time.Millisecond, 200*time.Microsecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *a)
	released := 0
	for k, n := range a.Released {
		released += k * n
	}
	if a.Tx != f.New+f.Retx || a.RetxAfterAck+a.RetxOther != f.Retx || a.RetxAfterAckDropped+a.RetxOtherDropped != f.RetxDropped {
		t.Errorf("ACK timing counts %d transmissions (%d + %d retransmissions, %d + %d dropped), the fates %d (%d, %d)",
			a.Tx, a.RetxAfterAck, a.RetxOther, a.RetxAfterAckDropped, a.RetxOtherDropped, f.New+f.Retx, f.Retx, f.RetxDropped)
	}
	if a.Acks == 0 || 10*a.TxAfterAck < 9*a.Tx || released < a.TxAfterAck {
		t.Errorf("%d ACKs released %d transmissions; %d of %d within %v of an ACK, want 90%%", a.Acks, released, a.TxAfterAck, a.Tx, a.Window)
	}
	if off, err := analyseAcks(txs, start, r.acks, 0, 200*time.Microsecond, 0); err != nil || 2*off.TxAfterAck > off.Tx {
		t.Errorf("without the reverse delay %d of %d transmissions follow an ACK (%v): the timing is not what the test measures", off.TxAfterAck, off.Tx, err)
	}

	// The simulator's hosts take no time: with the path's propagation
	// (15 ms each way) taken off, every kind of ACK reaches its sender the
	// instant its segment's departure plus the path allows, and the
	// segments it releases reach the queue at once.
	h := analyseHostTiming(txs, start, r.departed, r.acks, 15*time.Millisecond, 30*time.Millisecond, 200*time.Microsecond, 0)
	for k, ds := range h.Receiver {
		if len(ds) == 0 || slices.Max(ds) > time.Microsecond {
			t.Errorf("%s ACKs: %d, latest %v beyond the path; want some, all at once", ackKinds[k], len(ds), slices.Max(append(ds, 0)))
		}
	}
	if len(h.Sender[0]) == 0 || slices.Max(h.Sender[0]) > time.Microsecond || slices.Max(append(h.Sender[1], 0)) > time.Microsecond {
		t.Errorf("from an ACK to its segment: new %d (latest %v), retransmissions %d: want all at once", len(h.Sender[0]), slices.Max(append(h.Sender[0], 0)), len(h.Sender[1]))
	}
	// A path 40 µs shorter than the real one shows as 40 µs at the receivers.
	h = analyseHostTiming(txs, start, r.departed, r.acks, 15*time.Millisecond, 30*time.Millisecond-40*time.Microsecond, 200*time.Microsecond, 0)
	if ds := h.Receiver[2]; len(ds) == 0 || slices.Min(ds) != 40*time.Microsecond || slices.Max(ds) != 40*time.Microsecond {
		t.Errorf("in-order ACKs over a path 40 µs short: %d, %v to %v beyond it; want 40 µs", len(ds), slices.Min(append(ds, 0)), slices.Max(append(ds, 0)))
	}
	out.Reset()
	h.write(&out)
	if !strings.Contains(out.String(), "in-order data") || !strings.Contains(out.String(), "median 40.0") {
		t.Errorf("report:\n%s", out.String())
	}
}

// simulateCaptured builds and runs s with its bottleneck captured to
// files and reads them back (departures too with acks).
func simulateCaptured(t *testing.T, s *scenario.Scenario, acks bool) (*network.Network, *capturedRun) {
	t.Helper()
	dir := t.TempDir()
	c := experiment.Capture{Arrivals: filepath.Join(dir, "a.pcap"), Drops: filepath.Join(dir, "d.pcap")}
	if acks {
		c.Departures = filepath.Join(dir, "p.pcap")
	}
	_, n, err := experiment.RunCaptured(context.Background(), s, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := readRun(c)
	if err != nil {
		t.Fatal(err)
	}
	return n, r
}

// TestCapturesRefuseMismatchedFiles: a drop that no arrival explains (the
// files of two runs) and a file that is not a capture are errors naming the
// problem, not a count.
func TestCapturesRefuseMismatchedFiles(t *testing.T) {
	t0 := time.Unix(0, 0)
	arrivals := []capSeg{{t0.Add(time.Millisecond), conn{}, 100, 1448}}
	drops := []capSeg{{t0, conn{}, 100, 1448}}
	if _, _, err := transmissions(arrivals, drops); err == nil || !strings.Contains(err.Error(), "matches no arrival") {
		t.Errorf("a drop before its arrival: %v", err)
	}
	if _, _, err := transmissions(nil, nil); err == nil {
		t.Error("no arrivals: no error")
	}
	bad := filepath.Join(t.TempDir(), "x.pcap")
	if err := os.WriteFile(bad, []byte("not a capture"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readCapture(bad); err == nil || !strings.Contains(err.Error(), "x.pcap") {
		t.Errorf("a file that is not a capture: %v", err)
	}
}

// FuzzReadCapture: any bytes given as a capture file decode to segments
// or an error naming the file, never a panic.
func FuzzReadCapture(f *testing.F) {
	s, err := scenario.Parse([]byte("name: f\nduration: 1s\nbottleneck: {rate: 1Mbps, delay: 5ms, queue: {limit: 3}}\nflows: [{count: 2, cc: newreno}]\n"), "f.yaml")
	if err != nil {
		f.Fatal(err)
	}
	n, err := network.Build(s)
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "a.pcap")
	done, err := experiment.AttachPcap(n, experiment.Capture{Arrivals: path})
	if err != nil {
		f.Fatal(err)
	}
	n.Run()
	if err := done(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(b[:24])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.pcap")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		segs, acks, packets, err := readCapture(path)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.pcap") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if len(segs)+len(acks) > packets {
			t.Errorf("%d segments and %d ACKs from %d packets", len(segs), len(acks), packets)
		}
	})
}
