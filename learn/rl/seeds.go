package rl

import (
	"fmt"
	"math"
	"slices"
)

// The rule for which of several independently trained policies ships,
// stated before any result is seen and shared by every learned controller
// (MARLIN, DeepCC, the data-centre tuner): train N >= 3 seeds with one
// configuration, score each on validation episodes disjoint from the
// evaluation episodes (lower is better, e.g. mean transfer time), and ship
// the median. Shipping the best of N instead reports the favourable tail
// of the training distribution as if it were typical; results are
// reported over all N seeds (mean and 95% confidence interval), never the
// shipped one alone.

// MedianSeed returns the index of the median of scores, the lower median
// for an even count; ties go to the lower index. NaN scores (a policy that
// could not be scored) rank last.
func MedianSeed(scores []float64) (int, error) {
	if len(scores) == 0 {
		return 0, fmt.Errorf("rl: no seeds to choose from")
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) float64 {
		if math.IsNaN(scores[i]) {
			return math.Inf(1)
		}
		return scores[i]
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return idx[(len(idx)-1)/2], nil
}
