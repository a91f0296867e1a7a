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
// whatever gonum's blas32 package has installed: gonum's pure-Go
// implementation, or OpenBLAS when built with -tags openblas (cgo, links
// -lopenblas; see docs/rl.md). Results are deterministic for a given backend
// and thread count.
//
// Every backward pass is checked against finite differences and against an
// independent float64 implementation in the tests.
package nn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Matmul computes row-major C = alpha*op(A)*op(B) + beta*C, where op(X) is X
// or its transpose, op(A) is m×k, op(B) is k×n and C is m×n. It has the
// signature of BLAS SGEMM, so any blas.Float32Level3 satisfies it.
type Matmul interface {
	Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// DefaultMatmul returns the blas32 implementation currently installed:
// gonum's pure-Go BLAS unless a build tag installed another (openblas).
func DefaultMatmul() Matmul { return blas32.Implementation() }

// BackendName names the matrix-multiply backend compiled in, for reports.
func BackendName() string { return backendName }
