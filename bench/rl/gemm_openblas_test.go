//go:build openblas && linux

package rlbench

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/cclab/cclab/learn/rl/nn/f32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

func threadCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkGemmVsOpenBLAS times f32's SGEMM and OpenBLAS's one after the
// other on the products of a SAC update at MARLIN's size (forward, weight
// gradient Aᵀ·B, input gradient A·Bᵀ), per CPU-second of the calling
// thread so that other jobs on the machine skew the ratio less. Run with
//
//	OPENBLAS_NUM_THREADS=1 GOMAXPROCS=1 go test -tags openblas -run X -bench GemmVsOpenBLAS -count 3 ./bench/rl
func BenchmarkGemmVsOpenBLAS(b *testing.B) {
	type sgemm interface {
		Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	}
	for _, tc := range []struct {
		tA, tB  blas.Transpose
		m, n, k int
	}{
		{blas.NoTrans, blas.NoTrans, 512, 400, 981},
		{blas.Trans, blas.NoTrans, 981, 400, 512},
		{blas.NoTrans, blas.Trans, 512, 400, 300},
		{blas.NoTrans, blas.NoTrans, 256, 256, 256},
	} {
		b.Run(fmt.Sprintf("%c%c-%dx%dx%d", tc.tA, tc.tB, tc.m, tc.n, tc.k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, bb, c := make([]float32, tc.m*tc.k), make([]float32, tc.k*tc.n), make([]float32, tc.m*tc.n)
			for i := range a {
				a[i] = r.Float32()
			}
			for i := range bb {
				bb[i] = r.Float32()
			}
			lda, ldb := tc.k, tc.n
			if tc.tA == blas.Trans {
				lda = tc.m
			}
			if tc.tB == blas.Trans {
				ldb = tc.k
			}
			for _, im := range []struct {
				name string
				impl sgemm
			}{{"f32", f32.Impl{}}, {"openblas", netlib.Implementation{}}} {
				b.Run(im.name, func(b *testing.B) {
					b.ReportAllocs()
					t0 := threadCPU()
					for b.Loop() {
						im.impl.Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, a, lda, bb, ldb, 1, c, tc.n)
					}
					if cpu := threadCPU() - t0; cpu > 0 {
						b.ReportMetric(2*float64(tc.m*tc.n*tc.k)*float64(b.N)/cpu/1e9, "GFLOPS/cpu-s")
					}
				})
			}
		})
	}
}
