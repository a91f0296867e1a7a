package f32

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/internal/racebuild"
)

// tanhMaxULP is the accuracy Tanh32 is held to: the largest distance, in
// float32 ulps, from tanh rounded to float32 (7, found by an exhaustive
// run over every float32 in [0, 12]; the function is odd, see
// TestTanhOddAndSpecial).
const tanhMaxULP = 7

// ulps returns the number of float32 values between a and b (both finite
// and of the same sign, or one of them zero).
func ulps(a, b float32) int64 {
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

// TestTanhAccuracy compares Tanh32 with float64 math.Tanh rounded to
// float32 on every 61st float32 in [0, 12] (18 million values, all
// binades from the denormals up) and on their negations.
func TestTanhAccuracy(t *testing.T) {
	step := uint32(61)
	if testing.Short() {
		step = 997
	}
	var worst int64
	var at float32
	var n int
	for bits := uint32(0); ; bits += step {
		x := math.Float32frombits(bits)
		if x > 12 {
			break
		}
		for _, v := range []float32{x, -x} {
			want := float32(math.Tanh(float64(v)))
			got := Tanh32(v)
			if d := ulps(got, want); d > worst {
				worst, at = d, v
			}
			n++
		}
	}
	if worst > tanhMaxULP {
		t.Fatalf("Tanh32(%v) = %v, math.Tanh %v: %d ulps > %d", at, Tanh32(at), math.Tanh(float64(at)), worst, tanhMaxULP)
	}
	t.Logf("%d inputs, worst %d ulps at %v", n, worst, at)
}

// TestTanhOddAndSpecial: tanh(−x) = −tanh(x) bit for bit, ±0 keep their
// sign, large arguments and infinities give ±1 exactly, NaN gives NaN, and
// the result never leaves [−1, 1].
func TestTanhOddAndSpecial(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	cases := []struct{ x, want float32 }{
		{0, 0}, {negZero, negZero}, {inf, 1}, {-inf, -1}, {8, 1}, {-8, -1}, {1e30, 1}, {-1e30, -1},
		{math.MaxFloat32, 1}, {-math.MaxFloat32, -1}, {1e-40, 1e-40}, {-1e-40, -1e-40}, {tanhClamp, 1},
	}
	for _, c := range cases {
		got := Tanh32(c.x)
		if math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("Tanh32(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	for _, nan := range []float32{float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001)} {
		if got := Tanh32(nan); !math.IsNaN(float64(got)) {
			t.Errorf("Tanh32(NaN %#x) = %v", math.Float32bits(nan), got)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 1e6; i++ {
		x := math.Float32frombits(r.Uint32() & 0x7fffffff)
		if math.IsNaN(float64(x)) {
			continue
		}
		y := Tanh32(x)
		if Tanh32(-x) != -y || y < 0 || y > 1 || (x > 0 && y == 0) {
			t.Fatalf("Tanh32(%v) = %v, Tanh32(−x) = %v", x, y, Tanh32(-x))
		}
	}
}

// specialVec returns n random values of several scales with ±0, ±Inf,
// NaN, tiny and clamp-sized values mixed in.
func specialVec(r *rand.Rand, n int) []float32 {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1e-40, -3.9e-4, 4e-4, tanhClamp, -tanhClamp, 7.9, 1e30}
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(4) {
		case 0:
			x[i] = specials[r.IntN(len(specials))]
		case 1:
			x[i] = float32(r.NormFloat64() * 0.01)
		default:
			x[i] = float32(r.NormFloat64() * 3)
		}
	}
	return x
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (math.IsNaN(float64(a)) && math.IsNaN(float64(b)))
}

// TestTanhKernelsMatchScalar: the slice, strided and fused-GEMM paths
// (assembly where available) give Tanh32's bits, so acting and training
// compute the same tanh.
func TestTanhKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 7, 8, 9, 16, 31, 64, 1003} {
		x := specialVec(r, n)
		y := append([]float32(nil), x...)
		Tanh(y)
		for i := range x {
			if !sameBits(y[i], Tanh32(x[i])) {
				t.Fatalf("Tanh n=%d i=%d: Tanh(%v) = %v, Tanh32 %v", n, i, x[i], y[i], Tanh32(x[i]))
			}
		}
		// Strided: columns [0, n) of a 3×(n+5) matrix; the padding stays.
		ld := n + 5
		m := specialVec(r, 3*ld)
		m0 := append([]float32(nil), m...)
		tanhRows(m, 3, n, ld)
		for i := range m {
			want := m0[i]
			if i%ld < n {
				want = Tanh32(m0[i])
			}
			if !sameBits(m[i], want) {
				t.Fatalf("tanhRows n=%d i=%d: %v, want %v", n, i, m[i], want)
			}
		}
	}
	// Fused epilogue = product, then bias, then Tanh32, at sizes that use
	// full tiles, edge tiles and the unpacked small-m path.
	for _, sz := range [][3]int{{1, 37, 20}, {2, 256, 64}, {3, 16, 5}, {13, 70, 33}, {64, 256, 300}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b, bias := randVec(r, m*k), randVec(r, k*n), randVec(r, n)
		for i := range a {
			a[i] *= 4 // reach the saturated part of tanh
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		Gemm(false, false, m, n, k, 1, a, k, b, n, 0, got, n, bias, TanhAct)
		Gemm(false, false, m, n, k, 1, a, k, b, n, 0, want, n, bias, Identity)
		for i, v := range want {
			if want[i] = Tanh32(v); !sameBits(got[i], want[i]) {
				t.Fatalf("fused tanh %v i=%d: %v, want %v", sz, i, got[i], want[i])
			}
		}
	}
}

// TestTanhBackward: the assembly gradient pass is the portable one bit for
// bit, and within two roundings of dy·(1 − y²).
func TestTanhBackward(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 7, 8, 29, 256, 1003} {
		y := randVec(r, 3*n)
		Tanh(y)
		dz := randVec(r, 3*n)
		dz0 := append([]float32(nil), dz...)
		dz2 := append([]float32(nil), dz...)
		gb, gb2 := randVec(r, n), make([]float32, n)
		copy(gb2, gb)
		TanhBackward(dz, y, 3, n, gb)
		tanhBackGo(dz2, y, 3, n, 0, n, gb2)
		for i := range dz {
			w := float64(dz0[i]) * (1 - float64(y[i])*float64(y[i]))
			if dz[i] != dz2[i] || math.Abs(float64(dz[i])-w) > 3*u*math.Abs(float64(dz0[i])) {
				t.Fatalf("TanhBackward n=%d i=%d: %v, portable %v, want %v", n, i, dz[i], dz2[i], w)
			}
		}
		for i := range gb {
			if gb[i] != gb2[i] {
				t.Fatalf("TanhBackward bias gradient n=%d j=%d: %v vs %v", n, i, gb[i], gb2[i])
			}
		}
		TanhBackward(dz, y, 3, n, nil)
	}
}

