package deepcc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestRewardIsGoalDotMeasurement(t *testing.T) {
	tests := []struct {
		g    Goal
		m    Measurement
		want float64
	}{
		{Goal{0.5, 0.3, 0.2}, Measurement{0.8, -0.4, -0.1}, 0.4 - 0.12 - 0.02},
		{Goal{1, 0, 0}, Measurement{0.93, -3, -1}, 0.93},
		{Goal{0, 1, 0}, Measurement{0.93, -3, -1}, -3},
		{Goal{0, 0, 1}, Measurement{0.93, -3, -0.5}, -0.5},
		{Goal{1.0 / 3, 1.0 / 3, 1.0 / 3}, Measurement{0.9, -0.3, 0}, 0.2},
	}
	for _, tt := range tests {
		if got := Reward(tt.g, tt.m); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Reward(%v, %v) = %g, want %g", tt.g, tt.m, got, tt.want)
		}
	}
}

func TestMeasureNormalisation(t *testing.T) {
	tests := []struct {
		util   float64
		qdelay time.Duration
		loss   float64
		want   Measurement
	}{
		// 80% utilisation, 40 ms of queueing = 0.4 x DelayScale, 1% loss = 0.1.
		{0.8, 40 * time.Millisecond, 0.01, Measurement{0.8, -0.4, -0.1}},
		{0, 0, 0, Measurement{0, 0, 0}},
		// Caps: utilisation at 4, delay at 5 (500 ms); loss is linear to 100%.
		{7, 2 * time.Second, 0.5, Measurement{4, -5, -5}},
		{math.NaN(), -time.Millisecond, -0.1, Measurement{0, 0, 0}},
		{1, 100 * time.Millisecond, 1, Measurement{1, -1, -10}},
	}
	for _, tt := range tests {
		got := Measure(tt.util, tt.qdelay, tt.loss)
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-12 {
				t.Errorf("Measure(%g, %v, %g) = %v, want %v", tt.util, tt.qdelay, tt.loss, got, tt.want)
				break
			}
		}
	}
}

func TestSampleGoalStaysInSimplexAndIsUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	var mean [3]float64
	above := 0
	for range n {
		g := SampleGoal(r)
		if err := g.Validate(); err != nil {
			t.Fatalf("sample %v: %v", g, err)
		}
		for i, w := range g {
			mean[i] += w / n
		}
		if g[0] > 0.5 {
			above++
		}
	}
	// Flat Dirichlet(1,1,1): each mean is 1/3 (sd of one weight
	// sqrt(2/36) = 0.236, of the mean over n 0.0017), and a weight's
	// marginal is Beta(1, 2), so P(w > 1/2) = (1 - 1/2)^2 = 1/4 (sd of
	// the fraction 0.003).
	for i, m := range mean {
		if math.Abs(m-1.0/3) > 0.01 {
			t.Errorf("mean weight %d = %.4f, want 1/3 +- 0.01", i, m)
		}
	}
	if f := float64(above) / n; math.Abs(f-0.25) > 0.015 {
		t.Errorf("P(throughput weight > 1/2) = %.4f, want 0.25 +- 0.015 (uniform on the simplex)", f)
	}
}

func TestNewGoal(t *testing.T) {
	g, err := NewGoal(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g != (Goal{0.5, 0.25, 0.25}) {
		t.Errorf("NewGoal(2, 1, 1) = %v, want (0.5, 0.25, 0.25)", g)
	}
	for _, bad := range [][3]float64{{0, 0, 0}, {-1, 1, 1}, {math.NaN(), 1, 1}, {math.Inf(1), 0, 0}} {
		if _, err := NewGoal(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("NewGoal(%v) gave no error", bad)
		}
	}
	if err := (Goal{0.5, 0.6, 0}).Validate(); err == nil || !strings.Contains(err.Error(), "sums to") {
		t.Errorf("Validate of a goal summing to 1.1: err = %v, want one saying it sums to 1.1", err)
	}
}
