package rl

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestMedianSeed(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		scores []float64
		want   int
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{5}, 0},
		{[]float64{4, 1, 3, 2}, 3}, // lower median of 1 2 3 4: 2, at index 3
		{[]float64{2, 2, 2}, 1},    // ties keep index order
		{[]float64{nan, 1, 2}, 2},  // NaN ranks last
		{[]float64{10, 30, 20, 50, 40}, 1},
	} {
		got, err := MedianSeed(c.scores)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("MedianSeed(%v) = %d, want %d", c.scores, got, c.want)
		}
	}
	if _, err := MedianSeed(nil); err == nil {
		t.Error("MedianSeed(nil) gave no error")
	}
}

// TestOverSeeds checks the interval across policies against a hand
// computation: values 1, 2, 6 have mean 3, sample variance
// ((1-3)² + (2-3)² + (6-3)²) / 2 = 7, and a 95% half-width of
// t(0.975, 2) * sqrt(7/3) = 4.302653 * 1.527525 = 6.572411.
func TestOverSeeds(t *testing.T) {
	e := OverSeeds([]float64{1, 2, 6})
	if e.N != 3 || e.Mean != 3 || math.Abs(e.Std-math.Sqrt(7)) > 1e-12 || math.Abs(e.CI95-6.572411) > 1e-5 {
		t.Errorf("OverSeeds(1, 2, 6) = %+v, want mean 3, std %.6f, CI 6.572411", e, math.Sqrt(7))
	}
	if len(e.PerSeed) != 3 || e.PerSeed[2] != 6 {
		t.Errorf("per-policy values %v, want 1 2 6", e.PerSeed)
	}
	one := OverSeeds([]float64{4})
	if one.Mean != 4 || one.CI95 != 0 || one.N != 1 {
		t.Errorf("one policy: %+v, want mean 4 and interval 0", one)
	}
	// A policy without a value is left out of the mean but kept in the
	// per-policy list, and JSON (which has no NaN) gets a null.
	nan := OverSeeds([]float64{1, math.NaN(), 3})
	if nan.N != 2 || nan.Mean != 2 {
		t.Errorf("with a NaN: %+v, want 2 values, mean 2", nan)
	}
	js, err := json.Marshal(nan)
	if err != nil || !strings.Contains(string(js), `"per_policy":[1,null,3]`) {
		t.Errorf("JSON %s, err %v; want the NaN as null", js, err)
	}
}

func TestSelectMedianAndDisjoint(t *testing.T) {
	// Crafted scores: the median (20) is at index 2, the best (10) at 0.
	s, err := SelectMedian([]float64{10, 30, 20}, "score", "val")
	if err != nil || s.Index != 2 || s.Rule != MedianRule || len(s.Scores) != 3 {
		t.Errorf("SelectMedian = %+v, %v; want index 2 under MedianRule", s, err)
	}
	if js, err := json.Marshal(Selection{Scores: []float64{1, math.NaN()}}); err != nil || !strings.Contains(string(js), `"scores":[1,null]`) {
		t.Errorf("selection JSON %s, err %v; want a NaN score as null", js, err)
	}
	if _, err := SelectMedian(nil, "", ""); err == nil {
		t.Error("no scores gave no error")
	}
	if err := CheckDisjoint("seed", SeedRange(100, 5), SeedRange(1, 99)); err != nil {
		t.Errorf("disjoint ranges: %v", err)
	}
	err = CheckDisjoint("seed", SeedRange(100, 5), SeedRange(104, 3))
	if err == nil || !strings.Contains(err.Error(), "seed 104") {
		t.Errorf("overlapping ranges gave %v, want an error naming seed 104", err)
	}
	if err := CheckDisjoint("trace", []string{"a", "b"}, []string{"c", "b"}); err == nil || !strings.Contains(err.Error(), "trace b") {
		t.Errorf("shared trace gave %v, want an error naming it", err)
	}
	if got := SeedRange(7, 3); len(got) != 3 || got[0] != 7 || got[2] != 9 {
		t.Errorf("SeedRange(7, 3) = %v", got)
	}
}

func TestSeedEstimateFormat(t *testing.T) {
	if got := OverSeeds([]float64{1, 2, 6}).Format(2); got != "3.00 ±6.57 [1.00 2.00 6.00]" {
		t.Errorf("Format = %q", got)
	}
	if got := OverSeeds([]float64{0.2, 0.4, 0.6}).Scale(100).Format(1); got != "40.0 ±49.7 [20.0 40.0 60.0]" {
		t.Errorf("Scale(100).Format = %q", got)
	}
	if got := OverSeeds([]float64{math.NaN()}).Format(1); got != "n/a" {
		t.Errorf("no value: %q", got)
	}
}
