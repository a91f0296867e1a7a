package f32

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
)

// Block sizes. The micro-kernel computes an mr×nr tile of C; kc is the
// depth of one packed panel (a kc×nr micro-panel of B is 16 KiB and stays
// in L1 while the kernel sweeps the A block), mc×kc floats of A (96 KiB)
// stay in L2, and nc bounds the packed B panel (kc×nc floats) so that it
// fits the last-level cache share of one core.
const (
	mr = 6
	nr = 16
	kc = 256
	mc = 96 // multiple of mr
	nc = 2048
)

// Act selects the activation Gemm's fused epilogue applies.
type Act uint8

// Activations of the fused epilogue.
const (
	Identity Act = iota
	ReLU         // max(x, 0), mapping −0 and NaN to +0
	TanhAct      // Tanh32
)

// Micro-kernel flags.
const (
	flagReLU      = 1 // apply ReLU after adding the bias
	flagOverwrite = 2 // C = A·B (C not read) instead of C += A·B
)

// smallM is the largest m handled without packing: for a few rows (batch-1
// inference) packing B would cost as much as the product, so rows of C are
// accumulated directly with axpy or dot kernels.
const smallM = 2

type buffers struct{ a, b []float32 }

var pool = sync.Pool{New: func() any { return new(buffers) }}

func growBuf(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// Impl implements SGEMM on row-major matrices with the signature of gonum's
// blas.Float32Level3 Sgemm, so it can stand in for blas32's implementation.
// The zero value is ready to use and safe for concurrent use.
type Impl struct{}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(A) is m×k, op(B) is k×n and C is m×n. As in BLAS, C is not read
// when beta is 0. It panics on inconsistent sizes (programmer error).
func (Impl) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Gemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil, Identity)
}

// Sgemv computes y = alpha·op(A)·x + beta·y for row-major A (m×n) with unit
// strides, as BLAS SGEMV; it exists for callers that pick a matrix-vector
// product for batch-1 inference.
func (Impl) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	if incX != 1 || incY != 1 {
		panic("f32: Sgemv supports only unit strides")
	}
	if tA == blas.NoTrans {
		// y (m) = A (m×n) · x (n): y as a column, i.e. C m×1 = A·x.
		Gemm(false, false, m, 1, n, alpha, a, lda, x, 1, beta, y, 1, nil, Identity)
		return
	}
	// y (n) = Aᵀ · x: y as a row, C 1×n = xᵀ·A.
	Gemm(false, false, 1, n, m, alpha, x, m, a, lda, beta, y, n, nil, Identity)
}

func checkMat(name string, s []float32, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("f32: %s has leading dimension %d < %d columns", name, ld, cols))
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("f32: %s has %d elements, %d×%d with stride %d needs %d", name, len(s), rows, cols, ld, need))
	}
}

// Gemm computes C = act(alpha·op(A)·op(B) + beta·C + bias) for row-major
// matrices, with op(X) = Xᵀ when the matching trans flag is set, op(A) m×k,
// op(B) k×n, C m×n, bias nil or of length n (added to every row) and act
// Identity, ReLU (max(x, 0), mapping −0 and NaN to +0) or TanhAct
// (Tanh32). C is not read when beta is 0. The fused bias and ReLU are
// applied while each tile of C is still in registers and tanh while the
// tile is in L1, so a dense layer's forward pass touches its output once.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, act Act) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("f32: negative size m=%d n=%d k=%d", m, n, k))
	}
	if transA {
		checkMat("A", a, k, m, lda)
	} else {
		checkMat("A", a, m, k, lda)
	}
	if transB {
		checkMat("B", b, n, k, ldb)
	} else {
		checkMat("B", b, k, n, ldb)
	}
	checkMat("C", c, m, n, ldc)
	if act > TanhAct {
		panic(fmt.Sprintf("f32: unknown activation %d", act))
	}
	if bias != nil && len(bias) < n {
		panic(fmt.Sprintf("f32: bias has %d elements, want %d", len(bias), n))
	}
	if m == 0 || n == 0 {
		return
	}
	// With beta = 0 the blocked path overwrites C on its first k-block
	// instead of clearing it first (and never reads it, as BLAS requires).
	overwrite := beta == 0 && k > 0 && alpha != 0 && m > smallM
	switch {
	case beta == 1 || overwrite:
	case beta == 0:
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	default:
		for i := 0; i < m; i++ {
			scale(beta, c[i*ldc:i*ldc+n])
		}
	}
	if k == 0 || alpha == 0 {
		for i := 0; i < m; i++ {
			epilogue(c[i*ldc:i*ldc+n], bias, act)
		}
		return
	}
	if m <= smallM {
		if beta == 0 && bias != nil {
			// Start from the bias and accumulate the products in order,
			// as y = b; y += Wᵀx with gonum's SGEMV did: batch-1
			// inference then gives the same bits as before this package.
			for i := 0; i < m; i++ {
				copy(c[i*ldc:i*ldc+n], bias)
			}
			bias = nil
		}
		gemmSmall(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc, bias, act)
		return
	}
	buf := pool.Get().(*buffers)
	nbMax := min(n, nc)
	buf.b = growBuf(buf.b, min(k, kc)*((nbMax+nr-1)/nr*nr))
	buf.a = growBuf(buf.a, min(k, kc)*((min(m, mc)+mr-1)/mr*mr))
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			last := pc+kb == k
			packB(transB, b, ldb, pc, jc, kb, nb, buf.b)
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				packA(transA, a, lda, ic, pc, mb, kb, alpha, buf.a)
				macro(mb, nb, kb, buf.a, buf.b, c[ic*ldc+jc:], ldc, bias, jc, act, last, overwrite && pc == 0)
			}
		}
	}
	pool.Put(buf)
}

