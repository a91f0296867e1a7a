package rl

import (
	"math"
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
