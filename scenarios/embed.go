// Package scenarios ships cclab's built-in scenario files, so that commands
// and learning environments find them whatever the working directory.
package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/boundedio"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in scenarios (file names without .yaml).
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Bytes returns a built-in scenario's YAML.
func Bytes(name string) ([]byte, error) {
	b, err := files.ReadFile(strings.TrimSuffix(name, ".yaml") + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in scenario %q (built-in: %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Read returns a scenario file's bytes (at most scenario.MaxFileSize), or,
// when no file has that path, the built-in scenario of that name ("cclab
// run satcom-uhf"). If neither exists the error wraps fs.ErrNotExist and
// lists the built-in scenarios.
func Read(path string) ([]byte, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if b, berr := Bytes(path); berr == nil {
			return b, nil
		}
		return nil, fmt.Errorf("%w (built-in scenarios: %s)", err, strings.Join(Names(), ", "))
	}
	if err != nil {
		return nil, err
	}
	return boundedio.ReadFile(path, scenario.MaxFileSize, "scenario file")
}

// Load parses and validates a built-in scenario. Relative paths in it (trace
// files) resolve against the repository's scenarios directory.
func Load(name string) (*scenario.Scenario, error) {
	b, err := Bytes(name)
	if err != nil {
		return nil, err
	}
	return scenario.Parse(b, "scenarios/"+strings.TrimSuffix(name, ".yaml")+".yaml")
}