// TestTanhNoAlloc: the tanh passes and a fused tanh product allocate
// nothing.
func TestTanhNoAlloc(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("under -race sync.Pool drops pooled GEMM buffers at random, so they are allocated again")
	}
	r := rand.New(rand.NewPCG(17, 18))
	x, dz, gb := randVec(r, 64*256), randVec(r, 64*256), randVec(r, 256)
	a, b, c := randVec(r, 64*100), randVec(r, 100*256), make([]float32, 64*256)
	Gemm(false, false, 64, 256, 100, 1, a, 100, b, 256, 0, c, 256, gb, TanhAct) // warm the pool
	if n := testing.AllocsPerRun(20, func() {
		Tanh(x)
		TanhBackward(dz, x, 64, 256, gb)
		Gemm(false, false, 64, 256, 100, 1, a, 100, b, 256, 0, c, 256, gb, TanhAct)
		Gemm(false, false, 1, 256, 100, 1, a, 100, b, 256, 0, c, 256, gb, TanhAct)
	}); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

// FuzzTanh: any bit pattern, alone and inside a vector, gets Tanh32's
// bits from the vector kernel and stays within tanhMaxULP of tanh.
func FuzzTanh(f *testing.F) {
	for _, b := range []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0x40fcf9e0, 0x39d1b717, 1} {
		f.Add(b, uint8(3))
	}
	f.Fuzz(func(t *testing.T, bits uint32, pos uint8) {
		x := math.Float32frombits(bits)
		v := make([]float32, 19)
		for i := range v {
			v[i] = float32(i) * 0.37
		}
		v[int(pos)%len(v)] = x
		w := append([]float32(nil), v...)
		Tanh(v)
		for i := range v {
			if !sameBits(v[i], Tanh32(w[i])) {
				t.Fatalf("Tanh(%v) = %v, Tanh32 %v", w[i], v[i], Tanh32(w[i]))
			}
		}
		y := Tanh32(x)
		if math.IsNaN(float64(x)) {
			if !math.IsNaN(float64(y)) {
				t.Fatalf("Tanh32(NaN) = %v", y)
			}
			return
		}
		if d := ulps(y, float32(math.Tanh(float64(x)))); d > tanhMaxULP {
			t.Fatalf("Tanh32(%v) = %v, %d ulps from %v", x, y, d, math.Tanh(float64(x)))
		}
	})
}

func BenchmarkTanh(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randVec(r, 256*256)
	for i := range x {
		x[i] *= 3
	}
	y := make([]float32, len(x))
	b.ReportAllocs()
	cpu0 := threadCPU()
	for b.Loop() {
		copy(y, x)
		Tanh(y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
	if cpu := threadCPU() - cpu0; cpu > 0 {
		b.ReportMetric(cpu*1e9/float64(b.N)/float64(len(x)), "cpu-ns/value")
	}
}
