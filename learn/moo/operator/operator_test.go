package operator

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// TestSBXBetaQHandComputed checks the spread factor with bounds far away
// (beta -> Inf, so alpha = 2 and the distribution is untruncated):
// u = 0.25 gives (2u)^(1/(eta+1)) = 0.5^(1/16), u = 0.75 gives
// (1/(2-2u))^(1/(eta+1)) = 2^(1/16), and u = 0.5 gives exactly 1.
func TestSBXBetaQHandComputed(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct{ beta, eta, u, want float64 }{
		{inf, 15, 0.25, math.Pow(0.5, 1.0/16)},
		{inf, 15, 0.75, math.Pow(2, 1.0/16)},
		{inf, 15, 0.5, 1},
		// Truncated: beta = 2, eta = 1: alpha = 2 - 2^-2 = 1.75; u = 0.2
		// (<= 1/alpha) gives sqrt(0.35).
		{2, 1, 0.2, math.Sqrt(0.35)},
		// u = 0.9 (> 1/alpha): sqrt(1/(2 - 1.575)).
		{2, 1, 0.9, math.Sqrt(1 / (2 - 0.9*1.75))},
	}
	for _, tc := range tests {
		if got := sbxBetaQ(tc.beta, tc.eta, tc.u); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("sbxBetaQ(%v, %v, %v) = %v, want %v", tc.beta, tc.eta, tc.u, got, tc.want)
		}
	}
}

// TestSBXSpreadDistribution checks SBX against its defining distribution
// (Deb and Agrawal 1995): with bounds far away the spread factor
// beta = |c1-c2| / |p1-p2| has P(beta <= b) = b^(eta+1)/2 for b <= 1 and
// P(beta > b) = b^-(eta+1)/2 for b > 1, and the children's mean equals the
// parents'. With n = 100,000 samples a probability's standard error is at
// most 0.0016; the tolerance 0.008 is five of them.
func TestSBXSpreadDistribution(t *testing.T) {
	r := newRand(1)
	const n = 100000
	sbx := SBX{Eta: 15, VarProb: 1}
	lo, hi := []float64{-1e6}, []float64{1e6}
	p1, p2 := []float64{1}, []float64{3}
	c1, c2 := make([]float64, 1), make([]float64, 1)
	var below1, below95, above105 int
	for range n {
		sbx.Cross(r, lo, hi, p1, p2, c1, c2)
		if m := (c1[0] + c2[0]) / 2; math.Abs(m-2) > 1e-9 {
			t.Fatalf("children mean %v, want the parents' mean 2", m)
		}
		beta := math.Abs(c1[0]-c2[0]) / 2
		if beta <= 1 {
			below1++
		}
		if beta <= 0.95 {
			below95++
		}
		if beta > 1.05 {
			above105++
		}
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"P(beta <= 1)", float64(below1) / n, 0.5},
		{"P(beta <= 0.95)", float64(below95) / n, 0.5 * math.Pow(0.95, 16)},
		{"P(beta > 1.05)", float64(above105) / n, 0.5 * math.Pow(1.05, -16)},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 0.008 {
			t.Errorf("%s: got %.4f, want %.4f", c.name, c.got, c.want)
		}
	}
}

