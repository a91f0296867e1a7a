package f32

import (
	"fmt"
	"math"
)

// Accelerated reports whether the assembly kernels are in use (amd64 with
// AVX2 and FMA, built without the purego tag).
func Accelerated() bool { return accelerated }

// Name describes the kernels in use, for reports.
func Name() string {
	if accelerated {
		return "Go assembly (AVX2+FMA)"
	}
	return "portable Go"
}

// Adam applies one step of Adam with bias correction to params, in
// torch.optim.Adam's order of operations:
//
//	m ← b1·m + (1−b1)·g;  v ← b2·v + (1−b2)·g²
//	θ ← θ − (step·m) / (sqrt(v)·sq + eps)
//
// where the caller passes step = lr/(1−b1ᵗ) and sq = 1/sqrt(1−b2ᵗ). All
// four slices must have the same length. One pass reads and writes each
// parameter once.
func Adam(params, grads, m, v []float32, b1, b2, step, sq, eps float32) {
	if len(grads) != len(params) || len(m) != len(params) || len(v) != len(params) {
		panic(fmt.Sprintf("f32: Adam lengths %d params, %d grads, %d m, %d v", len(params), len(grads), len(m), len(v)))
	}
	k := adamConst{b1: b1, c1: 1 - b1, b2: b2, c2: 1 - b2, step: step, sq: sq, eps: eps}
	adam(&k, params, grads, m, v)
}

// Polyak sets target ← (1−tau)·target + tau·source.
func Polyak(target, source []float32, tau float32) {
	if len(source) != len(target) {
		panic(fmt.Sprintf("f32: Polyak target has %d values, source %d", len(target), len(source)))
	}
	polyak(target, source, tau)
}

// ReLUBackward turns dy (rows×cols, in place) into the gradient before a
// ReLU whose output was y: dz = dy where y > 0, else 0. If gb is not nil it
// also adds the column sums of dz (the bias gradient) in the same pass.
func ReLUBackward(dz, y []float32, rows, cols int, gb []float32) {
	if len(dz) < rows*cols || len(y) < rows*cols || (gb != nil && len(gb) < cols) {
		panic(fmt.Sprintf("f32: ReLUBackward %d×%d with %d dz, %d y, %d gb", rows, cols, len(dz), len(y), len(gb)))
	}
	reluBack(dz, y, rows, cols, gb)
}

// ColSum adds the column sums of x (rows×cols) into s, row by row.
func ColSum(x []float32, rows, cols int, s []float32) {
	s = s[:cols]
	for r := 0; r < rows; r++ {
		axpy(1, x[r*cols:(r+1)*cols], s)
	}
}

// Scale multiplies x by alpha.
func Scale(alpha float32, x []float32) { scale(alpha, x) }

// Axpy adds alpha·x to y (len(x) >= len(y)).
func Axpy(alpha float32, x, y []float32) { axpy(alpha, x, y) }

// Dot returns Σ x[i]·y[i] (len(y) >= len(x)), accumulated in float32.
func Dot(x, y []float32) float32 { return dot(x, y) }

var _ = math.Sqrt
