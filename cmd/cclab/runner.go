package main

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/cclab/cclab/experiment"
	vegasstudy "github.com/cclab/cclab/papers/vegas"
	"github.com/cclab/cclab/scenarios"
)

// readFile reads a scenario file, a built-in scenario, or a scenario file
// of the repository built into cclab, with a clear error.
func readFile(path string) ([]byte, error) {
	b, err := scenarios.Read(path)
	if errors.Is(err, fs.ErrNotExist) && filepath.Clean(path) == vegasstudy.ScenarioPath {
		return vegasstudy.Scenario, nil
	}
	return b, err
}

// captureFlags are the flags cclab run and cclab emu set
// experiment.Capture's fields with.
var captureFlags = map[string]string{"Departures": "--pcap", "Arrivals": "--pcap-arrivals", "Drops": "--pcap-drops"}

// checkCaptures refuses one file named by two capture flags, in the
// flags' words.
func checkCaptures(c experiment.Capture) error {
	err := c.Check()
	if same, ok := errors.AsType[*experiment.SameFileError](err); ok {
		return usagef("%s and %s both name %s: each capture needs a file of its own", captureFlags[same.A], captureFlags[same.B], same.Path)
	}
	return err
}
