package deepcc

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// Target-grid constants: the paper's targets are absolute ("8 Mbps ... 70
// ms ... 1%"); ours scale the throughput bound with each trace's mean
// capacity so that every trace gets targets from easy to infeasible.
var (
	// TargetThroughputShares are the throughput bounds as fractions of a
	// trace's mean capacity.
	TargetThroughputShares = []float64{0.4, 0.6, 0.8}
	// TargetDelaysMs are the 95th-percentile queueing-delay bounds, ms.
	TargetDelaysMs = []float64{50, 100, 200}
	// TargetLoss is every target's loss bound (the paper's example: 1%).
	TargetLoss = 0.01
)

// TargetsFor returns the target grid for a trace of mean capacity capMbps:
// every combination of TargetThroughputShares x capacity (rounded to 0.1
// Mbit/s) and TargetDelaysMs, each with the TargetLoss bound.
func TargetsFor(capMbps float64) []tuner.Target {
	var out []tuner.Target
	for _, s := range TargetThroughputShares {
		thr := math.Max(0.1, math.Round(s*capMbps*10)/10)
		for _, d := range TargetDelaysMs {
			out = append(out, tuner.Target{MinThroughputMbps: thr, MaxDelayMs: d, MaxLoss: TargetLoss})
		}
	}
	return out
}

// Attempt is one run judged against one target.
type Attempt struct {
	Target  tuner.Target `json:"target"`
	Outcome Outcome      `json:"outcome"`
}

// Met reports whether the run met the target: its throughput, 95th
// percentile queueing delay and loss over the whole run are within bounds.
func (a Attempt) Met() bool { return a.Target.Met(a.Outcome.Metrics()) }

// Completion is a Target Completion Ratio (paper section VI-B: "the ratio
// of target achieved to all targets").
type Completion struct {
	Met   int     `json:"met"`
	Total int     `json:"total"`
	Ratio float64 `json:"ratio"`
}

// String formats the ratio as "67.4% (29/43)".
func (c Completion) String() string {
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*c.Ratio, c.Met, c.Total)
}

// Add merges another count into c.
func (c Completion) Add(o Completion) Completion {
	c.Met += o.Met
	c.Total += o.Total
	c.Ratio = ratio(c.Met, c.Total)
	return c
}

// TCR is the fraction of attempts that met their target. Each attempt
// counts once: a classic controller's run is judged against every target
// (it cannot be told the target), DeepCC's tuned runs each pursue one.
func TCR(attempts []Attempt) Completion {
	c := Completion{Total: len(attempts)}
	for _, a := range attempts {
		if a.Met() {
			c.Met++
		}
	}
	c.Ratio = ratio(c.Met, c.Total)
	return c
}

// ratio is met/total, 0 for no attempts (JSON has no NaN).
func ratio(met, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(met) / float64(total)
}
