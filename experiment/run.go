package experiment

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// Run builds and runs a validated scenario. It is the one way cclab runs a
// scenario (the command, sweeps, tuning and the paper studies), so that
// cancellation behaves the same everywhere: once ctx is cancelled the run
// stops within a few thousand events and Run returns an error
// wrapping ctx's error and naming the simulated time reached.
func Run(ctx context.Context, s *scenario.Scenario) (*Result, *network.Network, error) {
	n, err := network.Build(s)
	if err != nil {
		return nil, nil, err
	}
	res, err := RunNetwork(ctx, n)
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
	start := time.Now()
	if err := n.RunContext(ctx); err != nil {
		return nil, err
	}
	return Summarize(n, time.Since(start)), nil
}

// SimulationGC sets the garbage collector's heap target for a process that
// runs one large simulation (cclab run, cclab-sim) to 50% unless GOGC is
// set. A simulation allocates its flows' state as the flows start and
// their windows grow, and nothing per packet after, so its live heap is
// nearly all of it and the default target (twice the live heap) mostly
// holds start-up garbage: at 1.5 times, a 10,000-flow run peaks about
// 11 MiB lower for a few more collections of a heap that changes little
// (no measurable CPU time; docs/performance.md).
func SimulationGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}

// CollectFinishedNetwork runs a collection once a simulation's network
// (tens of MB with thousands of flows) is no longer used, before the
// output is built, so that the output reuses that memory instead of adding
// to the peak. The collection marks only what is still live (the result),
// so it costs about a millisecond.
func CollectFinishedNetwork() { runtime.GC() }
