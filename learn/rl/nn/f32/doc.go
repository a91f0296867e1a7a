// Package f32 holds the single-precision kernels behind package nn: a
// packed, cache-blocked SGEMM for the three products backpropagation uses
// (A·B, Aᵀ·B, A·Bᵀ) with an optional fused bias + ReLU or tanh epilogue,
// a float32 tanh (Tanh32: a rational approximation within 7 ulps, the
// same bits from the assembly and the portable code), and the element-wise
// passes of a training step (ReLU or tanh gradient fused with the bias
// gradient, Adam, Polyak averaging).
//
// On amd64 CPUs with AVX2 and FMA (detected at start-up with
// golang.org/x/sys/cpu) the inner loops are Go assembly: a 6×16
// register-blocked micro-kernel that keeps twelve 8-wide accumulators in
// registers and streams packed panels of A and B from L1. Everywhere else,
// and under the purego build tag (for testing the driver), the same driver
// runs portable Go kernels. No cgo is involved.
//
// The GEMM follows Goto and van de Geijn, "Anatomy of high-performance
// matrix multiplication" (ACM TOMS 2008): B is packed into kc×nc panels of
// 16-column micro-panels, A into mc×kc blocks of 6-row micro-panels (with
// alpha folded in), and the micro-kernel runs over the packed data. Packing
// buffers come from a sync.Pool, so steady-state calls do not allocate and
// concurrent calls are safe.
//
// Results differ from a naive loop only by float32 rounding: each element
// of C is still a sum of k products, accumulated in a different order and
// with fused multiply-adds, so the error is bounded by about k·2⁻²⁴ times
// Σ|a·b| (see the tests).
package f32
