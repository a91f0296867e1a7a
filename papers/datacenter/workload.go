package datacenter

import (
	"fmt"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
)

// Workload is a named training and evaluation setting: the base scenario,
// the agent's step and episode length, and the episode randomisation.
type Workload struct {
	Name, Doc string
	// Scenario is the built-in base scenario's name.
	Scenario string
	// Interval is the agent step T2; Steps the steps per episode.
	Interval time.Duration
	Steps    int
	Random   Randomization
	// Policy is the trained PPO policy built into cclab for the workload
	// (dc eval's default).
	Policy string
}

// PaperRandomization is the paper's own workload (section VI): bandwidth
// 1-10 Mbit/s, latency 10-50 ms, flows joining and leaving, events every
// U(1 s, 50 s). On scenario dc-paper (1 ms one-way bottleneck delay) a
// group's one-way extra delay of 4-24 ms gives propagation RTTs of 10-50
// ms. The paper does not say how the values are drawn; like the
// data-centre workload, rates and delays are log-uniform. Background load
// 5-30 % of the initial 10 Mbit/s (the paper names no background traffic;
// its "flows joining and leaving" are the churn and the arrivals).
func PaperRandomization() Randomization {
	return Randomization{
		EventGap:  [2]time.Duration{time.Second, 50 * time.Second},
		PathDelay: [2]time.Duration{4 * time.Millisecond, 24 * time.Millisecond},
		Rate:      [2]units.Bandwidth{units.Mbps, 10 * units.Mbps},
		Load:      [2]float64{0.05, 0.3},
		Churn:     0.5,
	}
}

// Workloads are the built-in workloads.
var Workloads = []Workload{
	{Name: "datacenter", Doc: "a 1 Gbit/s data centre: events every 0.3-1.2 s, RTTs 0.04-2 ms, 300 Mbit/s - 1 Gbit/s, 10-40 % background (the default)",
		Scenario: "datacenter", Interval: DefaultInterval, Steps: DefaultSteps, Random: TrainingRandomization(), Policy: ShippedPolicyPath},
	{Name: "paper", Doc: "the paper's emulation: 1-10 Mbit/s, RTTs 10-50 ms, events every U(1, 50) s, flows joining and leaving; agent step 1 s, 120-s episodes",
		Scenario: "dc-paper", Interval: time.Second, Steps: 120, Random: PaperRandomization(), Policy: ShippedPaperPolicyPath},
}

// LookupWorkload returns the named workload.
func LookupWorkload(name string) (Workload, error) {
	var names []string
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return Workload{}, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(names, ", "))
}
