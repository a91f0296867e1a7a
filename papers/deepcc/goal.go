package deepcc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// Goal is DeepCC's goal vector g_t (section IV-A, Table II): the relative
// weights of throughput, delay and loss in the reward. Weights are
// non-negative and sum to 1, as in training ("the sum of each dimension of
// goal vector is 1"). Index with tuner.Throughput, tuner.Delay, tuner.Loss.
type Goal [tuner.Dims]float64

// NewGoal normalises three non-negative weights into a Goal.
func NewGoal(throughput, delay, loss float64) (Goal, error) {
	g := Goal{throughput, delay, loss}
	sum := 0.0
	for _, w := range g {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return Goal{}, fmt.Errorf("deepcc: goal weights %v must be finite and non-negative", [3]float64(g))
		}
		sum += w
	}
	if sum <= 0 {
		return Goal{}, fmt.Errorf("deepcc: goal weights %v have no positive weight", [3]float64(g))
	}
	for i := range g {
		g[i] /= sum
	}
	return g, nil
}

// Validate reports whether g lies on the simplex (to 1e-6).
func (g Goal) Validate() error {
	sum := 0.0
	for _, w := range g {
		if math.IsNaN(w) || w < 0 || w > 1 {
			return fmt.Errorf("deepcc: goal %v has a weight outside [0, 1]", [3]float64(g))
		}
		sum += w
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("deepcc: goal %v sums to %g, want 1", [3]float64(g), sum)
	}
	return nil
}

// String formats the goal as (throughput, delay, loss) weights.
func (g Goal) String() string { return fmt.Sprintf("(%.2f, %.2f, %.2f)", g[0], g[1], g[2]) }

// SampleGoal draws a goal uniformly from the simplex (a flat Dirichlet):
// the paper's "random goal for each training episode". Normalised
// exponential draws are the standard construction (Devroye 1986, XI.4).
func SampleGoal(r *rand.Rand) Goal {
	var g Goal
	sum := 0.0
	for i := range g {
		g[i] = r.ExpFloat64()
		sum += g[i]
	}
	for i := range g {
		g[i] /= sum
	}
	return g
}
