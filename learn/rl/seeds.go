package rl

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/internal/fmtnum"
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

// MedianRule states the rule in words, for reports.
const MedianRule = "median of the independently trained policies' validation scores (rl.MedianSeed; lower is better, ties to the earlier policy), validation disjoint from evaluation"

// SeedEstimate is one metric over independently trained policies: each
// policy's own value (typically its mean over the evaluation runs), their
// mean, and the 95% confidence interval across policies (Student's t with
// n-1 degrees of freedom). It measures the training procedure, not one
// run of it; the interval is 0 for a single policy.
type SeedEstimate struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	CI95 float64 `json:"ci95"`
	N    int     `json:"n"`
	// PerSeed holds each policy's value, in policy order.
	PerSeed []float64 `json:"per_policy"`
}

// OverSeeds summarises per-policy values. NaN values (a policy without a
// measurement) are left out of the mean and the interval but kept in
// PerSeed.
func OverSeeds(perSeed []float64) SeedEstimate {
	s := metrics.Summarize(perSeed)
	return SeedEstimate{Mean: s.Mean, Std: s.Std, CI95: s.CI95, N: s.N, PerSeed: slices.Clone(perSeed)}
}

// jsonNum maps NaN and infinities, which JSON cannot hold, to null.
func jsonNum(v float64) any { return fmtnum.JSON(v) }

func jsonNums(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = jsonNum(x)
	}
	return out
}

// Format writes the estimate as "mean ±ci [v1 v2 ...]" with digits
// decimals, the per-policy values in brackets; "n/a" without a value.
func (e SeedEstimate) Format(digits int) string {
	if math.IsNaN(e.Mean) {
		return "n/a"
	}
	per := make([]string, len(e.PerSeed))
	for i, v := range e.PerSeed {
		per[i] = strconv.FormatFloat(v, 'f', digits, 64)
	}
	return fmt.Sprintf("%.*f ±%.*f [%s]", digits, e.Mean, digits, e.CI95, strings.Join(per, " "))
}

// Scale returns the estimate with every value multiplied by k (k > 0),
// e.g. a ratio as a percentage.
func (e SeedEstimate) Scale(k float64) SeedEstimate {
	out := e
	out.Mean, out.Std, out.CI95 = k*e.Mean, k*e.Std, k*e.CI95
	out.PerSeed = make([]float64, len(e.PerSeed))
	for i, v := range e.PerSeed {
		out.PerSeed[i] = k * v
	}
	return out
}

// MarshalJSON writes NaN and infinite values as null.
func (e SeedEstimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"mean": jsonNum(e.Mean), "std": jsonNum(e.Std), "ci95": jsonNum(e.CI95), "n": e.N, "per_policy": jsonNums(e.PerSeed)})
}

// Selection records which policy the rule chose and why.
type Selection struct {
	// Rule is MedianRule.
	Rule string `json:"rule"`
	// Index is the chosen policy's position in the list evaluated.
	Index int `json:"index"`
	// Scores are every policy's validation score (lower is better).
	Scores []float64 `json:"scores"`
	// Score says what a score is; Validation what it was measured on.
	Score      string `json:"score"`
	Validation string `json:"validation"`
}

// MarshalJSON writes NaN scores (policies that could not be scored) as
// null.
func (s Selection) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"rule": s.Rule, "index": s.Index, "scores": jsonNums(s.Scores), "score": s.Score, "validation": s.Validation})
}

// SelectMedian applies MedianSeed to scores and records the choice.
func SelectMedian(scores []float64, score, validation string) (Selection, error) {
	i, err := MedianSeed(scores)
	if err != nil {
		return Selection{}, err
	}
	return Selection{Rule: MedianRule, Index: i, Scores: slices.Clone(scores), Score: score, Validation: validation}, nil
}

// CheckDisjoint returns an error naming the first element of validation
// that is also in evaluation: choosing a policy on episodes it is then
// evaluated on would report the choice's luck as its quality. what names
// the elements (e.g. "seed", "trace").
func CheckDisjoint[T comparable](what string, validation, evaluation []T) error {
	ev := make(map[T]bool, len(evaluation))
	for _, x := range evaluation {
		ev[x] = true
	}
	for _, x := range validation {
		if ev[x] {
			return fmt.Errorf("rl: validation and evaluation share %s %v; the policy must be chosen on %ss disjoint from the evaluation's", what, x, what)
		}
	}
	return nil
}

// SeedRange returns the n consecutive seeds first, first+1, ...
func SeedRange(first uint64, n int) []uint64 {
	out := make([]uint64, max(n, 0))
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}
