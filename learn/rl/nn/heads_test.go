package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randF64(r *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64() * scale
	}
	return x
}

// fdCheck compares analytic gradients grad[i] of f with respect to the
// entries of x against central differences (h = 1e-6, float64).
func fdCheck(t *testing.T, what string, x []float64, grad []float64, f func() float64) {
	t.Helper()
	const h, tol = 1e-6, 1e-6
	for i := range x {
		old := x[i]
		x[i] = old + h
		fp := f()
		x[i] = old - h
		fm := f()
		x[i] = old
		num := (fp - fm) / (2 * h)
		if math.Abs(num-grad[i]) > tol*(1+math.Abs(num)) {
			t.Errorf("%s[%d]: analytic %.9g, finite difference %.9g", what, i, grad[i], num)
		}
	}
}

func sumDot(a, w []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * w[i]
	}
	return s
}

func TestGaussianGradients(t *testing.T) {
	const B, d = 4, 3
	rng := rand.New(rand.NewPCG(1, 1))
	mean := randF64(rng, B*d, 1)
	logStd := randF64(rng, B*d, 0.5)
	x := randF64(rng, B*d, 1.5)
	wl := randF64(rng, B, 1) // upstream dL/dlogp
	we := randF64(rng, B, 1) // upstream dL/dentropy
	logp := make([]float64, B)
	ent := make([]float64, B)
	loss := func() float64 {
		GaussianLogProb(mean, logStd, x, d, logp)
		GaussianEntropy(logStd, d, ent)
		return sumDot(logp, wl) + sumDot(ent, we)
	}
	dmean := make([]float64, B*d)
	dlogStd := make([]float64, B*d)
	GaussianLogProbBackward(mean, logStd, x, d, wl, dmean, dlogStd)
	for b := 0; b < B; b++ {
		for i := 0; i < d; i++ {
			dlogStd[b*d+i] += we[b] // ∂H/∂log σ = 1
		}
	}
	fdCheck(t, "dmean", mean, dmean, loss)
	fdCheck(t, "dlogStd", logStd, dlogStd, loss)

	// Closed form: standard normal at 0 has log density −½log 2π per dim.
	z := []float64{0, 0}
	lp := []float64{0}
	GaussianLogProb(z, z, z, 2, lp)
	if want := -2 * halfLog2Pi; math.Abs(lp[0]-want) > 1e-12 {
		t.Errorf("log N(0;0,1)² = %g, want %g", lp[0], want)
	}
}

func TestSquashedGaussianGradients(t *testing.T) {
	const B, d = 5, 2
	rng := rand.New(rand.NewPCG(2, 2))
	mean := randF64(rng, B*d, 1)
	logStd := randF64(rng, B*d, 0.7)
	logStd[3] = -25 // below the clamp: zero gradient
	logStd[4] = 3   // above the clamp
	noise := randF64(rng, B*d, 1)
	wa := randF64(rng, B*d, 1)
	wl := randF64(rng, B, 1)
	a := make([]float64, B*d)
	logp := make([]float64, B)
	loss := func() float64 {
		SquashedGaussian(mean, logStd, noise, d, a, logp)
		return sumDot(a, wa) + sumDot(logp, wl)
	}
	loss()
	dmean := make([]float64, B*d)
	dlogStd := make([]float64, B*d)
	SquashedGaussianBackward(mean, logStd, noise, d, wa, wl, dmean, dlogStd)
	fdCheck(t, "dmean", mean, dmean, loss)
	fdCheck(t, "dlogStd", logStd, dlogStd, loss)
	if dlogStd[3] != 0 || dlogStd[4] != 0 {
		t.Errorf("clamped log-std gradients = %g, %g, want 0, 0", dlogStd[3], dlogStd[4])
	}
}

