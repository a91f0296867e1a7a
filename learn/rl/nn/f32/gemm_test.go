package f32

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// u is the unit roundoff of float32.
const u = 1.0 / (1 << 24)

func randVec(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s
}

// refGemm is the plain triple loop in float64, with the same semantics as
// Gemm, and also returns for every element the magnitude Σ|terms| that
// bounds its rounding error.
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, act Act) (want, mag []float64) {
	want = make([]float64, m*n)
	mag = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, sa float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				t := float64(alpha) * float64(av) * float64(bv)
				s += t
				sa += math.Abs(t)
			}
			if beta != 0 {
				t := float64(beta) * float64(c[i*ldc+j])
				s += t
				sa += math.Abs(t)
			}
			if bias != nil {
				s += float64(bias[j])
				sa += math.Abs(float64(bias[j]))
			}
			switch act {
			case ReLU:
				if !(s > 0) {
					s = 0
				}
			case TanhAct:
				s = math.Tanh(s)
			}
			want[i*n+j], mag[i*n+j] = s, sa
		}
	}
	return want, mag
}

type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad            int // extra columns of every leading dimension
	bias           bool
	act            Act
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,alpha=%g,beta=%g,pad=%d,bias=%v,act=%d",
		tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad, tc.bias, tc.act)
}

// check runs one case against refGemm. Tolerance: every element of C is a
// sum of k products plus beta·C and the bias; float32 summation of k+2
// terms in any order (blocked, FMA or not) errs by at most γ ≈ (k+2)·u
// times Σ|terms| (Higham, Accuracy and Stability, §3.1), and folding
// alpha into A and scaling C by beta add one rounding each. The bound used,
// (k+4)·u·Σ|terms| plus a denormal-sized floor, is that worst case; typical
// errors are about sqrt(k)·u·Σ|terms|. tanh does not enlarge an error
// (|tanh'| ≤ 1) and adds its own, at most 7 ulps of the result (≤ 14·u·|y|,
// tanh_test.go), so 16·u·|y| is added to the bound.
func check(t testing.TB, r *rand.Rand, tc gemmCase) {
	t.Helper()
	m, n, k, pad := tc.m, tc.n, tc.k, tc.pad
	ar, ac := m, k
	if tc.transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tc.transB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	a := randVec(r, max(ar*lda, 1))
	b := randVec(r, max(br*ldb, 1))
	c := randVec(r, max(m*ldc, 1))
	var bias []float32
	if tc.bias {
		bias = randVec(r, n)
	}
	c0 := append([]float32(nil), c...)
	if tc.beta == 0 {
		// BLAS semantics: C is not read when beta is 0.
		for i := range c {
			c[i] = float32(math.NaN())
		}
	}
	want, mag := refGemm(tc.transA, tc.transB, m, n, k, tc.alpha, a, lda, b, ldb, tc.beta, c0, ldc, bias, tc.act)
	Gemm(tc.transA, tc.transB, m, n, k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, bias, tc.act)
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := c[i*ldc+j]
			if j >= n {
				// Padding columns must be untouched.
				if tc.beta == 0 {
					if !math.IsNaN(float64(got)) {
						t.Fatalf("%v: padding C[%d,%d] written", tc, i, j)
					}
				} else if got != c0[i*ldc+j] {
					t.Fatalf("%v: padding C[%d,%d] written", tc, i, j)
				}
				continue
			}
			w, tol := want[i*n+j], float64(k+4)*u*mag[i*n+j]+1e-30
			if tc.act == TanhAct {
				tol += 16 * u * math.Abs(w)
			}
			if d := math.Abs(float64(got) - w); !(d <= tol) {
				t.Fatalf("%v: C[%d,%d] = %v, want %v (|diff| %.3g > tol %.3g)", tc, i, j, got, w, d, tol)
			}
		}
	}
}

var scalars = [][2]float32{{1, 0}, {1, 1}, {-0.5, 2}, {0.7, 0.3}, {0, 0.5}, {2, -1}}

