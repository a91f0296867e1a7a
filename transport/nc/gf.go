package nc

// Arithmetic in GF(2^8), the field the coding layer draws its coefficients
// from. Sundararajan et al. choose coefficients uniformly from a finite
// field; a byte-sized field keeps coefficients one byte each and makes a
// combination non-innovative with probability about 1/256. Elements are
// bytes; addition is XOR.
//
// The field is built on the primitive polynomial
//
//	x^8 + x^4 + x^3 + x^2 + 1  (0x11d)
//
// with generator 2, the same representation as Reed-Solomon codes in RAID-6
// and most RLNC libraries, so vectors can be cross-checked against them.
// Multiplication uses log/exp tables; row operations use a precomputed
// 256x256 product table (64 KiB) so that the inner loop is one load and one
// XOR per byte and never allocates, and on amd64 with AVX2 two 16-entry
// nibble tables per coefficient looked up 32 bytes at a time (gf_amd64.s).

// Poly is the field's reduction polynomial x^8+x^4+x^3+x^2+1, including
// the x^8 term.
const Poly = 0x11d

var (
	// expTable[i] = 2^i for i in [0, 510); doubled so that
	// expTable[log a + log b] needs no reduction mod 255.
	expTable [510]byte
	// logTable[a] = log_2 a for a != 0; logTable[0] is unused.
	logTable [256]int
	// mulTable[c][x] = c*x.
	mulTable [256][256]byte
	// nibbleTable[c] is c times each low nibble (0-15), then c times each
	// high nibble (0x00, 0x10, ... 0xf0): c*x = lo[x&15] ^ hi[x>>4], as
	// multiplication distributes over the XOR of x's two nibbles. The
	// vector row operation looks both halves up 32 bytes at a time.
	nibbleTable [256][32]byte
)

func init() {
	x := 1
	for i := range 255 {
		expTable[i] = byte(x)
		logTable[x] = i
		x <<= 1
		if x&0x100 != 0 {
			x ^= Poly
		}
	}
	for i := 255; i < len(expTable); i++ {
		expTable[i] = expTable[i-255]
	}
	for c := 1; c < 256; c++ {
		for v := 1; v < 256; v++ {
			mulTable[c][v] = expTable[logTable[c]+logTable[v]]
		}
		for i := range 16 {
			nibbleTable[c][i] = mulTable[c][i]
			nibbleTable[c][16+i] = mulTable[c][i<<4]
		}
	}
}

// Mul returns a*b in GF(2^8).
func Mul(a, b byte) byte { return mulTable[a][b] }

// Inv returns the multiplicative inverse of a. Zero has no inverse; Inv
// panics on it, since asking for it is a bug in the caller.
func Inv(a byte) byte {
	if a == 0 {
		panic("nc: inverse of zero in GF(2^8)")
	}
	// a^-1 = 2^(255 - log a).
	return expTable[255-logTable[a]]
}

// Div returns a/b. It panics if b is zero.
func Div(a, b byte) byte {
	if b == 0 {
		panic("nc: division by zero in GF(2^8)")
	}
	if a == 0 {
		return 0
	}
	return expTable[logTable[a]+255-logTable[b]]
}

// MulAddRow sets dst[i] ^= c*src[i] for i < len(src): dst += c*src, the row
// operation of Gaussian elimination (subtraction is addition in
// characteristic 2). dst must be at least as long as src. It does not
// allocate.
func MulAddRow(dst, src []byte, c byte) {
	if c == 0 {
		return
	}
	dst = dst[:len(src)] // one bounds check instead of one per byte
	k := mulAddVector(dst, src, c)
	dst, src = dst[k:], src[k:]
	t := &mulTable[c]
	for i, s := range src {
		dst[i] ^= t[s]
	}
}

// ScaleRow sets row[i] = c*row[i]. It does not allocate.
func ScaleRow(row []byte, c byte) {
	if c == 1 {
		return
	}
	t := &mulTable[c]
	for i, s := range row {
		row[i] = t[s]
	}
}
