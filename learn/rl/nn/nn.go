// Package nn is a small float32 neural-network library for reinforcement
// learning: dense layers with ReLU/tanh activations assembled into MLPs,
// batched forward and backward passes on a BLAS matrix-multiply interface,
// Adam and RMSprop optimisers, gradient-norm clipping, Polyak averaging for
// target networks, and the policy heads and losses the algorithms need
// (diagonal Gaussian, tanh-squashed Gaussian, categorical, MSE, Huber, PPO's
// clipped surrogate).
//
// Data are row-major float32 matrices: a batch of B inputs of width n is a
// []float32 of length B*n. Parameters of a network live in one flat slice
// (and gradients in a parallel slice) so that optimisers, clipping, Polyak
// updates and serialisation are single loops.
//
// Matrix products go through the Matmul interface. The default backend is
// package f32's SGEMM in Go assembly (AVX2+FMA, chosen at start-up; gonum's
// pure-Go BLAS on other CPUs), or OpenBLAS when built with -tags openblas
// (cgo, links -lopenblas; see docs/rl.md). With the f32 backend a dense
// layer's bias and activation are fused into the product, and the ReLU or
// tanh gradient into the bias gradient. Tanh layers compute f32.Tanh32, a
// float32 approximation within 7 ulps of tanh, on every backend and batch
// size, so acting and training see the same function. Results are
// deterministic for a given backend and thread count.
//
// Every backward pass is checked against finite differences and against an
// independent float64 implementation in the tests.
package nn

import "gonum.org/v1/gonum/blas"

// Matmul computes row-major C = alpha*op(A)*op(B) + beta*C, where op(X) is X
// or its transpose, op(A) is m×k, op(B) is k×n and C is m×n. It has the
// signature of BLAS SGEMM, so any blas.Float32Level3 satisfies it.
type Matmul interface {
	Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// DefaultMatmul returns the matrix-multiply backend new MLPs use: f32.Impl
// (Go assembly) where the CPU has AVX2 and FMA, else gonum's blas32
// implementation (OpenBLAS under the openblas build tag).
func DefaultMatmul() Matmul { return defaultMatmul() }

// BackendName names the matrix-multiply backend in use, for reports.
func BackendName() string { return backendName() }
