package loss

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The empirical loss rate of n draws has standard deviation
// sqrt(p(1-p)/n) for Bernoulli; 5 sigma keeps the test deterministic in
// practice (the seed is fixed anyway) while still catching a wrong rate.
func TestBernoulliRate(t *testing.T) {
	for _, p := range []float64{0, 0.005, 0.03, 0.3} {
		b, err := NewBernoulli(p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		const n = 200000
		lost := 0
		for range n {
			if b.Lose() {
				lost++
			}
		}
		got := float64(lost) / n
		if tol := 5 * math.Sqrt(p*(1-p)/n); math.Abs(got-p) > tol {
			t.Errorf("p=%g: empirical rate %g, want within %g", p, got, tol)
		}
	}
}

func TestGilbertElliottMoments(t *testing.T) {
	cfg := GEConfig{P: 0.01, R: 0.25, LossGood: 0, LossBad: 1}
	g, err := NewGilbertElliott(cfg, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000000
	lost, bursts, run := 0, 0, 0
	var burstSum int
	for range n {
		if g.Lose() {
			lost++
			run++
		} else if run > 0 {
			bursts++
			burstSum += run
			run = 0
		}
	}
	want := g.Rate() // 0.01/0.26
	if got := float64(lost) / n; math.Abs(got-want)/want > 0.05 {
		t.Errorf("loss rate %g, want %g within 5%%", got, want)
	}
	if got, want := float64(burstSum)/float64(bursts), g.MeanBurst(); math.Abs(got-want)/want > 0.05 {
		t.Errorf("mean burst %g, want %g within 5%%", got, want)
	}
}

func TestBadParameters(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, p := range []float64{-0.1, 1, math.NaN()} {
		if _, err := NewBernoulli(p, rnd); err == nil {
			t.Errorf("NewBernoulli(%g) accepted", p)
		}
	}
	if _, err := NewGilbertElliott(GEConfig{P: 0.1, R: 0}, rnd); err == nil {
		t.Errorf("absorbing Bad state accepted")
	}
	if _, err := NewGilbertElliott(GEConfig{P: 2}, rnd); err == nil {
		t.Errorf("p=2 accepted")
	}
}
