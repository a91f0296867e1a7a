package network

import (
	"fmt"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/scenario"
)

type scenarioT = scenario.Scenario

func parseScenario(yml string) (*scenario.Scenario, error) {
	return scenario.Parse([]byte(yml), "bench.yaml")
}

// runFlows builds the scenario yml, runs it for d and returns each flow's
// sender counters and delivered bytes as text, and the events run: what
// tests compare between two runs that should or should not be the same.
func runFlows(t *testing.T, yml string, d time.Duration) (flows []string, events uint64) {
	t.Helper()
	s, err := parseScenario(yml)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return runBuilt(n, d)
}

// runBuilt is runFlows for a network already built.
func runBuilt(n *Network, d time.Duration) (flows []string, events uint64) {
	n.Sched.RunUntil(clock.Time(d))
	for _, f := range n.Flows {
		flows = append(flows, fmt.Sprintf("%+v %d", f.Sender.Stats(), f.Receiver.DeliveredBytes))
	}
	return flows, n.Sched.Events()
}
