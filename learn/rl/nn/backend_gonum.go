//go:build !openblas

package nn

import (
	"github.com/cclab/cclab/learn/rl/nn/f32"
	"gonum.org/v1/gonum/blas/blas32"
)

// batch1Gemv selects SGEMV for batch-1 forward passes when the backend is
// gonum's: its SGEMV measured faster than its SGEMM there (no goroutine
// fan-out). The f32 kernels handle batch 1 inside Gemm.
const batch1Gemv = true

// defaultMatmul is the Go assembly SGEMM of package f32 on CPUs with AVX2
// and FMA, else gonum's pure-Go BLAS (f32's portable kernels are slower
// than gonum's SSE-assisted ones on CPUs without AVX2).
func defaultMatmul() Matmul {
	if f32.Accelerated() {
		return f32.Impl{}
	}
	return blas32.Implementation()
}

func backendName() string {
	if f32.Accelerated() {
		return "pure Go, " + f32.Name()
	}
	return "gonum (pure Go)"
}
