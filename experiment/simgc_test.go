package experiment

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestSimGCPercent: the target is the live heap plus half of it or 16 MiB,
// whichever is more, and at most five times the live heap.
func TestSimGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400}, {1 * mib, 400}, {4 * mib, 400}, {5 * mib, 320}, {8 * mib, 200},
		{16 * mib, 100}, {32 * mib, 50}, {40 * mib, 50}, {1 << 40, 50},
	} {
		if got := simGCPercent(c.live); got != c.want {
			t.Errorf("simGCPercent(%d MiB) = %d, want %d", c.live/mib, got, c.want)
		}
		target := c.live + c.live*uint64(simGCPercent(c.live))/100
		if c.live > 0 && target != min(c.live+max(c.live/2, simGCHeadroom), 5*c.live) {
			t.Errorf("live %d MiB: target %d MiB, want live + max(live/2, 16 MiB), at most 5 x live", c.live/mib, target/mib)
		}
	}
}

// gcPercent reads the collector's GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestSimulationGC: no collections while the network is built, the target
// from the heap Build left when the run starts, and re-targeted from the
// live heap after a collection.
func TestSimulationGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: SimulationGC leaves the collector alone")
	}
	orig := gcPercent()
	t.Cleanup(func() {
		simGC.Store(simGCOff)
		debug.SetGCPercent(orig)
		runtime.GC() // the hook sees the policy off and stops
	})
	runtime.GC()
	SimulationGC()
	if p := gcPercent(); p != -1 {
		t.Fatalf("while building: GOGC %d, want off (-1)", p)
	}
	startSimGC()
	if p := gcPercent(); p < 100 {
		t.Fatalf("run started with a small heap: GOGC %d, want the 16 MiB headroom's (at least 100)", p)
	}
	live := make([]byte, 64<<20) // a large live heap: the target becomes 50%
	for i := range live {
		live[i] = byte(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() != 50 {
		if time.Now().After(deadline) {
			t.Fatalf("after collections with a 64 MiB live heap: GOGC %d, want 50", gcPercent())
		}
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	runtime.KeepAlive(live)
	startSimGC() // only once per SimulationGC
	if p := gcPercent(); p != 50 {
		t.Errorf("a second startSimGC changed GOGC to %d", p)
	}
}