// TestGemmShapes compares against the triple loop at odd shapes, with and
// without transposes, several alpha/beta pairs and padded strides.
func TestGemmShapes(t *testing.T) {
	dims := []int{1, 3, 7, 16, 17, 97, 257, 980, 1001}
	limit := 6e5 // m·n·k, to keep the float64 reference fast
	if testing.Short() {
		limit = 2e5
	}
	r := rand.New(rand.NewPCG(1, 2))
	cases := 0
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range dims {
				if float64(m)*float64(n)*float64(k) > limit {
					continue
				}
				for tr := 0; tr < 4; tr++ {
					s := scalars[cases%len(scalars)]
					tc := gemmCase{transA: tr&1 != 0, transB: tr&2 != 0, m: m, n: n, k: k, alpha: s[0], beta: s[1], pad: cases % 3, bias: cases%5 == 0, act: Act(cases % 7 % 3)}
					check(t, r, tc)
					cases++
				}
			}
		}
	}
	// The shapes of backpropagation at MARLIN's size (980 → 400 → 300;
	// the batch cut to 13 to keep the reference cheap): forward with bias
	// and ReLU, weight gradient, input gradient; then a product with more
	// than one block of every loop (k > kc, m > mc).
	for _, tc := range []gemmCase{
		{m: 13, n: 400, k: 980, alpha: 1, beta: 0, bias: true, act: ReLU},
		{m: 13, n: 256, k: 980, alpha: 1, beta: 0, bias: true, act: TanhAct},
		{transA: true, m: 980, n: 400, k: 13, alpha: 1, beta: 1},
		{transB: true, m: 13, n: 980, k: 400, alpha: 1, beta: 0},
		{m: 200, n: 33, k: 600, alpha: 1, beta: 0},
		{transA: true, transB: true, m: 101, n: 37, k: 300, alpha: -1, beta: 0.5},
	} {
		check(t, r, tc)
		cases++
	}
	t.Logf("%d cases, kernels: %s", cases, Name())
}

// TestGemmReusesBuffers runs a large product, then smaller ones, so the
// pooled packing buffers are reused at other sizes.
func TestGemmReusesBuffers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []gemmCase{
		{m: 7, n: 2100, k: 300, alpha: 1, beta: 0}, // n > nc, k > kc
		{m: 7, n: 3, k: 5, alpha: 1, beta: 1},
		{transA: true, m: 130, n: 70, k: 260, alpha: 1, beta: 0, act: ReLU},
		{m: 130, n: 70, k: 260, alpha: 1, beta: 0, bias: true, act: TanhAct},
	} {
		check(t, r, tc)
	}
}

func TestSgemmInterface(t *testing.T) {
	var impl Impl
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randVec(r, 7*5), randVec(r, 5*3)
	c := make([]float32, 7*3)
	impl.Sgemm(blas.NoTrans, blas.NoTrans, 7, 3, 5, 1, a, 5, b, 3, 0, c, 3)
	want, _ := refGemm(false, false, 7, 3, 5, 1, a, 5, b, 3, 0, c, 3, nil, Identity)
	for i := range c {
		if math.Abs(float64(c[i])-want[i]) > 1e-5 {
			t.Fatalf("C[%d] = %v, want %v", i, c[i], want[i])
		}
	}
	// Sgemv both ways against the same triple loop.
	x := randVec(r, 5)
	y := make([]float32, 7)
	impl.Sgemv(blas.NoTrans, 7, 5, 1, a, 5, x, 1, 0, y, 1)
	wy, _ := refGemm(false, false, 7, 1, 5, 1, a, 5, x, 1, 0, y, 1, nil, Identity)
	for i := range y {
		if math.Abs(float64(y[i])-wy[i]) > 1e-5 {
			t.Fatalf("Sgemv y[%d] = %v, want %v", i, y[i], wy[i])
		}
	}
	x7 := randVec(r, 7)
	y5 := make([]float32, 5)
	impl.Sgemv(blas.Trans, 7, 5, 1, a, 5, x7, 1, 0, y5, 1)
	wy5, _ := refGemm(true, false, 5, 1, 7, 1, a, 5, x7, 1, 0, y5, 1, nil, Identity)
	for i := range y5 {
		if math.Abs(float64(y5[i])-wy5[i]) > 1e-5 {
			t.Fatalf("Sgemv trans y[%d] = %v, want %v", i, y5[i], wy5[i])
		}
	}
}

func TestGemmPanicsOnShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a C too short")
		}
	}()
	Gemm(false, false, 8, 16, 4, 1, make([]float32, 32), 4, make([]float32, 64), 16, 0, make([]float32, 8*16-1), 16, nil, Identity)
}

// FuzzGemm checks random shapes, transposes, scalars and strides.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), uint8(0), uint8(0))
	f.Add(uint8(7), uint8(17), uint8(3), uint8(3), uint8(9))
	f.Add(uint8(97), uint8(33), uint8(255), uint8(1), uint8(22))
	f.Add(uint8(6), uint8(16), uint8(0), uint8(2), uint8(5))
	f.Fuzz(func(t *testing.T, m, n, k, tr, sel uint8) {
		r := rand.New(rand.NewPCG(uint64(m)<<16|uint64(n)<<8|uint64(k), uint64(sel)))
		s := scalars[int(sel)%len(scalars)]
		tc := gemmCase{transA: tr&1 != 0, transB: tr&2 != 0, m: int(m), n: int(n), k: int(k) * 3, alpha: s[0], beta: s[1], pad: int(sel) % 3, bias: sel&8 != 0, act: Act(sel>>4) % 3}
		check(t, r, tc)
	})
}

