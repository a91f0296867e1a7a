package experiment

import (
	"context"
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
