package nc

// Dense rows indexed by packet index modulo a power-of-two ring size. A
// window of consecutive packet indices [from, to) with to-from <= size maps
// to at most two contiguous segments of a row, so row operations over a
// window are two MulAddRow calls whatever the wrap-around.

// segments returns the ring positions of [from, to): [a, a+n) and [0, m).
func segments(from, to, mask uint64) (a, n, m int) {
	if to <= from {
		return 0, 0, 0
	}
	size := int(mask) + 1
	a = int(from & mask)
	n = int(to - from)
	if a+n <= size {
		return a, n, 0
	}
	return a, size - a, a + n - size
}

// mulAddRange sets dst += c*src over the positions of [from, to).
func mulAddRange(dst, src []byte, c byte, from, to, mask uint64) {
	a, n, m := segments(from, to, mask)
	MulAddRow(dst[a:a+n], src[a:a+n], c)
	if m > 0 {
		MulAddRow(dst[:m], src[:m], c)
	}
}

// scaleRange sets row *= c over the positions of [from, to).
func scaleRange(row []byte, c byte, from, to, mask uint64) {
	a, n, m := segments(from, to, mask)
	ScaleRow(row[a:a+n], c)
	if m > 0 {
		ScaleRow(row[:m], c)
	}
}

// copyRange copies src into dst over the positions of [from, to).
func copyRange(dst, src []byte, from, to, mask uint64) {
	a, n, m := segments(from, to, mask)
	copy(dst[a:a+n], src[a:a+n])
	if m > 0 {
		copy(dst[:m], src[:m])
	}
}

// zeroRange clears row over the positions of [from, to).
func zeroRange(row []byte, from, to, mask uint64) {
	a, n, m := segments(from, to, mask)
	clear(row[a : a+n])
	if m > 0 {
		clear(row[:m])
	}
}

// isZeroRange reports whether row is zero over the positions of [from, to).
func isZeroRange(row []byte, from, to, mask uint64) bool {
	a, n, m := segments(from, to, mask)
	for _, v := range row[a : a+n] {
		if v != 0 {
			return false
		}
	}
	for _, v := range row[:m] {
		if v != 0 {
			return false
		}
	}
	return true
}
