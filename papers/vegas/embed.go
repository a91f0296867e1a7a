// Package vegas ships the Vegas study's scenario (see README.md in this
// directory), so that `cclab study vegas` runs from any directory.
package vegas

import _ "embed"

// ScenarioPath is the scenario's path in the repository; relative paths in
// it (the trace) resolve against it.
const ScenarioPath = "papers/vegas/vegas.yaml"

// Scenario is the YAML of vegas.yaml.
//
//go:embed vegas.yaml
var Scenario []byte
