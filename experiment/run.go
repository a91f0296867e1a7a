package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// Slice is how much simulated time runs between checks of the context:
// short enough that an interrupt stops a long run promptly. Running in
// slices gives the same events in the same order as one run to the end.
const Slice = 100 * time.Millisecond

// Run builds and runs a validated scenario. It is the one way cclab runs a
// scenario (the command, sweeps, tuning and the paper studies), so that
// cancellation behaves the same everywhere: once ctx is cancelled the run
// stops within one Slice of simulated time and Run returns an error
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
	for t := n.Now(); t < n.End() && !n.Sched.Stopped(); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted at simulated %v: %w", n.Now(), err)
		}
		t = min(t.Add(Slice), n.End())
		n.Sched.RunUntil(t)
	}
	return Summarize(n, time.Since(start)), nil
}
