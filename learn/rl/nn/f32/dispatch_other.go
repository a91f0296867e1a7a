//go:build !amd64 || purego

package f32

const accelerated = false

func kernel(k int, a, b, c *float32, ldc int, bias *float32, flags int) {
	kernelGo(k, a, b, c, ldc, bias, flags)
}

func axpy(alpha float32, x, y []float32)      { axpyGo(alpha, x, y) }
func dot(x, y []float32) float32              { return dotGo(x, y) }
func scale(alpha float32, x []float32)        { scaleGo(alpha, x) }
func adam(k *adamConst, p, g, m, v []float32) { adamGo(k, p, g, m, v) }
func polyak(target, source []float32, tau float32) {
	polyakGo(target, source, tau)
}
func reluBack(dz, y []float32, rows, ld int, gb []float32) {
	reluBackGo(dz, y, rows, ld, 0, ld, gb)
}
func tanhSlice(x []float32) { tanhGo(x) }
func tanhRows(x []float32, rows, cols, ld int) {
	for r := 0; r < rows; r++ {
		tanhGo(x[r*ld : r*ld+cols])
	}
}
func tanhBack(dz, y []float32, rows, ld int, gb []float32) {
	tanhBackGo(dz, y, rows, ld, 0, ld, gb)
}