// TestSquashedGaussianDensity checks log π against the density of
// a = tanh(u) obtained by the change of variables, integrated numerically:
// the density must integrate to ≈ 1 over (−1, 1) (up to the 1e-6 epsilon).
func TestSquashedGaussianDensity(t *testing.T) {
	for _, tc := range []struct{ mu, logStd float64 }{{0, 0}, {0.5, -1}, {-1, 0.3}} {
		// Integrate over u (a = tanh u, da = (1−a²)du) for numerical
		// stability near ±1.
		const n = 20000
		lo, hi := tc.mu-12*math.Exp(tc.logStd), tc.mu+12*math.Exp(tc.logStd)
		du := (hi - lo) / n
		var total float64
		for k := 0; k < n; k++ {
			u := lo + (float64(k)+0.5)*du
			eps := (u - tc.mu) / math.Exp(tc.logStd)
			a := []float64{0}
			lp := []float64{0}
			SquashedGaussian([]float64{tc.mu}, []float64{tc.logStd}, []float64{eps}, 1, a, lp)
			q := 1 - a[0]*a[0]
			total += math.Exp(lp[0]) * q * du
		}
		if math.Abs(total-1) > 1e-3 {
			t.Errorf("mu=%g logStd=%g: ∫π(a)da = %g, want 1", tc.mu, tc.logStd, total)
		}
	}
}

func TestCategoricalGradients(t *testing.T) {
	const B, n = 4, 5
	rng := rand.New(rand.NewPCG(3, 3))
	logits := randF64(rng, B*n, 2)
	actions := []float64{0, 4, 2, 2}
	wl := randF64(rng, B, 1)
	we := randF64(rng, B, 1)
	logp := make([]float64, B)
	ent := make([]float64, B)
	loss := func() float64 {
		Categorical(logits, n, actions, logp, ent)
		return sumDot(logp, wl) + sumDot(ent, we)
	}
	dlogits := make([]float64, B*n)
	CategoricalBackward(logits, n, actions, wl, we, dlogits)
	fdCheck(t, "dlogits", logits, dlogits, loss)

	// Uniform logits: entropy log n, log p = −log n.
	u := make([]float64, n)
	Categorical(u, n, []float64{1}, logp[:1], ent[:1])
	if math.Abs(ent[0]-math.Log(n)) > 1e-12 || math.Abs(logp[0]+math.Log(n)) > 1e-12 {
		t.Errorf("uniform: entropy %g logp %g, want %g, %g", ent[0], logp[0], math.Log(n), -math.Log(n))
	}
}

// TestHeadsFloat32MatchFloat64 runs each head in float32 and float64 on the
// same inputs; they must agree to float32 precision (relative 1e-5).
func TestHeadsFloat32MatchFloat64(t *testing.T) {
	const B, d = 6, 3
	rng := rand.New(rand.NewPCG(4, 4))
	mean := randF64(rng, B*d, 1)
	logStd := randF64(rng, B*d, 0.5)
	noise := randF64(rng, B*d, 1)
	to32 := func(x []float64) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(v)
		}
		return y
	}
	// Round the inputs to float32 first so both paths see identical values.
	m32, l32, n32 := to32(mean), to32(logStd), to32(noise)
	m64, l64, n64 := f64(m32), f64(l32), f64(n32)
	a32, lp32 := make([]float32, B*d), make([]float32, B)
	a64, lp64 := make([]float64, B*d), make([]float64, B)
	SquashedGaussian(m32, l32, n32, d, a32, lp32)
	SquashedGaussian(m64, l64, n64, d, a64, lp64)
	assertClose(t, "squashed a", a32, a64, 1e-6)
	assertClose(t, "squashed logp", lp32, lp64, 1e-6)
	dm32, ds32 := make([]float32, B*d), make([]float32, B*d)
	dm64, ds64 := make([]float64, B*d), make([]float64, B*d)
	ones32, ones64 := make([]float32, B), make([]float64, B)
	for i := range ones32 {
		ones32[i], ones64[i] = 1, 1
	}
	SquashedGaussianBackward(m32, l32, n32, d, to32(noise), ones32, dm32, ds32)
	SquashedGaussianBackward(m64, l64, n64, d, f64(to32(noise)), ones64, dm64, ds64)
	assertClose(t, "squashed dmean", dm32, dm64, 1e-5)
	assertClose(t, "squashed dlogStd", ds32, ds64, 1e-5)
	GaussianLogProb(m32, l32, n32, d, lp32)
	GaussianLogProb(m64, l64, n64, d, lp64)
	assertClose(t, "gaussian logp", lp32, lp64, 1e-6)
}

func TestLossGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 12
	pred := randF64(rng, n, 2)
	target := randF64(rng, n, 2)
	for _, tc := range []struct {
		name string
		f    func(pred, target []float64, scale float64, d []float64) float64
	}{
		{"MSE", MSE[float64]},
		{"Huber", Huber[float64]},
	} {
		g := make([]float64, n)
		tc.f(pred, target, 0.7, g)
		fdCheck(t, tc.name, pred, g, func() float64 { return 0.7 * tc.f(pred, target, 0, nil) })
	}
	// Huber: quadratic inside |e| < 1, linear outside.
	if got := Huber([]float64{0.5, 3}, []float64{0, 0}, 1, nil); math.Abs(got-(0.125+2.5)/2) > 1e-15 {
		t.Errorf("Huber([0.5, 3]) = %g, want %g", got, (0.125+2.5)/2)
	}
}

func TestPPOClipGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	const n = 40
	old := randF64(rng, n, 1)
	logp := make([]float64, n)
	for i := range logp {
		// Ratios spread across and beyond [0.8, 1.2], away from the kinks.
		logp[i] = old[i] + 0.5*rng.NormFloat64()
		for r := math.Exp(logp[i] - old[i]); math.Abs(r-0.8) < 1e-3 || math.Abs(r-1.2) < 1e-3; r = math.Exp(logp[i] - old[i]) {
			logp[i] += 0.01
		}
	}
	adv := randF64(rng, n, 1)
	g := make([]float64, n)
	st := PPOClip(logp, old, adv, 0.2, 1.3, g)
	fdCheck(t, "dlogp", logp, g, func() float64 { return 1.3 * PPOClip(logp, old, adv, 0.2, 0, nil).Loss })
	if st.ClipFraction <= 0 || st.ClipFraction >= 1 {
		t.Errorf("clip fraction %g, want strictly between 0 and 1 for this spread", st.ClipFraction)
	}
	if st.ApproxKL < 0 {
		t.Errorf("approx KL %g < 0; the k3 estimator is non-negative", st.ApproxKL)
	}
	// Equal policies: loss is −mean(A), ratio 1, KL 0.
	st = PPOClip(old, old, adv, 0.2, 0, nil)
	var mean float64
	for _, a := range adv {
		mean += a / n
	}
	if math.Abs(st.Loss+mean) > 1e-12 || st.ApproxKL != 0 || st.ClipFraction != 0 {
		t.Errorf("identical policies: %+v, want loss %g, KL 0, clip 0", st, -mean)
	}
}

func TestValueLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 30
	v := randF64(rng, n, 1)
	vOld := randF64(rng, n, 1)
	ret := randF64(rng, n, 1)
	for _, clip := range []float64{0, 0.3} {
		for i := range v { // keep away from the clip kinks
			for d := v[i] - vOld[i]; math.Abs(math.Abs(d)-clip) < 1e-3; d = v[i] - vOld[i] {
				v[i] += 0.01
			}
		}
		g := make([]float64, n)
		ValueLoss(v, vOld, ret, clip, 0.5, g)
		fdCheck(t, fmt.Sprintf("dv(clip=%g)", clip), v, g, func() float64 { return 0.5 * ValueLoss(v, vOld, ret, clip, 0, nil) })
	}
}
