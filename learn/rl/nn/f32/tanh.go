package f32

import "fmt"

// The float32 tanh of package nn's tanh layers: a rational minimax
// approximation p(x)/q(x) of degrees 13 and 6 in x with Eigen's
// coefficients (generic_fast_tanh_float, also used by XLA and ONNX
// Runtime's MLAS), evaluated by Horner's rule with every product and sum
// rounded to float32 (no fused multiply-add) and one correctly rounded
// division. The assembly performs the same float32 operations in the same
// order, so Tanh gives the same bits on every CPU and in every code path
// (batch-1 inference, fused GEMM epilogue, plain slices): an action
// computed while acting equals its recomputation in a training batch.
//
// Accuracy (measured exhaustively over all float32 in [0, 12], compared
// with float64 math.Tanh rounded to float32): at most 7 ulps, 93% of
// inputs exact, 99.6% within 2 ulps; the largest errors are near ±1 where
// an ulp is 6·10⁻⁸ (absolute error < 5·10⁻⁷ everywhere). Special values:
// tanh(±0) = ±0 and |x| < 0.0004 returns x (tanh(x) = x within half an
// ulp there), |x| ≥ 7.905 and ±Inf give ±1, NaN gives NaN. It is odd
// and stays in [−1, 1], but is not monotone at the scale of one ulp (e.g.
// it steps down by an ulp near 0.00928).
const (
	tanhClamp = float32(7.90531110763549805) // p/q rounds to exactly 1 here
	tanhTiny  = float32(0.0004)
	tanhA1    = float32(4.89352455891786e-03)
	tanhA3    = float32(6.37261928875436e-04)
	tanhA5    = float32(1.48572235717979e-05)
	tanhA7    = float32(5.12229709037114e-08)
	tanhA9    = float32(-8.60467152213735e-11)
	tanhA11   = float32(2.00018790482477e-13)
	tanhA13   = float32(-2.76076847742355e-16)
	tanhB0    = float32(4.89352518554385e-03)
	tanhB2    = float32(2.26843463243900e-03)
	tanhB4    = float32(1.18534705686654e-04)
	tanhB6    = float32(1.19825839466702e-06)
)

// Tanh32 returns the hyperbolic tangent of x as the kernels compute it
// (see the accuracy note above): the scalar reference of Tanh.
func Tanh32(x float32) float32 {
	if x > -tanhTiny && x < tanhTiny {
		return x
	}
	// The clamps mirror VMINPS/VMAXPS with x as the operand returned for
	// NaN: NaN passes through and yields NaN.
	c := x
	if tanhClamp < c {
		c = tanhClamp
	}
	if -tanhClamp > c {
		c = -tanhClamp
	}
	// Explicit conversions keep the compiler from fusing a multiply and
	// an add into an FMA (which the Go spec allows and which would round
	// differently from the assembly).
	x2 := float32(c * c)
	p := float32(x2*tanhA13) + tanhA11
	p = float32(x2*p) + tanhA9
	p = float32(x2*p) + tanhA7
	p = float32(x2*p) + tanhA5
	p = float32(x2*p) + tanhA3
	p = float32(x2*p) + tanhA1
	p = float32(c * p)
	q := float32(x2*tanhB6) + tanhB4
	q = float32(x2*q) + tanhB2
	q = float32(x2*q) + tanhB0
	return p / q
}

// Tanh replaces every x[i] by Tanh32(x[i]).
func Tanh(x []float32) { tanhSlice(x) }

func tanhGo(x []float32) {
	for i, v := range x {
		x[i] = Tanh32(v)
	}
}

// TanhBackward turns dy (rows×cols, in place) into the gradient before a
// tanh whose output was y: dz = dy·(1 − y²), rounding y² and 1 − y² to
// float32. If gb is not nil it also adds the column sums of dz (the bias
// gradient), row by row, in the same pass.
func TanhBackward(dz, y []float32, rows, cols int, gb []float32) {
	if len(dz) < rows*cols || len(y) < rows*cols || (gb != nil && len(gb) < cols) {
		panic(fmt.Sprintf("f32: TanhBackward %d×%d with %d dz, %d y, %d gb", rows, cols, len(dz), len(y), len(gb)))
	}
	tanhBack(dz, y, rows, cols, gb)
}

// tanhBackGo is TanhBackward on columns [from, to) of the rows×ld
// matrices.
func tanhBackGo(dz, y []float32, rows, ld, from, to int, gb []float32) {
	for r := 0; r < rows; r++ {
		d := dz[r*ld+from : r*ld+to]
		yr := y[r*ld+from : r*ld+to]
		for j, v := range yr {
			d[j] *= 1 - float32(v*v)
		}
		if gb != nil {
			g := gb[from:to]
			for j, v := range d {
				g[j] += v
			}
		}
	}
}
