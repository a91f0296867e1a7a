package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/internal/racebuild"
	"github.com/cclab/cclab/learn/rl/nn/f32"
	"gonum.org/v1/gonum/blas/blas32"
)

// refMLP is an independent float64 implementation with naive loops, used
// as the reference for the float32 BLAS path.
type refMLP struct {
	sizes []int
	acts  []Activation
	w, b  [][]float64 // w[l] in×out row-major
}

func refFrom(m *MLP) *refMLP {
	r := &refMLP{sizes: m.Sizes, acts: m.Acts}
	for l := 0; l < m.Layers(); l++ {
		r.w = append(r.w, f64(m.W(l)))
		r.b = append(r.b, f64(m.B(l)))
	}
	return r
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func act64(a Activation, z float64) float64 {
	switch a {
	case ReLU:
		return math.Max(z, 0)
	case Tanh:
		return math.Tanh(z)
	}
	return z
}

func dact64(a Activation, z float64) float64 {
	switch a {
	case ReLU:
		if z > 0 {
			return 1
		}
		return 0
	case Tanh:
		t := math.Tanh(z)
		return 1 - t*t
	}
	return 1
}

// forward returns the outputs and the pre-activations and inputs of each layer.
func (r *refMLP) forward(x []float64, batch int) (out []float64, xs, zs [][]float64) {
	in := x
	for l := range r.w {
		ni, no := r.sizes[l], r.sizes[l+1]
		z := make([]float64, batch*no)
		y := make([]float64, batch*no)
		for s := 0; s < batch; s++ {
			for j := 0; j < no; j++ {
				v := r.b[l][j]
				for i := 0; i < ni; i++ {
					v += in[s*ni+i] * r.w[l][i*no+j]
				}
				z[s*no+j] = v
				y[s*no+j] = act64(r.acts[l], v)
			}
		}
		xs = append(xs, in)
		zs = append(zs, z)
		in = y
	}
	return in, xs, zs
}

// backward returns dL/dw, dL/db per layer and dL/dx for output gradient dy.
func (r *refMLP) backward(x []float64, batch int, dy []float64) (gw, gb [][]float64, dx []float64) {
	_, xs, zs := r.forward(x, batch)
	gw = make([][]float64, len(r.w))
	gb = make([][]float64, len(r.w))
	d := append([]float64(nil), dy...)
	for l := len(r.w) - 1; l >= 0; l-- {
		ni, no := r.sizes[l], r.sizes[l+1]
		for k := range d {
			d[k] *= dact64(r.acts[l], zs[l][k])
		}
		gw[l] = make([]float64, ni*no)
		gb[l] = make([]float64, no)
		nd := make([]float64, batch*ni)
		for s := 0; s < batch; s++ {
			for j := 0; j < no; j++ {
				g := d[s*no+j]
				gb[l][j] += g
				for i := 0; i < ni; i++ {
					gw[l][i*no+j] += xs[l][s*ni+i] * g
					nd[s*ni+i] += g * r.w[l][i*no+j]
				}
			}
		}
		d = nd
	}
	return gw, gb, d
}

// loss is a fixed smooth scalar function of the outputs: Σ c_k·y_k + ½y_k²,
// so that dL/dy = c + y exercises every output differently.
func refLoss(y, c []float64) (float64, []float64) {
	var s float64
	g := make([]float64, len(y))
	for k, v := range y {
		s += c[k]*v + 0.5*v*v
		g[k] = c[k] + v
	}
	return s, g
}

var mlpCases = []struct {
	name   string
	sizes  []int
	hidden Activation
	output Activation
	batch  int
}{
	{"linear", []int{4, 3}, Identity, Identity, 5},
	{"relu", []int{5, 7, 6, 2}, ReLU, Identity, 4},
	{"tanh", []int{3, 8, 8, 3}, Tanh, Identity, 6},
	{"tanh-out", []int{6, 5, 2}, ReLU, Tanh, 3},
	{"relu-out", []int{2, 4, 3}, Tanh, ReLU, 7},
	{"batch1", []int{9, 6, 1}, ReLU, Identity, 1},
}

func randSlice(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// TestRefMLPFiniteDifference checks the float64 reference's backward pass
// against central finite differences, so that it can serve as the oracle.
func TestRefMLPFiniteDifference(t *testing.T) {
	for _, tc := range mlpCases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := NewMLP(tc.sizes, tc.hidden, tc.output)
			m.InitTorchDefault(rng)
			ref := refFrom(m)
			x := f64(randSlice(rng, tc.batch*m.In(), 1))
			c := f64(randSlice(rng, tc.batch*m.Out(), 1))
			eval := func() float64 {
				y, _, _ := ref.forward(x, tc.batch)
				l, _ := refLoss(y, c)
				return l
			}
			y, _, _ := ref.forward(x, tc.batch)
			_, dy := refLoss(y, c)
			gw, gb, dx := ref.backward(x, tc.batch, dy)
			const h, tol = 1e-6, 1e-6
			check := func(what string, p *float64, analytic float64) {
				t.Helper()
				old := *p
				*p = old + h
				lp := eval()
				*p = old - h
				lm := eval()
				*p = old
				num := (lp - lm) / (2 * h)
				if math.Abs(num-analytic) > tol*(1+math.Abs(num)) {
					t.Errorf("%s: analytic gradient %.9g, finite difference %.9g", what, analytic, num)
				}
			}
			for l := range ref.w {
				for i := range ref.w[l] {
					check(fmt.Sprintf("w[%d][%d]", l, i), &ref.w[l][i], gw[l][i])
				}
				for i := range ref.b[l] {
					check(fmt.Sprintf("b[%d][%d]", l, i), &ref.b[l][i], gb[l][i])
				}
			}
			for i := range x {
				check(fmt.Sprintf("x[%d]", i), &x[i], dx[i])
			}
		})
	}
}

