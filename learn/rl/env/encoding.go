package env

import (
	"encoding/binary"
	"errors"
	"math"
)

// Small helpers for the state encodings of runners and wrappers.

func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func appendF64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}
func appendBytes(b, p []byte) []byte { return append(appendU64(b, uint64(len(p))), p...) }
func appendF32s(b []byte, s []float32) []byte {
	b = appendU64(b, uint64(len(s)))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}
func appendF64s(b []byte, s []float64) []byte {
	b = appendU64(b, uint64(len(s)))
	for _, v := range s {
		b = appendF64(b, v)
	}
	return b
}

var errShort = errors.New("env: saved state is truncated")

type reader struct {
	b   []byte
	err error
}

func (r *reader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) f64() float64 { return math.Float64frombits(r.u64()) }

func (r *reader) bytes() []byte {
	n := r.u64()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errShort
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) f32s(dst []float32) {
	if n := r.u64(); r.err != nil || n != uint64(len(dst)) || uint64(len(r.b)) < 4*n {
		if r.err == nil {
			r.err = errors.New("env: saved state has a vector of the wrong length")
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
	}
	r.b = r.b[4*len(dst):]
}

func (r *reader) f64s(dst []float64) {
	if n := r.u64(); r.err != nil || n != uint64(len(dst)) || uint64(len(r.b)) < 8*n {
		if r.err == nil {
			r.err = errors.New("env: saved state has a vector of the wrong length")
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*len(dst):]
}