// macro runs the micro-kernel over one packed mb×kb block of A and kb×nb
// panel of B, adding into C (which starts at the block's top-left corner).
func macro(mb, nb, kb int, pa, pb, c []float32, ldc int, bias []float32, jc int, act Act, last, first bool) {
	var tmp [mr * nr]float32
	for jr := 0; jr < nb; jr += nr {
		nrb := min(nr, nb-jr)
		bp := pb[jr*kb : jr*kb+nr*kb]
		var bi *float32
		var bs []float32
		flags := 0
		if first {
			flags |= flagOverwrite
		}
		if last {
			if bias != nil {
				bs = bias[jc+jr : jc+jr+nrb]
				if nrb == nr {
					bi = &bs[0]
				}
			}
			if act == ReLU {
				flags |= flagReLU
			}
		}
		for ir := 0; ir < mb; ir += mr {
			mrb := min(mr, mb-ir)
			ap := pa[ir*kb : ir*kb+mr*kb]
			ci := ir*ldc + jr
			if mrb == mr && nrb == nr {
				_ = c[ci+(mr-1)*ldc+nr-1] // bounds: the kernel writes this tile
				kernel(kb, &ap[0], &bp[0], &c[ci], ldc, bi, flags)
				if last && act == TanhAct {
					// The tile was just written: tanh runs on it in L1.
					tanhRows(c[ci:], mr, nr, ldc)
				}
				continue
			}
			// Edge tile: compute the full tile into tmp (packing padded A
			// and B with zeros) and add the valid part, in the kernel's
			// order of operations: (C + AB) + bias, then ReLU.
			kernel(kb, &ap[0], &bp[0], &tmp[0], nr, nil, flagOverwrite)
			for i := 0; i < mrb; i++ {
				row := c[ci+i*ldc : ci+i*ldc+nrb]
				if first {
					copy(row, tmp[i*nr:])
				} else {
					for j := range row {
						row[j] += tmp[i*nr+j]
					}
				}
				if last {
					epilogue(row, bs, act)
				}
			}
		}
	}
}

// epilogue adds bias (if not nil) to row and applies act, with the
// micro-kernel's semantics (ReLU: VMAXPS(x, 0), x > 0 ? x : +0).
func epilogue(row, bias []float32, act Act) {
	if bias != nil {
		bias = bias[:len(row)]
		for j, v := range bias {
			row[j] += v
		}
	}
	switch act {
	case ReLU:
		for j, v := range row {
			if !(v > 0) {
				row[j] = 0
			}
		}
	case TanhAct:
		tanhSlice(row)
	}
}

// packB copies op(B)[pc:pc+kb, jc:jc+nb] into dst as ⌈nb/nr⌉ micro-panels,
// each kb rows of nr consecutive columns, zero-padding the last.
func packB(trans bool, b []float32, ldb, pc, jc, kb, nb int, dst []float32) {
	for jr := 0; jr < nb; jr += nr {
		w := min(nr, nb-jr)
		d := dst[jr*kb : jr*kb+nr*kb]
		if !trans {
			// op(B)(p, j) = b[p*ldb+j]: rows of 16 contiguous values.
			if w == nr {
				// Fixed-size array copies compile to inline vector moves
				// (copy would call memmove for every 64 bytes).
				for p := 0; p < kb; p++ {
					off := (pc+p)*ldb + jc + jr
					// A direct array assignment: the compiler may call
					// memmove for it, but copying through a local instead
					// made the MLP 980-256-256 update 10% slower (two
					// 64-byte copies through the stack).
					*(*[nr]float32)(d[p*nr:]) = *(*[nr]float32)(b[off : off+nr])
				}
				continue
			}
			for p := 0; p < kb; p++ {
				src := b[(pc+p)*ldb+jc+jr:]
				row := d[p*nr : p*nr+nr]
				copy(row[:w], src[:w])
				clear(row[w:])
			}
			continue
		}
		// op(B)(p, j) = b[j*ldb+p]: sixteen source rows read in step,
		// each micro-panel row written in order.
		if w == nr {
			var rows [nr][]float32
			for j := range rows {
				off := (jc+jr+j)*ldb + pc
				rows[j] = b[off : off+kb : off+kb]
			}
			d = d[:kb*nr]
			for p := 0; p < kb; p++ {
				row := (*[nr]float32)(d[p*nr : p*nr+nr])
				for j := range row {
					row[j] = rows[j][p]
				}
			}
			continue
		}
		for j := 0; j < w; j++ {
			src := b[(jc+jr+j)*ldb+pc : (jc+jr+j)*ldb+pc+kb]
			for p, v := range src {
				d[p*nr+j] = v
			}
		}
		for j := w; j < nr; j++ {
			for p := 0; p < kb; p++ {
				d[p*nr+j] = 0
			}
		}
	}
}