// TestMLPMatchesFloat64Reference compares the float32 BLAS forward and
// backward passes with the float64 reference. Tolerance: relative 1e-4 of
// the largest magnitude, float32 rounding over sums of ≤ 10 terms.
func TestMLPMatchesFloat64Reference(t *testing.T) {
	for _, tc := range mlpCases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			m := NewMLP(tc.sizes, tc.hidden, tc.output)
			m.InitTorchDefault(rng)
			ref := refFrom(m)
			x := randSlice(rng, tc.batch*m.In(), 1)
			c := randSlice(rng, tc.batch*m.Out(), 1)
			ws := m.NewWorkspace()
			y := m.Forward(ws, x, tc.batch)
			yr, _, _ := ref.forward(f64(x), tc.batch)
			assertClose(t, "output", y, yr, 1e-4)
			_, dyr := refLoss(yr, f64(c))
			dy := make([]float32, len(dyr))
			for i := range dy {
				dy[i] = float32(dyr[i])
			}
			m.ZeroGrad()
			dx := m.Backward(ws, dy, true)
			gw, gb, dxr := ref.backward(f64(x), tc.batch, dyr)
			for l := 0; l < m.Layers(); l++ {
				assertClose(t, fmt.Sprintf("dW[%d]", l), m.GW(l), gw[l], 1e-4)
				assertClose(t, fmt.Sprintf("db[%d]", l), m.GB(l), gb[l], 1e-4)
			}
			assertClose(t, "dx", dx, dxr, 1e-4)

			// BackwardInput gives the same input gradient and leaves Grads alone.
			before := append([]float32(nil), m.Grads...)
			m.Forward(ws, x, tc.batch)
			dx2 := append([]float32(nil), m.BackwardInput(ws, dy)...)
			assertClose(t, "BackwardInput dx", dx2, dxr, 1e-4)
			if m.In() > 1 {
				from := m.In() / 2
				m.Forward(ws, x, tc.batch)
				cols := m.BackwardInputCols(ws, dy, from)
				w := m.In() - from
				for s := 0; s < tc.batch; s++ {
					for j := 0; j < w; j++ {
						if got, want := cols[s*w+j], dx2[s*m.In()+from+j]; math.Abs(float64(got-want)) > 1e-6*(1+math.Abs(float64(want))) {
							t.Fatalf("BackwardInputCols[%d][%d] = %g, want %g", s, j, got, want)
						}
					}
				}
			}
			for i := range before {
				if m.Grads[i] != before[i] {
					t.Fatalf("BackwardInput changed grad[%d] from %g to %g", i, before[i], m.Grads[i])
				}
			}

			// Backward accumulates: a second pass doubles the gradients.
			g1 := append([]float32(nil), m.Grads...)
			m.Forward(ws, x, tc.batch)
			if m.Backward(ws, dy, false) != nil {
				t.Errorf("Backward(wantInput=false) returned an input gradient")
			}
			for i := range g1 {
				if want := 2 * g1[i]; math.Abs(float64(m.Grads[i]-want)) > 1e-5*(1+math.Abs(float64(want))) {
					t.Fatalf("accumulated grad[%d] = %g, want %g", i, m.Grads[i], want)
				}
			}
		})
	}
}

