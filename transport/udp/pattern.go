package udp

import "encoding/binary"

// The built-in application data is a pattern of the byte offset: each
// aligned 8-byte word holds a 64-bit mix of its index, so a byte delivered
// twice, out of order or at the wrong offset does not match what the
// receiver expects there. Senders need no buffer and receivers can check
// every byte.

// mix64 is SplitMix64's finaliser.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// FillPattern writes the pattern bytes for offsets [off, off+len(p)).
func FillPattern(off int64, p []byte) {
	for len(p) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mix64(uint64(off)/8))
		n := copy(p, w[off%8:])
		p = p[n:]
		off += int64(n)
	}
}

// CheckPattern returns the number of bytes of p that differ from the
// pattern at offsets [off, off+len(p)).
func CheckPattern(off int64, p []byte) int64 {
	var bad int64
	for len(p) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mix64(uint64(off)/8))
		want := w[off%8:]
		n := min(len(want), len(p))
		for i := range n {
			if p[i] != want[i] {
				bad++
			}
		}
		p = p[n:]
		off += int64(n)
	}
	return bad
}