// packA copies alpha·op(A)[ic:ic+mb, pc:pc+kb] into dst as ⌈mb/mr⌉
// micro-panels, each kb columns of mr consecutive rows, zero-padding the
// last.
func packA(trans bool, a []float32, lda, ic, pc, mb, kb int, alpha float32, dst []float32) {
	if trans {
		// op(A)(i, p) = a[p*lda+i]: row p of a holds mb consecutive
		// values for all micro-panels. Reading it once, in order, and
		// scattering mr values to each micro-panel keeps the reads
		// sequential (micro-panel by micro-panel would revisit every row
		// mb/mr times, measured 15% slower overall).
		full := mb / mr * mr
		for p := 0; p < kb; p++ {
			src := a[(pc+p)*lda+ic : (pc+p)*lda+ic+mb]
			if alpha == 1 {
				for ir := 0; ir < full; ir += mr {
					*(*[mr]float32)(dst[ir*kb+p*mr:]) = *(*[mr]float32)(src[ir : ir+mr]) // direct, see packB
				}
			} else {
				for ir := 0; ir < full; ir += mr {
					col := (*[mr]float32)(dst[ir*kb+p*mr:])
					s := (*[mr]float32)(src[ir : ir+mr])
					for i := range col {
						col[i] = alpha * s[i]
					}
				}
			}
			if full < mb {
				col := dst[full*kb+p*mr : full*kb+p*mr+mr]
				for i := range col {
					if full+i < mb {
						col[i] = alpha * src[full+i]
					} else {
						col[i] = 0
					}
				}
			}
		}
		return
	}
	for ir := 0; ir < mb; ir += mr {
		h := min(mr, mb-ir)
		d := dst[ir*kb : ir*kb+mr*kb]
		// op(A)(i, p) = a[i*lda+p]: six row streams, written in order.
		if h == mr {
			off := (ic+ir)*lda + pc
			r0 := a[off : off+kb]
			r1 := a[off+lda : off+lda+kb]
			r2 := a[off+2*lda : off+2*lda+kb]
			r3 := a[off+3*lda : off+3*lda+kb]
			r4 := a[off+4*lda : off+4*lda+kb]
			r5 := a[off+5*lda : off+5*lda+kb]
			d = d[:kb*mr]
			if alpha == 1 {
				for p := range r0 {
					col := d[p*mr : p*mr+mr : p*mr+mr]
					col[0], col[1], col[2], col[3], col[4], col[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
				}
				continue
			}
			for p := range r0 {
				col := d[p*mr : p*mr+mr : p*mr+mr]
				col[0], col[1], col[2], col[3], col[4], col[5] = alpha*r0[p], alpha*r1[p], alpha*r2[p], alpha*r3[p], alpha*r4[p], alpha*r5[p]
			}
			continue
		}
		for i := 0; i < h; i++ {
			src := a[(ic+ir+i)*lda+pc : (ic+ir+i)*lda+pc+kb]
			for p, v := range src {
				d[p*mr+i] = alpha * v
			}
		}
		for i := h; i < mr; i++ {
			for p := 0; p < kb; p++ {
				d[p*mr+i] = 0
			}
		}
	}
}

// gemmSmall handles m <= smallM without packing B: each row of C gets
// Σ_p alpha·A(i,p)·B(p,:) by axpy (B not transposed; one rounded multiply
// and one rounded add per term, in the order of p, as gonum's SGEMV) or,
// for Bᵀ, one dot product per element.
func gemmSmall(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, bias []float32, act Act) {
	buf := pool.Get().(*buffers)
	buf.a = growBuf(buf.a, k)
	ar := buf.a
	for i := 0; i < m; i++ {
		for p := range ar {
			if transA {
				ar[p] = alpha * a[p*lda+i]
			} else {
				ar[p] = alpha * a[i*lda+p]
			}
		}
		row := c[i*ldc : i*ldc+n]
		if transB {
			for j := range row {
				row[j] += dot(ar, b[j*ldb:j*ldb+k])
			}
		} else {
			for p, v := range ar {
				axpy(v, b[p*ldb:p*ldb+n], row)
			}
		}
		epilogue(row, bias, act)
	}
	pool.Put(buf)
}
