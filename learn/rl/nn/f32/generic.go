package f32

import (
	"math"
	"unsafe"
)

// Portable versions of the kernels. They define the semantics the assembly
// reproduces; the element-wise ones (Adam, Polyak, ReLU gradient) perform
// the same float32 operations in the same order, so their results are
// bit-identical to the assembly's. The explicit float32 conversions forbid
// the compiler to fuse a multiply and an add into one FMA (the Go spec
// allows fusion otherwise, and does it for GOAMD64=v3), which would round
// differently.

// kernelGo adds the product of a packed mr×k micro-panel of A and k×nr
// micro-panel of B to the mr×nr tile at c (row stride ldc), then adds
// bias[0:nr] to every row if bias is not nil and applies ReLU if
// flags&flagReLU. With flags&flagOverwrite it stores instead of adding (C
// is not read).
func kernelGo(k int, a, b, c *float32, ldc int, bias *float32, flags int) {
	as := unsafe.Slice(a, k*mr)
	bs := unsafe.Slice(b, k*nr)
	var acc [mr * nr]float32
	for p := 0; p < k; p++ {
		ap := as[p*mr : p*mr+mr]
		bp := bs[p*nr : p*nr+nr]
		for i, av := range ap {
			row := acc[i*nr : i*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	var bi []float32
	if bias != nil {
		bi = unsafe.Slice(bias, nr)
	}
	for i := 0; i < mr; i++ {
		row := cs[i*ldc : i*ldc+nr]
		if flags&flagOverwrite != 0 {
			copy(row, acc[i*nr:])
		} else {
			for j := range row {
				row[j] += acc[i*nr+j]
			}
		}
		act := Identity
		if flags&flagReLU != 0 {
			act = ReLU
		}
		epilogue(row, bi, act)
	}
}

// axpyGo is y += alpha·x with the product rounded before the add (no FMA),
// like gonum's AxpyUnitary.
func axpyGo(alpha float32, x, y []float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += float32(alpha * v)
	}
}

func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s float32
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

func scaleGo(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// adamConst holds Adam's per-step constants in the order the assembly
// reads them.
type adamConst struct {
	b1, c1, b2, c2, step, sq, eps, _ float32
}

func adamGo(k *adamConst, params, grads, m, v []float32) {
	grads, m, v = grads[:len(params)], m[:len(params)], v[:len(params)]
	for i, g := range grads {
		mi := float32(k.b1*m[i]) + float32(k.c1*g)
		vi := float32(k.b2*v[i]) + float32(float32(k.c2*g)*g)
		m[i], v[i] = mi, vi
		params[i] -= float32(k.step*mi) / (float32(sqrt32(vi)*k.sq) + k.eps)
	}
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

func polyakGo(target, source []float32, tau float32) {
	u := 1 - tau
	source = source[:len(target)]
	for i, s := range source {
		target[i] = float32(u*target[i]) + float32(tau*s)
	}
}

// reluBackGo masks columns [from, to) of the rows×ld matrix dz where y is
// not positive and adds the masked columns' sums into gb (if not nil).
func reluBackGo(dz, y []float32, rows, ld, from, to int, gb []float32) {
	for r := 0; r < rows; r++ {
		d := dz[r*ld+from : r*ld+to]
		yr := y[r*ld+from : r*ld+to]
		for j, v := range yr {
			if !(v > 0) {
				d[j] = 0
			}
		}
		if gb != nil {
			g := gb[from:to]
			for j, v := range d {
				g[j] += v
			}
		}
	}
}