// TestOperatorsStayInBounds runs every operator on random vectors, including
// parents on the bounds and bounds half a unit wide, and checks children stay
// within the bounds.
func TestOperatorsStayInBounds(t *testing.T) {
	r := newRand(2)
	crossovers := []Crossover{SBX{}, SBX{Eta: 1, VarProb: 1}, Mean{}, NoCrossover{}}
	mutations := []Mutation{Polynomial{}, Polynomial{Eta: 1, Prob: 1}, Uniform{Prob: 1}, NoMutation{}}
	const nv = 6
	lo, hi := make([]float64, nv), make([]float64, nv)
	p1, p2, c1, c2 := make([]float64, nv), make([]float64, nv), make([]float64, nv), make([]float64, nv)
	for trial := 0; trial < 5000; trial++ {
		for i := range lo {
			lo[i] = r.Float64()*20 - 10
			hi[i] = lo[i] + 0.5 + r.Float64()*10
			p1[i] = pick(r, lo[i], hi[i])
			p2[i] = pick(r, lo[i], hi[i])
		}
		cx := crossovers[trial%len(crossovers)]
		cx.Cross(r, lo, hi, p1, p2, c1, c2)
		mu := mutations[trial%len(mutations)]
		mu.Mutate(r, lo, hi, c1)
		mu.Mutate(r, lo, hi, c2)
		for i := range lo {
			for _, c := range []float64{c1[i], c2[i]} {
				if !(c >= lo[i] && c <= hi[i]) {
					t.Fatalf("%T then %T: child gene %d = %v outside [%v, %v] (parents %v, %v)", cx, mu, i, c, lo[i], hi[i], p1[i], p2[i])
				}
			}
		}
	}
}

// pick returns a bound or an interior point.
func pick(r *rand.Rand, lo, hi float64) float64 {
	switch r.IntN(4) {
	case 0:
		return lo
	case 1:
		return hi
	}
	return lo + r.Float64()*(hi-lo)
}

// TestPolynomialDistribution checks polynomial mutation against its
// distribution: for x in the middle of [0, 1] the truncation term
// (1/2)^(eta+1) is negligible (5e-7 for eta = 20), so the perturbation
// delta = x' - x satisfies P(delta <= -t) = P(delta >= t) = (1-t)^(eta+1)/2.
// Tolerance: five standard errors of a proportion over 100,000 draws.
func TestPolynomialDistribution(t *testing.T) {
	r := newRand(3)
	const n = 100000
	pm := Polynomial{Eta: 20, Prob: 1}
	lo, hi, x := []float64{0}, []float64{1}, []float64{0}
	var neg, farNeg, farPos int
	for range n {
		x[0] = 0.5
		pm.Mutate(r, lo, hi, x)
		d := x[0] - 0.5
		if d < 0 {
			neg++
		}
		if d <= -0.05 {
			farNeg++
		}
		if d >= 0.05 {
			farPos++
		}
	}
	want := 0.5 * math.Pow(0.95, 21)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"P(delta < 0)", float64(neg) / n, 0.5},
		{"P(delta <= -0.05)", float64(farNeg) / n, want},
		{"P(delta >= 0.05)", float64(farPos) / n, want},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 0.008 {
			t.Errorf("%s: got %.4f, want %.4f", c.name, c.got, c.want)
		}
	}
}

// TestMutationRates checks the default per-variable probability 1/n of
// polynomial and uniform mutation, and that uniform mutation's new values are
// uniform (mean at the midpoint, variance (hi-lo)^2/12).
func TestMutationRates(t *testing.T) {
	r := newRand(4)
	const nv, rounds = 10, 20000
	lo, hi := make([]float64, nv), make([]float64, nv)
	for i := range hi {
		hi[i] = 12
	}
	x := make([]float64, nv)
	for _, mu := range []Mutation{Polynomial{}, Uniform{}} {
		var changed int
		var sum, sum2 float64
		for range rounds {
			for i := range x {
				x[i] = 3
			}
			mu.Mutate(r, lo, hi, x)
			for _, v := range x {
				if v != 3 {
					changed++
					sum += v
					sum2 += v * v
				}
			}
		}
		// 200,000 Bernoulli(0.1) trials: standard error 0.00067.
		if got := float64(changed) / (nv * rounds); math.Abs(got-0.1) > 0.004 {
			t.Errorf("%T: fraction of genes mutated %.4f, want 0.1", mu, got)
		}
		if _, ok := mu.(Uniform); ok {
			mean := sum / float64(changed)
			variance := sum2/float64(changed) - mean*mean
			// About 20,000 values: the mean's standard error is 0.025.
			if math.Abs(mean-6) > 0.12 || math.Abs(variance-12) > 0.5 {
				t.Errorf("uniform mutation: mean %.3f variance %.3f, want 6 and 12", mean, variance)
			}
		}
	}
}

