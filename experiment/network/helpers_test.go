package network

import "github.com/cclab/cclab/experiment/scenario"

type scenarioT = scenario.Scenario

func parseScenario(yml string) (*scenario.Scenario, error) {
	return scenario.Parse([]byte(yml), "bench.yaml")
}
