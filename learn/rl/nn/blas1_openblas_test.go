//go:build openblas

package nn

// blas1Differs: under -tags openblas blas32 is OpenBLAS, whose batch-1
// product sums in another order.
const blas1Differs = true