// TestMeanCrossover checks the paper operator's invariants: every child gene
// is the parents' mean or one of the parents' genes, the two children's genes
// sum to the parents', and the mean branch is taken half the time.
func TestMeanCrossover(t *testing.T) {
	r := newRand(5)
	const n = 40000
	lo, hi := []float64{0, 0}, []float64{100, 100}
	p1, p2 := []float64{10, 40}, []float64{30, 40}
	c1, c2 := make([]float64, 2), make([]float64, 2)
	var means, first int
	for range n {
		Mean{}.Cross(r, lo, hi, p1, p2, c1, c2)
		if c1[0]+c2[0] != 40 {
			t.Fatalf("children genes %v + %v, want sum 40", c1[0], c2[0])
		}
		switch c1[0] {
		case 20:
			if c2[0] != 20 {
				t.Fatalf("mean branch gave %v and %v, want 20 and 20", c1[0], c2[0])
			}
			means++
		case 10:
			first++
		case 30:
		default:
			t.Fatalf("child gene %v, want 20 (mean), 10 or 30 (mean -/+ deviation)", c1[0])
		}
		if c1[1] != 40 || c2[1] != 40 {
			t.Fatalf("equal parent genes 40 gave %v and %v, want 40", c1[1], c2[1])
		}
	}
	// Standard error of each proportion is at most 0.0025.
	if got := float64(means) / n; math.Abs(got-0.5) > 0.0125 {
		t.Errorf("mean branch frequency %.4f, want 0.5", got)
	}
	if got := float64(first) / n; math.Abs(got-0.25) > 0.0125 {
		t.Errorf("child 1 = lower parent frequency %.4f, want 0.25", got)
	}
}

func TestSameSeedSameChildren(t *testing.T) {
	lo, hi := []float64{0, 0, 0}, []float64{1, 1, 1}
	p1, p2 := []float64{0.1, 0.5, 0.9}, []float64{0.8, 0.2, 0.3}
	run := func() []float64 {
		r := newRand(9)
		c1, c2 := make([]float64, 3), make([]float64, 3)
		var out []float64
		for range 10 {
			SBX{}.Cross(r, lo, hi, p1, p2, c1, c2)
			Polynomial{}.Mutate(r, lo, hi, c1)
			out = append(out, c1...)
			out = append(out, c2...)
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("value %d: got %v then %v with the same seed", i, a[i], b[i])
		}
	}
}

func TestByName(t *testing.T) {
	for _, name := range CrossoverNames {
		if _, err := CrossoverByName(name); err != nil {
			t.Errorf("CrossoverByName(%q): %v", name, err)
		}
	}
	for _, name := range MutationNames {
		if _, err := MutationByName(name); err != nil {
			t.Errorf("MutationByName(%q): %v", name, err)
		}
	}
	_, err := CrossoverByName("blx")
	if err == nil || !strings.Contains(err.Error(), "sbx, mean, none") {
		t.Errorf("CrossoverByName(\"blx\"): got error %v, want one listing sbx, mean, none", err)
	}
	_, err = MutationByName("gauss")
	if err == nil || !strings.Contains(err.Error(), "pm, uniform, none") {
		t.Errorf("MutationByName(\"gauss\"): got error %v, want one listing pm, uniform, none", err)
	}
}

func TestValidate(t *testing.T) {
	bad := []any{SBX{Eta: -1}, SBX{VarProb: 2}, SBX{Eta: math.NaN()}, Polynomial{Prob: -0.1}, Polynomial{Eta: math.Inf(1)}, Uniform{Prob: 1.5}}
	for _, op := range bad {
		if err := Validate(op); err == nil {
			t.Errorf("Validate(%+v): got nil, want an error", op)
		}
	}
	good := []any{SBX{}, SBX{Eta: 3, VarProb: 1}, Polynomial{}, Uniform{Prob: 1}, Mean{}, NoCrossover{}, NoMutation{}}
	for _, op := range good {
		if err := Validate(op); err != nil {
			t.Errorf("Validate(%+v): %v", op, err)
		}
	}
}
