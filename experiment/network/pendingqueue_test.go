package network

import (
	"strings"
	"testing"
)

// TestPendingQueueKey: a flow's pending_queue reaches the transport over
// the scenario-wide one, a small queue slows a Mockets transfer whose
// window is far larger (the queue, not the window, bounds what is in
// flight), and every byte still arrives.
func TestPendingQueueKey(t *testing.T) {
	const yml = `
name: pq
duration: 60s
bottleneck: {rate: 10Mbps, delay: 50ms, queue: {limit: 1000}}
transport: {pending_queue: 1MB}
flows:
  - {name: m, cc: {name: fixed, window: 200000}, protocol: mockets, bytes: 1MB%s}
`
	run := func(over string) (done float64, queue int64) {
		t.Helper()
		n := build(t, strings.Replace(yml, "%s", over, 1))
		f := n.Flows[0]
		n.Run()
		if !f.Done() || f.Receiver.DeliveredBytes != 1_000_000 {
			t.Fatalf("%q: delivered %d of 1MB", over, f.Receiver.DeliveredBytes)
		}
		return f.Receiver.DoneAt.Sub(0).Seconds(), int64(f.Sender.Config().PendingQueue)
	}
	big, q := run("")
	if q != 1_000_000 {
		t.Fatalf("scenario-wide pending_queue 1MB reached the transport as %d", q)
	}
	small, q := run(", transport: {pending_queue: 20KB}")
	if q != 20_000 {
		t.Fatalf("the flow's pending_queue 20KB reached the transport as %d", q)
	}
	t.Logf("1MB queue %.2fs, 20KB queue %.2fs", big, small)
	// 20 KB per ~100 ms RTT is 1.6 Mbit/s against the window's 10: the
	// transfer takes about 5 s instead of about 1.
	if small < 3*big {
		t.Errorf("a 20KB queue took %.2fs, a 1MB queue %.2fs: the small queue should be several times slower", small, big)
	}
}

func TestPendingQueueRefused(t *testing.T) {
	for in, want := range map[string]string{
		"transport: {pending_queue: 1KB}":             "transport.pending_queue: must be at least one MSS (1448 bytes",
		"transport: {mss: 500B, pending_queue: 400B}": "transport.pending_queue: must be at least one MSS (500 bytes",
		"transport: {pending_queue: lots}":            "transport.pending_queue",
	} {
		_, err := parseScenario("name: x\nbottleneck: {rate: 1Mbps}\n" + in + "\nflows: [{cc: newreno}]\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}
