package network

import (
	"fmt"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/transport/tcp"
)

// TestPrefetchingChangesNothing: prefetching is a hint, so a run with it
// gives the same event count and the same per-flow results as without,
// through losses, recovery and flows with their own extra delay.
func TestPrefetchingChangesNothing(t *testing.T) {
	run := func(prefetch bool) (uint64, []tcp.Stats, []int64) {
		s, err := parseScenario(`
name: prefetch
seed: 3
duration: 3s
bottleneck: {rate: 200Mbps, delay: 5ms, queue: {discipline: droptail, limit: 100}}
flows:
  - {name: a, cc: newreno, count: 30, start_spread: 0.5s}
  - {name: b, cc: cubic, count: 10, start_spread: 0.5s, extra_delay: 7ms}
`)
		if err != nil {
			t.Fatal(err)
		}
		n, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if n.prefetching {
			t.Fatalf("%d flows already prefetch; the test needs fewer than %d", len(n.Flows), prefetchFlows)
		}
		if prefetch {
			n.enablePrefetching()
		}
		n.Sched.RunUntil(clock.Time(3 * time.Second))
		var st []tcp.Stats
		var got []int64
		for _, f := range n.Flows {
			st = append(st, f.Sender.Stats())
			got = append(got, int64(f.Receiver.DeliveredBytes))
		}
		return n.Sched.Events(), st, got
	}
	e0, st0, got0 := run(false)
	e1, st1, got1 := run(true)
	if e0 != e1 {
		t.Errorf("%d events with prefetching, %d without", e1, e0)
	}
	losses := int64(0)
	for i := range st0 {
		if st0[i] != st1[i] || got0[i] != got1[i] {
			t.Errorf("flow %d: %+v, %d bytes with prefetching; %+v, %d without", i, st1[i], got1[i], st0[i], got0[i])
		}
		losses += st0[i].FastRecoveries
	}
	if losses == 0 {
		t.Errorf("no fast recoveries: the scenario does not exercise loss recovery")
	}
}

// TestPrefetchFrom: prefetching starts at 300 flows where the L2 is unknown
// or small, and where it is larger once the flows' state outgrows it; a
// run turns it on at this host's threshold and not one flow below.
func TestPrefetchFrom(t *testing.T) {
	for _, c := range []struct{ l2, want int }{
		{0, 300}, {256 << 10, 300}, {512 << 10, 300}, {1 << 20, 436}, {2 << 20, 873}, {32 << 20, 13981},
	} {
		if got := prefetchFrom(c.l2); got != c.want {
			t.Errorf("prefetchFrom(%d) = %d, want %d", c.l2, got, c.want)
		}
	}
	k := hostPrefetchFrom()
	for _, n := range []int{k - 1, k} {
		s, err := parseScenario(fmt.Sprintf(`
name: prefetch-from
duration: 1s
bottleneck: {rate: 1Gbps, delay: 10ms, queue: {discipline: droptail, limit: 1000}}
flows:
  - {name: a, cc: newreno, count: %d, start_spread: 1s}
`, n))
		if err != nil {
			t.Fatal(err)
		}
		net, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if net.prefetching != (n >= k) {
			t.Errorf("%d flows (threshold %d): prefetching %v", n, k, net.prefetching)
		}
	}
}