// TestMLPFiniteDifferenceFloat32 checks the float32 network directly
// against finite differences of a float64-accumulated loss. With h = 1e-2
// the truncation error is O(h²) ≈ 1e-4 relative and float32 rounding in the
// forward pass contributes ≈ 1e-7/h = 1e-5, hence the 5e-3 tolerance.
func TestMLPFiniteDifferenceFloat32(t *testing.T) {
	for _, tc := range mlpCases {
		if tc.hidden == ReLU || tc.output == ReLU {
			// ReLU kinks make finite differences unreliable at h = 1e-2;
			// the float64 comparison above covers ReLU.
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			m := NewMLP(tc.sizes, tc.hidden, tc.output)
			m.InitTorchDefault(rng)
			x := randSlice(rng, tc.batch*m.In(), 1)
			c := f64(randSlice(rng, tc.batch*m.Out(), 1))
			ws := m.NewWorkspace()
			eval := func() float64 {
				l, _ := refLoss(f64(m.Forward(ws, x, tc.batch)), c)
				return l
			}
			_, dy64 := refLoss(f64(m.Forward(ws, x, tc.batch)), c)
			dy := make([]float32, len(dy64))
			for i := range dy {
				dy[i] = float32(dy64[i])
			}
			m.ZeroGrad()
			m.Backward(ws, dy, false)
			const h = 1e-2
			for i := range m.Params {
				old := m.Params[i]
				m.Params[i] = old + h
				lp := eval()
				m.Params[i] = old - h
				lm := eval()
				m.Params[i] = old
				num := (lp - lm) / (2 * h)
				if got := float64(m.Grads[i]); math.Abs(num-got) > 5e-3*(1+math.Abs(num)) {
					t.Errorf("param %d: analytic %g, finite difference %g", i, got, num)
				}
			}
		})
	}
}

func assertClose(t *testing.T, what string, got []float32, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	scale := 1e-6
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > rel*scale {
			t.Errorf("%s[%d] = %.8g, want %.8g (diff %.3g > %.3g)", what, i, got[i], want[i], d, rel*scale)
			return
		}
	}
}

func TestInitTorchDefaultBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := NewMLP([]int{100, 50, 1}, ReLU, Identity)
	m.InitTorchDefault(rng)
	for l := 0; l < m.Layers(); l++ {
		bound := 1 / math.Sqrt(float64(m.Sizes[l]))
		var sumSq float64
		for _, w := range m.W(l) {
			if math.Abs(float64(w)) > bound {
				t.Fatalf("layer %d weight %g outside ±%g", l, w, bound)
			}
			sumSq += float64(w) * float64(w)
		}
		// Uniform on ±bound has variance bound²/3; with ≥ 50 samples the
		// sample variance is within 40% of it.
		v := sumSq / float64(len(m.W(l)))
		if want := bound * bound / 3; math.Abs(v-want) > 0.4*want {
			t.Errorf("layer %d weight variance %g, want ≈ %g", l, v, want)
		}
	}
}

func TestOrthogonal(t *testing.T) {
	for _, dims := range [][2]int{{8, 3}, {3, 8}, {5, 5}} {
		rows, cols := dims[0], dims[1]
		rng := rand.New(rand.NewPCG(9, uint64(rows)))
		w := make([]float32, rows*cols)
		const gain = 1.5
		Orthogonal(rng, rows, cols, gain, w)
		// The shorter side's vectors are orthonormal (times gain).
		k, n := min(rows, cols), max(rows, cols)
		vec := func(a, i int) float64 { // element i of vector a
			if rows >= cols {
				return float64(w[i*cols+a])
			}
			return float64(w[a*cols+i])
		}
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				var dot float64
				for i := 0; i < n; i++ {
					dot += vec(a, i) * vec(b, i)
				}
				want := 0.0
				if a == b {
					want = gain * gain
				}
				if math.Abs(dot-want) > 1e-5 {
					t.Errorf("%dx%d: <v%d,v%d> = %g, want %g", rows, cols, a, b, dot, want)
				}
			}
		}
	}
}

func TestForwardBackwardDoNotAllocate(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("under -race sync.Pool drops pooled GEMM buffers at random, so they are allocated again")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	// Small enough that gonum's Sgemm stays on one goroutine.
	m := NewMLP([]int{16, 32, 32, 2}, ReLU, Identity)
	m.InitTorchDefault(rng)
	ws := m.NewWorkspace()
	x := randSlice(rng, 8*16, 1)
	dy := randSlice(rng, 8*2, 1)
	m.Forward(ws, x, 8)
	m.Backward(ws, dy, true)
	allocs := testing.AllocsPerRun(50, func() {
		m.Forward(ws, x, 8)
		m.Backward(ws, dy, true)
	})
	if allocs != 0 {
		t.Errorf("Forward+Backward allocates %v times per run, want 0", allocs)
	}
	mt := NewMLP([]int{16, 32, 32, 2}, Tanh, Tanh)
	mt.InitTorchDefault(rng)
	wt := mt.NewWorkspace()
	mt.ForwardShared(wt, x, 8)
	mt.Backward(wt, dy, true)
	if allocs := testing.AllocsPerRun(50, func() {
		mt.ForwardShared(wt, x, 8)
		mt.Backward(wt, dy, true)
		mt.Forward(wt, x[:16], 1)
	}); allocs != 0 {
		t.Errorf("tanh Forward+Backward allocates %v times per run, want 0", allocs)
	}
}

func TestNewMLPPanicsOnBadSizes(t *testing.T) {
	for _, sizes := range [][]int{{3}, {3, 0}, {0, 2, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewMLP(%v) did not panic", sizes)
				}
			}()
			NewMLP(sizes, ReLU, Identity)
		}()
	}
}

func TestReLUBranchFree(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	y := []float32{-1, negZero, 0, 2, float32(math.Inf(-1)), float32(math.Inf(1)), 1e-40, -1e-40}
	activate(ReLU, y)
	want := []float32{0, 0, 0, 2, 0, float32(math.Inf(1)), 1e-40, 0}
	for i := range y {
		if y[i] != want[i] || math.Signbit(float64(y[i])) {
			t.Errorf("ReLU[%d] = %g, want +%g", i, y[i], want[i])
		}
	}
	out := []float32{-1, negZero, 0, 2, 1e-40}
	dz := []float32{5, 5, 5, 5, 5}
	f32.ReLUBackward(dz, out, 1, len(dz), nil)
	if wantDz := []float32{0, 0, 0, 5, 5}; !slicesEqual(dz, wantDz) {
		t.Errorf("ReLUBackward = %v, want %v", dz, wantDz)
	}
}

