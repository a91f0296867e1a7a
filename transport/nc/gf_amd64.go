package nc

import "golang.org/x/sys/cpu"

// useAVX2 selects the vector row operation: a coded packet over a window
// of w segments costs w row operations on the payload, 1448 bytes each on
// real sockets, and the byte table does about a byte every two cycles
// (1.2 GB/s at 2 GHz; the vector steps 11.8).
var useAVX2 = cpu.X86.HasAVX2

// mulAddAVX2 sets dst[i] ^= c*src[i] for i < n, n a positive multiple of
// 32, where tbl holds c times each low nibble, then c times each high
// nibble (nibbleTable): c*x is tbl[x&15] ^ tbl[16+x>>4], 32 bytes per step
// with VPSHUFB.
//
//go:noescape
func mulAddAVX2(dst, src *byte, n int, tbl *[32]byte)

// mulAddVector does what it can of MulAddRow in vector steps and returns
// how many leading bytes it did.
func mulAddVector(dst, src []byte, c byte) int {
	n := len(src) &^ 31
	if !useAVX2 || n == 0 {
		return 0
	}
	mulAddAVX2(&dst[0], &src[0], n, &nibbleTable[c])
	return n
}
