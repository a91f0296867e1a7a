//go:build !openblas

package nn

// blas1Differs: in the default build the reference backend's batch-1 pass
// is gonum's SGEMV, which f32 reproduces bit for bit.
const blas1Differs = false
