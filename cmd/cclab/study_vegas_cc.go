package main

import (
	"strings"

	"github.com/cclab/cclab/analysis/tune"
	"github.com/cclab/cclab/experiment/scenario"
)

// vegasSpec is the Vegas study's search for the Vegas controller the
// scenario's flows use: "vegas" (Linux semantics) in the default scenario,
// "vegas_ns3" (ns-3 3.37's TcpVegas) in papers/vegas/vegas-ns3.yaml.
func vegasSpec(s *scenario.Scenario) tune.Spec {
	name := "vegas"
	for _, f := range s.Flows {
		if strings.HasPrefix(f.CC.Name, "vegas") {
			name = f.CC.Name
			break
		}
	}
	rename := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strings.ReplaceAll(x, "vegas.", name+".")
		}
		return out
	}
	return tune.Spec{Params: rename(vegasParams), Objectives: vegasObjectives, Constraints: rename(vegasConstraints)}
}
