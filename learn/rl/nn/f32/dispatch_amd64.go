//go:build amd64 && !purego

package f32

import "golang.org/x/sys/cpu"

// accelerated is decided once at start-up: the assembly needs AVX2 (8-wide
// float32 vectors) and FMA3. The OS must also save the YMM state, which
// x/sys/cpu folds into HasAVX/HasAVX2.
var accelerated = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kernelAVX2(k int, a, b, c *float32, ldc int, bias *float32, flags int)

//go:noescape
func axpyAVX2(n int, alpha float32, x, y *float32)

//go:noescape
func dotAVX2(n int, x, y *float32) float32

//go:noescape
func scaleAVX2(n int, alpha float32, x *float32)

//go:noescape
func adamAVX2(n int, k *adamConst, p, gr, m, v *float32)

//go:noescape
func polyakAVX2(n int, tau, u float32, target, source *float32)

//go:noescape
func reluBackAVX2(rows, cols, ld int, dz, y, gb *float32)

func kernel(k int, a, b, c *float32, ldc int, bias *float32, flags int) {
	if accelerated {
		kernelAVX2(k, a, b, c, ldc, bias, flags)
		return
	}
	kernelGo(k, a, b, c, ldc, bias, flags)
}

func axpy(alpha float32, x, y []float32) {
	n := len(y)
	if !accelerated || n < 8 {
		axpyGo(alpha, x, y)
		return
	}
	x = x[:n]
	axpyAVX2(n, alpha, &x[0], &y[0])
}

func dot(x, y []float32) float32 {
	n := len(x)
	if !accelerated || n < 8 {
		return dotGo(x, y)
	}
	y = y[:n]
	return dotAVX2(n, &x[0], &y[0])
}

func scale(alpha float32, x []float32) {
	n := len(x)
	if !accelerated || n < 8 {
		scaleGo(alpha, x)
		return
	}
	scaleAVX2(n, alpha, &x[0])
}

func adam(k *adamConst, p, g, m, v []float32) {
	n := len(p) &^ 7
	if !accelerated || n == 0 {
		adamGo(k, p, g, m, v)
		return
	}
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	adamAVX2(n, k, &p[0], &g[0], &m[0], &v[0])
	adamGo(k, p[n:], g[n:], m[n:], v[n:])
}

func polyak(target, source []float32, tau float32) {
	n := len(target) &^ 7
	if !accelerated || n == 0 {
		polyakGo(target, source, tau)
		return
	}
	source = source[:len(target)]
	polyakAVX2(n, tau, 1-tau, &target[0], &source[0])
	polyakGo(target[n:], source[n:], tau)
}

func reluBack(dz, y []float32, rows, ld int, gb []float32) {
	actBack(dz, y, rows, ld, gb, reluBackAVX2, reluBackGo)
}

// actBack runs an activation's backward pass: the AVX2 kernel on the
// columns that fill 8-lane vectors, the Go loop on the rest (or on all of
// it without AVX2).
func actBack(dz, y []float32, rows, ld int, gb []float32, avx func(rows, cols, ld int, dz, y, gb *float32), generic func(dz, y []float32, rows, ld, from, to int, gb []float32)) {
	n := ld &^ 7
	if !accelerated || n == 0 || rows == 0 {
		generic(dz, y, rows, ld, 0, ld, gb)
		return
	}
	_, _ = dz[rows*ld-1], y[rows*ld-1]
	var g *float32
	if gb != nil {
		g = &gb[:ld][0]
	}
	avx(rows, n, ld, &dz[0], &y[0], g)
	if n < ld {
		generic(dz, y, rows, ld, n, ld, gb)
	}
}

//go:noescape
func tanhAVX2(rows, cols, ld int, x *float32)

//go:noescape
func tanhBackAVX2(rows, cols, ld int, dz, y, gb *float32)

func tanhSlice(x []float32) {
	n := len(x) &^ 7
	if !accelerated || n == 0 {
		tanhGo(x)
		return
	}
	tanhAVX2(1, n, n, &x[0])
	tanhGo(x[n:])
}

// tanhRows applies Tanh32 to columns [0, cols) of the rows×ld matrix x.
func tanhRows(x []float32, rows, cols, ld int) {
	n := cols &^ 7
	if accelerated && n > 0 && rows > 0 {
		_ = x[(rows-1)*ld+cols-1]
		tanhAVX2(rows, n, ld, &x[0])
	} else {
		n = 0
	}
	if n < cols {
		for r := 0; r < rows; r++ {
			tanhGo(x[r*ld+n : r*ld+cols])
		}
	}
}

func tanhBack(dz, y []float32, rows, ld int, gb []float32) {
	actBack(dz, y, rows, ld, gb, tanhBackAVX2, tanhBackGo)
}
