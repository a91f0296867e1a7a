package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/boundedio"
	vegasstudy "github.com/cclab/cclab/papers/vegas"
	"github.com/cclab/cclab/scenarios"
)

const defaultSample = 100 * time.Millisecond

// readFile reads a file with a clear error.
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Not a file: maybe a built-in scenario ("cclab run satcom-uhf"),
		// or a scenario file of the repository built into cclab.
		if b, berr := scenarios.Bytes(path); berr == nil {
			return b, nil
		}
		if filepath.Clean(path) == vegasstudy.ScenarioPath {
			return vegasstudy.Scenario, nil
		}
		return nil, fmt.Errorf("%w (built-in scenarios: %s)", err, strings.Join(scenarios.Names(), ", "))
	}
	if err != nil {
		return nil, err
	}
	_ = st
	return boundedio.ReadFile(path, scenario.MaxFileSize, "scenario file")
}

// runScenario builds, optionally captures, and runs one scenario.
func runScenario(ctx context.Context, s *scenario.Scenario, pcapPath string) (*experiment.Result, *network.Network, error) {
	n, err := network.Build(s)
	if err != nil {
		return nil, nil, err
	}
	var closeCapture func() error
	if pcapPath != "" {
		if closeCapture, err = attachCapture(n, pcapPath); err != nil {
			return nil, nil, err
		}
	}
	start := time.Now()
	runWithContext(ctx, n)
	wall := time.Since(start)
	if closeCapture != nil {
		if err := closeCapture(); err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("interrupted at simulated %v: %w", n.Now(), err)
	}
	return experiment.Summarize(n, wall), n, nil
}

// runWithContext runs until the end or an interrupt (checked every few
// thousand events, see network.RunContext).
func runWithContext(ctx context.Context, n *network.Network) {
	_ = n.RunContext(ctx)
}

func nan() float64 { return math.NaN() }