func slicesEqual(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestBackendsAgree runs the same forward and backward passes through the
// default backend (f32's fused kernels where the CPU has AVX2) and gonum's
// BLAS with the unfused bias and activation: outputs and gradients must
// agree to float32 rounding, relative to the magnitude of each layer's
// sums (k ≤ 37 terms here, tolerance 1e-5 relative to the largest value).
func TestBackendsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, acts := range [][]Activation{{ReLU, ReLU, Identity}, {Tanh, Tanh, Identity}, {ReLU, Tanh, Tanh}} {
		for _, batch := range []int{1, 2, 7, 64} {
			a := NewMLPActs([]int{37, 33, 17, 5}, acts)
			a.InitTorchDefault(rng)
			b := a.Clone()
			b.SetMatmul(blas32.Implementation())
			x := randSlice(rng, batch*a.In(), 1)
			dy := randSlice(rng, batch*a.Out(), 1)
			wa, wb := a.NewWorkspace(), b.NewWorkspace()
			ya, yb := a.Forward(wa, x, batch), b.Forward(wb, x, batch)
			closeSlices(t, "output", ya, yb)
			if batch == 1 && !blas1Differs {
				// Batch-1 inference (what a deployed controller runs) is
				// bit-identical to gonum's SGEMV path, so shipped
				// policies evaluate exactly as before the f32 kernels.
				for i := range ya {
					if ya[i] != yb[i] {
						t.Fatalf("acts %v batch 1: output[%d] %v, gonum %v", acts, i, ya[i], yb[i])
					}
				}
			}
			ga, gb := a.Backward(wa, dy, true), b.Backward(wb, dy, true)
			closeSlices(t, "input gradient", ga, gb)
			closeSlices(t, "parameter gradient", a.Grads, b.Grads)
		}
	}
}

func closeSlices(t *testing.T, what string, a, b []float32) {
	t.Helper()
	scale := 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range a {
		if d := math.Abs(float64(a[i] - b[i])); d > 1e-5*scale+1e-30 {
			t.Fatalf("%s[%d]: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// TestForwardSharedMatchesForward: without the input copy the outputs and
// gradients are the same bits, including dL/dx and under tanh and ReLU.
func TestForwardSharedMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, hidden := range []Activation{Tanh, ReLU} {
		m := NewMLP([]int{37, 64, 48, 5}, hidden, Tanh)
		m.InitTorchDefault(r)
		const batch = 19
		x := make([]float32, batch*m.In())
		dy := make([]float32, batch*m.Out())
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := range dy {
			dy[i] = float32(r.NormFloat64())
		}
		ws1, ws2 := m.NewWorkspace(), m.NewWorkspace()
		y1 := append([]float32(nil), m.Forward(ws1, x, batch)...)
		dx1 := append([]float32(nil), m.Backward(ws1, dy, true)...)
		g1 := append([]float32(nil), m.Grads...)
		m.ZeroGrad()
		y2 := m.ForwardShared(ws2, x, batch)
		dx2 := m.Backward(ws2, dy, true)
		for i := range y1 {
			if y1[i] != y2[i] {
				t.Fatalf("%v: y[%d] %v vs %v", hidden, i, y1[i], y2[i])
			}
		}
		for i := range dx1 {
			if dx1[i] != dx2[i] {
				t.Fatalf("%v: dx[%d] %v vs %v", hidden, i, dx1[i], dx2[i])
			}
		}
		for i := range g1 {
			if g1[i] != m.Grads[i] {
				t.Fatalf("%v: grad[%d] %v vs %v", hidden, i, g1[i], m.Grads[i])
			}
		}
	}
}
