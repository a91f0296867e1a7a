// Package scenarios ships cclab's built-in scenario files, so that commands
// and learning environments find them whatever the working directory.
package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/cclab/cclab/experiment/scenario"
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

// Load parses and validates a built-in scenario. Relative paths in it (trace
// files) resolve against the repository's scenarios directory.
func Load(name string) (*scenario.Scenario, error) {
	b, err := Bytes(name)
	if err != nil {
		return nil, err
	}
	return scenario.Parse(b, "scenarios/"+strings.TrimSuffix(name, ".yaml")+".yaml")
}