// TestElementwiseMatchesGo: the assembly element-wise passes perform the
// portable code's float32 operations in the same order, so the results are
// bit-identical (lengths include a non-multiple of 8 for the tails).
func TestElementwiseMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 8, 29, 1003} {
		p, g := randVec(r, n), randVec(r, n)
		m, v := randVec(r, n), randVec(r, n)
		for i := range v {
			v[i] = float32(math.Abs(float64(v[i])))
		}
		p2, m2, v2 := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
		Adam(p, g, m, v, 0.9, 0.999, 3e-4/0.1, 1/float32(math.Sqrt(0.001)), 1e-8)
		k := adamConst{b1: 0.9, c1: 1 - float32(0.9), b2: 0.999, c2: 1 - float32(0.999), step: 3e-4 / 0.1, sq: 1 / float32(math.Sqrt(0.001)), eps: 1e-8}
		adamGo(&k, p2, g, m2, v2)
		for i := range p {
			if p[i] != p2[i] || m[i] != m2[i] || v[i] != v2[i] {
				t.Fatalf("Adam n=%d i=%d: got %v %v %v, portable %v %v %v", n, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
			}
		}
		tg, src := randVec(r, n), randVec(r, n)
		tg2 := append([]float32(nil), tg...)
		Polyak(tg, src, 0.005)
		polyakGo(tg2, src, 0.005)
		for i := range tg {
			if tg[i] != tg2[i] {
				t.Fatalf("Polyak n=%d i=%d: %v vs %v", n, i, tg[i], tg2[i])
			}
		}
		// ReLU backward over a 3×n matrix with zeros, −0 and positives in y.
		y := randVec(r, 3*n)
		y[0] = 0
		if len(y) > 1 {
			y[1] = float32(math.Copysign(0, -1))
		}
		dz := randVec(r, 3*n)
		dz2 := append([]float32(nil), dz...)
		gb, gb2 := randVec(r, n), make([]float32, n)
		copy(gb2, gb)
		ReLUBackward(dz, y, 3, n, gb)
		reluBackGo(dz2, y, 3, n, 0, n, gb2)
		for i := range dz {
			if dz[i] != dz2[i] || (y[i] <= 0 && dz[i] != 0) {
				t.Fatalf("ReLUBackward n=%d i=%d: %v vs %v (y %v)", n, i, dz[i], dz2[i], y[i])
			}
		}
		for i := range gb {
			if gb[i] != gb2[i] {
				t.Fatalf("ReLUBackward bias gradient n=%d j=%d: %v vs %v", n, i, gb[i], gb2[i])
			}
		}
	}
}

// TestAxpyDotScale checks the vector kernels against float64 loops.
func TestAxpyDotScale(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 100, 1001} {
		x, y := randVec(r, n), randVec(r, n)
		var want, mag float64
		for i := range x {
			want += float64(x[i]) * float64(y[i])
			mag += math.Abs(float64(x[i]) * float64(y[i]))
		}
		if got := Dot(x, y); math.Abs(float64(got)-want) > float64(n+1)*u*mag {
			t.Fatalf("Dot n=%d = %v, want %v", n, got, want)
		}
		y0 := append([]float32(nil), y...)
		y2 := append([]float32(nil), y...)
		const alpha = float32(-1.3)
		Axpy(alpha, x, y)
		axpyGo(alpha, x, y2)
		for i := range y {
			// Bit-identical to the portable loop (no FMA), and within two
			// roundings of the exact value.
			w := float64(y0[i]) + float64(alpha)*float64(x[i])
			if y[i] != y2[i] || math.Abs(float64(y[i])-w) > 2*u*(math.Abs(float64(y0[i]))+math.Abs(float64(alpha)*float64(x[i]))) {
				t.Fatalf("Axpy n=%d i=%d = %v, portable %v, want %v", n, i, y[i], y2[i], w)
			}
		}
		Scale(0.25, y0)
		ColSum(x, 1, n, y)
	}
}

func BenchmarkGemm(b *testing.B) {
	for _, tc := range []gemmCase{
		{m: 512, n: 400, k: 980},
		{transA: true, m: 980, n: 400, k: 512},
		{transB: true, m: 512, n: 980, k: 400},
		{m: 256, n: 256, k: 256},
		{m: 1, n: 400, k: 980},
	} {
		b.Run(fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d", tc.transA, tc.transB, tc.m, tc.n, tc.k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, bb, c := randVec(r, tc.m*tc.k), randVec(r, tc.k*tc.n), randVec(r, tc.m*tc.n)
			lda, ldb := tc.k, tc.n
			if tc.transA {
				lda = tc.m
			}
			if tc.transB {
				ldb = tc.k
			}
			b.ReportAllocs()
			cpu0 := threadCPU()
			for b.Loop() {
				Gemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, a, lda, bb, ldb, 0, c, tc.n, nil, Identity)
			}
			flops := 2 * float64(tc.m*tc.n*tc.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOPS")
			if cpu := threadCPU() - cpu0; cpu > 0 {
				// Per CPU-second of this thread: robust to other processes
				// sharing the cores (run with GOMAXPROCS=1).
				b.ReportMetric(flops/cpu/1e9, "GFLOPS/cpu-s")
			}
		})
	}
}
