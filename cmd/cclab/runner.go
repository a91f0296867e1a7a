package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/boundedio"
	vegasstudy "github.com/cclab/cclab/papers/vegas"
	"github.com/cclab/cclab/scenarios"
)

// readFile reads a file with a clear error.
func readFile(path string) ([]byte, error) {
	_, err := os.Stat(path)
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
		if closeCapture, err = experiment.AttachPcap(n, pcapPath); err != nil {
			return nil, nil, fmt.Errorf("--pcap: %w", err)
		}
	}
	res, err := experiment.RunNetwork(ctx, n)
	if closeCapture != nil {
		if cerr := closeCapture(); cerr != nil && err == nil {
			err = fmt.Errorf("--pcap %w", cerr)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return res, n, nil
}
