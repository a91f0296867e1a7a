package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistQuantilesAgainstExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	var h Hist
	var xs []float64
	for range 50000 {
		d := time.Duration(20e6 + rnd.ExpFloat64()*30e6) // 20 ms + exp(30 ms)
		h.Add(d)
		xs = append(xs, float64(d))
	}
	slices.Sort(xs)
	for _, q := range []float64{0.01, 0.5, 0.95, 0.99} {
		exact := xs[int(math.Ceil(q*float64(len(xs))))-1]
		got := float64(h.Quantile(q))
		if rel := math.Abs(got-exact) / exact; rel > relErr {
			t.Errorf("q=%g: got %.0f, exact %.0f (rel error %.4f > %g)", q, got, exact, rel, relErr)
		}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	if got, want := float64(h.Mean()), sum/float64(len(xs)); math.Abs(got-want) > 1 {
		t.Errorf("mean %g, want exact %g", got, want)
	}
	if h.Min() != time.Duration(xs[0]) || h.Max() != time.Duration(xs[len(xs)-1]) {
		t.Errorf("min/max %v/%v, want %v/%v", h.Min(), h.Max(), xs[0], xs[len(xs)-1])
	}
}

func TestHistMerge(t *testing.T) {
	var a, b, all Hist
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		if i%3 == 0 {
			a.Add(d * 1000)
		} else {
			b.Add(d)
		}
		if i%3 == 0 {
			all.Add(d * 1000)
		} else {
			all.Add(d)
		}
	}
	var m Hist
	m.Merge(&a)
	m.Merge(&b)
	if m.Count() != all.Count() || m.Mean() != all.Mean() || m.Min() != all.Min() || m.Max() != all.Max() {
		t.Fatalf("merged n/mean/min/max = %d/%v/%v/%v, want %d/%v/%v/%v", m.Count(), m.Mean(), m.Min(), m.Max(), all.Count(), all.Mean(), all.Min(), all.Max())
	}
	for _, q := range []float64{0.1, 0.5, 0.9} {
		if m.Quantile(q) != all.Quantile(q) {
			t.Errorf("q=%g: merged %v, direct %v", q, m.Quantile(q), all.Quantile(q))
		}
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		x    []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{3, 1}, 16.0 / 20},
		{nil, 1},
	}
	for _, tt := range tests {
		if got := Jain(tt.x); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Jain(%v) = %g, want %g", tt.x, got, tt.want)
		}
	}
}

func TestRTI(t *testing.T) {
	// Two links; max RTT twice the nominal on one, equal on the other:
	// ln((2+1)/2).
	if got, want := RTI([]float64{2, 0.25}, []float64{1, 0.25}), math.Log(1.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("RTI = %g, want %g", got, want)
	}
	if got := RTI([]float64{0.5}, []float64{0.5}); got != 0 {
		t.Errorf("flawless RTI = %g, want 0", got)
	}
	if got := RTI([]float64{0}, []float64{1}); !math.IsNaN(got) {
		t.Errorf("RTI without samples = %g, want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{1, 2, 3, 4, math.NaN()})
	if s.N != 4 || s.NaNs != 1 || s.Mean != 2.5 || s.P50 != 2.5 || s.Min != 1 || s.Max != 4 {
		t.Errorf("Summarize = %+v", s)
	}
	// std of 1..4 = sqrt(5/3); t(0.975, 3) = 3.182446
	if want := 3.182446 * math.Sqrt(5.0/3) / 2; math.Abs(s.CI95-want) > 1e-5 {
		t.Errorf("CI95 = %g, want %g", s.CI95, want)
	}
	if got := Percentile([]float64{10, 20, 30}, 0.95); math.Abs(got-29) > 1e-12 {
		t.Errorf("P95 of 10,20,30 = %g, want 29", got)
	}
}
