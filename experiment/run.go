package experiment

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/coldpages"
)

// Run builds and runs a validated scenario. It is the one way cclab runs a
// scenario (the command, sweeps, tuning and the paper studies), so that
// cancellation behaves the same everywhere: once ctx is cancelled the run
// stops within a few thousand events and Run returns an error
// wrapping ctx's error and naming the simulated time reached.
func Run(ctx context.Context, s *scenario.Scenario) (*Result, *network.Network, error) {
	return RunCaptured(ctx, s, Capture{})
}

// RunCaptured is Run with the bottleneck captured to the files c names
// (nothing when c is zero, as Run): a capture that cannot be written or
// closed is an error of the run.
func RunCaptured(ctx context.Context, s *scenario.Scenario, c Capture) (*Result, *network.Network, error) {
	n, err := network.Build(s)
	if err != nil {
		return nil, nil, err
	}
	var closeCapture func() error
	if c != (Capture{}) {
		if closeCapture, err = AttachPcap(n, c); err != nil {
			return nil, nil, fmt.Errorf("capture: %w", err)
		}
	}
	res, err := RunNetwork(ctx, n)
	if closeCapture != nil {
		if cerr := closeCapture(); cerr != nil && err == nil {
			err = fmt.Errorf("capture: %w", cerr)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return res, n, nil
}

// RunNetwork runs a built network to its end (or until ctx is cancelled)
// and summarises it; the wall time measured is the simulation's alone.
// Callers that attach observers (a packet capture) before the run build
// the network themselves and call RunNetwork.
func RunNetwork(ctx context.Context, n *network.Network) (*Result, error) {
	startSimGC()
	if releaseColdPages.Load() {
		// Parsing the scenario and building the network touched code and
		// tables the run never uses again; only residency changes, so an
		// error (no /proc) is moot.
		_, _ = coldpages.Release()
	}
	start := time.Now()
	if err := n.RunContext(ctx); err != nil {
		return nil, err
	}
	return Summarize(n, time.Since(start)), nil
}

// SimulationGC sets the garbage collector for a process that builds and
// runs one large simulation (cclab run, cclab-sim), unless GOGC is set.
// Call it before building the network. Nothing is collected while the
// network is built: what Build allocates is the network, nearly all of it
// live. When the run starts (RunNetwork) and after every collection the
// heap's target becomes the live heap plus half of it or 16 MiB, whichever
// is more (simGCPercent). A simulation allocates as its flows start and
// their windows grow, and nothing per packet after, so a small network's
// run ends without a collection (1000 flows: 3.5 MB after Build, 10 MB at
// the end; collections in the run, their marking with write barriers on,
// cost 3-4% of its CPU time), and a large one keeps the 50% target, which
// holds a 10,000-flow run's peak about 11 MiB below the default target's.
// Collecting during Build as well (at 50%) costs 1-3% more CPU time at
// 1000 flows, for about 4 MiB less at 10,000 (docs/performance.md).
func SimulationGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(-1)
	simGC.Store(simGCBuilding)
}

// OneProcessor runs the Go scheduler on one processor until the returned
// function restores the previous setting, unless the environment sets
// GOMAXPROCS (which then wins). A simulation is one goroutine: with a
// second processor the collector's mark termination hands work between
// two threads (a fifth of the CPU time of building and reporting 1000
// flows); with one, the collector runs on the simulation's thread and the
// process takes less CPU time in all (docs/performance.md). cclab-sim
// keeps it for the whole process, cclab run for the simulation.
func OneProcessor() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}

// The states of SimulationGC's policy.
const (
	simGCOff      = iota // the process's own GOGC
	simGCBuilding        // no collections until the run starts
	simGCRunning         // simGCPercent after every collection
)

// simGC is SimulationGC's state.
var simGC atomic.Int32

// ReleaseColdPages has a process that builds and runs one simulation
// give back the clean pages of its executable (coldpages.Release) when
// the run starts, which drops the code and tables parsing and building
// touched, and in CollectFinishedNetwork, with the freed heap, before
// the output is built. It is for a large executable: in cclab, which
// links the emulator, learning and plotting, they would otherwise add
// 4-5 MiB to a 1000-flow run's peak (23 against 18 MiB), for about 5 ms
// of CPU time (2%: reading /proc/self/smaps twice, returning the heap,
// faulting the run's own code back in). cclab-sim, whose code is nearly
// all the run's, gains 1 MiB for the same time and does not call it.
func ReleaseColdPages() { releaseColdPages.Store(true) }

// releaseColdPages is set by ReleaseColdPages.
var releaseColdPages atomic.Bool

// simGCHeadroom is the least a simulation's heap may grow between
// collections.
const simGCHeadroom = 16 << 20

// simGCPercent is the GOGC that gives a live heap of live bytes the target
// live + max(live/2, simGCHeadroom), at most five times live.
func simGCPercent(live uint64) int {
	if live == 0 {
		return 400
	}
	return int(max(50, min(400, 100*simGCHeadroom/live)))
}

// startSimGC ends SimulationGC's building state: it sets the target for the
// heap Build left and re-targets after every collection. Until a
// collection has marked the heap the runtime's target is its minimum heap
// (4 MiB times GOGC/100), so a heap in use above 4 MiB is collected now
// and the target set from what is live.
func startSimGC() {
	if !simGC.CompareAndSwap(simGCBuilding, simGCRunning) {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/frees:bytes"}}
	metrics.Read(s)
	if inUse := s[0].Value.Uint64() - s[1].Value.Uint64(); inUse <= 4<<20 {
		debug.SetGCPercent(simGCPercent(inUse))
	} else {
		debug.SetGCPercent(50)
		runtime.GC()
		retargetSimGC()
	}
	afterEachGC(func() bool {
		if simGC.Load() != simGCRunning {
			return false
		}
		retargetSimGC()
		return true
	})
}

// retargetSimGC sets the target from the heap the last collection marked.
func retargetSimGC() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	debug.SetGCPercent(simGCPercent(s[0].Value.Uint64()))
}

// gcTick is garbage from the moment it is made; its finalizer runs after
// the collection that finds it.
type gcTick struct{ f func() bool }

// afterEachGC calls f after every collection (on the finalizer goroutine,
// soon after the collection ends) until f returns false.
func afterEachGC(f func() bool) {
	runtime.SetFinalizer(&gcTick{f}, func(t *gcTick) {
		if t.f() {
			afterEachGC(t.f)
		}
	})
}

// CollectFinishedNetwork runs a collection once a simulation's network
// (tens of MB with thousands of flows) is no longer used, before the
// output is built, so that the output does not add to the peak. The
// collection marks only what is still live (the result), so it costs
// about a millisecond. In a process that called ReleaseColdPages it also
// returns the freed heap to the operating system and gives back the
// executable's clean pages: building the output touches code (the JSON
// encoder, reflection, the collector's own) that would otherwise sit on
// top of the whole network's memory.
func CollectFinishedNetwork() {
	if !releaseColdPages.Load() {
		runtime.GC()
		return
	}
	// Release first: the collection reads type descriptors and stack maps
	// spread through the executable, which would otherwise come on top
	// of the whole network's heap and the run's own code.
	_, _ = coldpages.Release()
	debug.FreeOSMemory()
}
