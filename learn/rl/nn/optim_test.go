package nn

import (
	"math"
	"testing"
)

// TestAdamMatchesFormula runs Adam for several steps and compares each
// parameter with the float64 evaluation of torch.optim.Adam's update rule.
func TestAdamMatchesFormula(t *testing.T) {
	p := []float32{1, -2, 0.5}
	grads := [][]float32{{0.1, -0.3, 2}, {0.2, 0.1, -1}, {-0.5, 0.05, 0.3}, {1, 1, 1}}
	a := NewAdam(len(p), 0.01)
	ref := f64(p)
	m := make([]float64, len(p))
	v := make([]float64, len(p))
	for step, g := range grads {
		a.Step(p, g)
		tt := float64(step + 1)
		for i := range ref {
			gi := float64(g[i])
			m[i] = 0.9*m[i] + 0.1*gi
			v[i] = 0.999*v[i] + 0.001*gi*gi
			bc1 := 1 - math.Pow(0.9, tt)
			bc2 := 1 - math.Pow(0.999, tt)
			ref[i] -= 0.01 / bc1 * m[i] / (math.Sqrt(v[i])/math.Sqrt(bc2) + 1e-8)
		}
		assertClose(t, "adam params", p, ref, 1e-6)
	}
	// First step moves every parameter by ≈ lr against its gradient sign
	// (bias correction makes m̂/sqrt(v̂) = sign(g)).
	q := []float32{0, 0}
	NewAdam(2, 0.01).Step(q, []float32{3, -1e-3})
	if math.Abs(float64(q[0])+0.01) > 1e-6 || math.Abs(float64(q[1])-0.01) > 1e-4 {
		t.Errorf("first Adam step = %v, want [-0.01 0.01]", q)
	}
}

func TestRMSpropMatchesFormula(t *testing.T) {
	p := []float32{1, -2}
	o := NewRMSprop(2, 0.1)
	ref := f64(p)
	v := make([]float64, 2)
	for _, g := range [][]float32{{1, -0.5}, {0.3, 0.2}, {-2, 1}} {
		o.Step(p, g)
		for i := range ref {
			gi := float64(g[i])
			v[i] = 0.99*v[i] + 0.01*gi*gi
			ref[i] -= 0.1 * gi / (math.Sqrt(v[i]) + 1e-5)
		}
		assertClose(t, "rmsprop params", p, ref, 1e-6)
	}
}

func TestAdamMinimisesQuadratic(t *testing.T) {
	// f(x) = Σ (x_i − c_i)², gradient 2(x − c); Adam must converge.
	c := []float32{3, -1, 0.25}
	x := make([]float32, 3)
	g := make([]float32, 3)
	a := NewAdam(3, 0.05)
	for it := 0; it < 2000; it++ {
		for i := range x {
			g[i] = 2 * (x[i] - c[i])
		}
		a.Step(x, g)
	}
	for i := range x {
		if math.Abs(float64(x[i]-c[i])) > 1e-3 {
			t.Errorf("x[%d] = %g, want %g", i, x[i], c[i])
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	a := []float32{3, 0}
	b := []float32{0, 4}
	norm := ClipGradNorm(1, a, b)
	if math.Abs(norm-5) > 1e-6 {
		t.Errorf("norm = %g, want 5", norm)
	}
	if got := GradNorm(a, b); math.Abs(got-1) > 1e-5 {
		t.Errorf("norm after clipping = %g, want 1", got)
	}
	c := []float32{0.3, 0.4}
	ClipGradNorm(1, c)
	if c[0] != 0.3 || c[1] != 0.4 {
		t.Errorf("gradient below the limit changed to %v", c)
	}
}

func TestPolyak(t *testing.T) {
	tgt := []float32{0, 10}
	src := []float32{1, 0}
	Polyak(tgt, src, 0.25)
	if tgt[0] != 0.25 || tgt[1] != 7.5 {
		t.Errorf("Polyak = %v, want [0.25 7.5]", tgt)
	}
	Polyak(tgt, src, 1)
	if tgt[0] != 1 || tgt[1] != 0 {
		t.Errorf("Polyak(τ=1) = %v, want a copy of the source", tgt)
	}
}
