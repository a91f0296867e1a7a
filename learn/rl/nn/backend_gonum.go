//go:build !openblas

package nn

// batch1Gemv selects SGEMV for batch-1 forward passes. OpenBLAS's
// threaded SGEMV measured 25x slower than its SGEMM on this machine
// (550 µs vs 21 µs at 980-256-256-1), gonum's SGEMV faster than its SGEMM.
const batch1Gemv = true

const backendName = "gonum (pure Go)"
