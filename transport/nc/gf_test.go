package nc

import (
	"math/rand/v2"
	"testing"
)

// slowMul multiplies in GF(2^8) by shift-and-add with reduction by Poly: an
// implementation independent of the tables.
func slowMul(a, b byte) byte {
	var p uint16
	x, y := uint16(a), uint16(b)
	for y != 0 {
		if y&1 != 0 {
			p ^= x
		}
		y >>= 1
		x <<= 1
		if x&0x100 != 0 {
			x ^= Poly
		}
	}
	return byte(p)
}

func TestMulMatchesShiftAndAdd(t *testing.T) {
	for a := range 256 {
		for b := range 256 {
			if got, want := Mul(byte(a), byte(b)), slowMul(byte(a), byte(b)); got != want {
				t.Fatalf("Mul(%#x, %#x) = %#x, want %#x", a, b, got, want)
			}
		}
	}
}

func TestGeneratorIsPrimitive(t *testing.T) {
	// 2 generates the multiplicative group of order 255 iff its powers
	// 2^0..2^254 are the 255 distinct non-zero elements.
	var hit [256]bool
	for i := range 255 {
		v := expTable[i]
		if v == 0 || hit[v] {
			t.Fatalf("2^%d = %#x repeats or is zero: 0x11d is not primitive with generator 2", i, v)
		}
		hit[v] = true
	}
	if expTable[255] != 1 {
		t.Fatalf("2^255 = %#x, want 1", expTable[255])
	}
}

func TestInverseAndDivision(t *testing.T) {
	for a := 1; a < 256; a++ {
		if got := Mul(byte(a), Inv(byte(a))); got != 1 {
			t.Fatalf("%#x * Inv(%#x) = %#x, want 1", a, a, got)
		}
		for b := 1; b < 256; b++ {
			if got := Div(Mul(byte(a), byte(b)), byte(b)); got != byte(a) {
				t.Fatalf("(%#x*%#x)/%#x = %#x, want %#x", a, b, b, got, a)
			}
		}
	}
	if got := Div(0, 7); got != 0 {
		t.Errorf("Div(0, 7) = %#x, want 0", got)
	}
}

func TestInverseOfZeroPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Inv(0)":   func() { Inv(0) },
		"Div(1,0)": func() { Div(1, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestFieldAxioms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200000 {
		a, b, c := byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())
		if Mul(a, b) != Mul(b, a) {
			t.Fatalf("Mul not commutative at %#x, %#x", a, b)
		}
		if Mul(Mul(a, b), c) != Mul(a, Mul(b, c)) {
			t.Fatalf("Mul not associative at %#x, %#x, %#x", a, b, c)
		}
		if Mul(a, b^c) != Mul(a, b)^Mul(a, c) {
			t.Fatalf("Mul not distributive at %#x, %#x, %#x", a, b, c)
		}
	}
}

func TestRowOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, c := range []byte{0, 1, 2, 0x53, 0xff} {
		for _, n := range []int{0, 1, 7, 64, 1449} {
			src, dst := make([]byte, n), make([]byte, n+3)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			for i := range dst {
				dst[i] = byte(rng.Uint32())
			}
			want := append([]byte(nil), dst...)
			for i := range src {
				want[i] ^= slowMul(c, src[i])
			}
			MulAddRow(dst, src, c)
			for i := range dst {
				if dst[i] != want[i] {
					t.Fatalf("MulAddRow c=%#x n=%d: byte %d = %#x, want %#x", c, n, i, dst[i], want[i])
				}
			}
			row := append([]byte(nil), src...)
			ScaleRow(row, c)
			for i := range row {
				if w := slowMul(c, src[i]); row[i] != w {
					t.Fatalf("ScaleRow c=%#x n=%d: byte %d = %#x, want %#x", c, n, i, row[i], w)
				}
			}
		}
	}
}

func TestRingSegmentsCoverRange(t *testing.T) {
	const mask = 15
	for from := uint64(0); from < 40; from++ {
		for to := from; to <= from+16; to++ {
			a, n, m := segments(from, to, mask)
			var got []uint64
			for p := a; p < a+n; p++ {
				got = append(got, uint64(p))
			}
			for p := 0; p < m; p++ {
				got = append(got, uint64(p))
			}
			if uint64(len(got)) != to-from {
				t.Fatalf("segments(%d, %d) cover %d positions, want %d", from, to, len(got), to-from)
			}
			for i, p := range got {
				if want := (from + uint64(i)) & mask; p != want {
					t.Fatalf("segments(%d, %d): position %d = %d, want %d", from, to, i, p, want)
				}
			}
		}
	}
}

func BenchmarkMulAddRow1448(b *testing.B) {
	src, dst := make([]byte, 1448), make([]byte, 1448)
	for i := range src {
		src[i] = byte(i)
	}
	b.SetBytes(1448)
	b.ReportAllocs()
	for b.Loop() {
		MulAddRow(dst, src, 0x8e)
	}
}
