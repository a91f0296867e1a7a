package nc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestMulAddVectorMatchesTable: the AVX2 row operation gives the byte
// table's result for every coefficient, for lengths around its 32-byte
// steps and for slices that start anywhere in a cache line, and touches no
// byte past len(src).
func TestMulAddVectorMatchesTable(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this processor: MulAddRow uses the table alone")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	buf := make([]byte, 2*1600)
	for c := range 256 {
		for _, n := range []int{31, 32, 33, 63, 64, 95, 100, 1448, 1449} {
			off := rng.IntN(64)
			for i := range buf {
				buf[i] = byte(rng.Uint32())
			}
			src := buf[off : off+n]
			dst := append([]byte(nil), buf[1600+off:1600+off+n+8]...)
			want := append([]byte(nil), dst...)
			useAVX2 = false
			MulAddRow(want, src, byte(c))
			useAVX2 = true
			MulAddRow(dst, src, byte(c))
			if !bytes.Equal(dst, want) {
				t.Fatalf("c=%#x n=%d offset %d: the vector row operation differs from the table's", c, n, off)
			}
		}
	}
}

// FuzzMulAddRow: any coefficient, source and destination, the vector path
// and the table agree byte for byte.
func FuzzMulAddRow(f *testing.F) {
	f.Add(byte(0x53), []byte("a coded packet's payload, longer than one vector step"), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, c byte, src, seed []byte) {
		dst := make([]byte, len(src)+1)
		for i := range dst {
			if len(seed) > 0 {
				dst[i] = seed[i%len(seed)] + byte(i)
			}
		}
		want := append([]byte(nil), dst...)
		for i, s := range src {
			want[i] ^= slowMul(c, s)
		}
		MulAddRow(dst, src, c)
		if !bytes.Equal(dst, want) {
			t.Fatalf("c=%#x, %d bytes: MulAddRow differs from shift-and-add multiplication", c, len(src))
		}
	})
}
