//go:build openblas

package nn

// The openblas build tag routes blas32 through gonum's netlib cgo bindings to
// OpenBLAS. Build with: go build -tags openblas (needs cgo and
// libopenblas-dev). The thread count follows OPENBLAS_NUM_THREADS.

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/netlib/blas/netlib"
)

// batch1Gemv selects SGEMV for batch-1 forward passes. OpenBLAS's
// threaded SGEMV measured 25x slower than its SGEMM on this machine
// (550 µs vs 21 µs at 980-256-256-1), gonum's SGEMV faster than its SGEMM.
const batch1Gemv = false

func init() { blas32.Use(netlib.Implementation{}) }

func defaultMatmul() Matmul { return blas32.Implementation() }

func backendName() string { return "OpenBLAS (cgo)" }
