// Package space describes observation and action spaces with Gymnasium's
// semantics (gymnasium.spaces.Box and gymnasium.spaces.Discrete), flattened to
// float32 vectors so that networks, buffers and policy files can check shapes
// without reflection.
//
// A Box is a product of closed intervals [Low[i], High[i]] with a row-major
// Shape; bounds may be infinite. A Discrete space of size N holds the integers
// 0..N-1 and is carried in a one-element float32 vector (the action index).
package space

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Kind says which family a Space belongs to.
type Kind uint8

// Space kinds. The numeric values are part of the policy-file format.
const (
	KindBox      Kind = 1
	KindDiscrete Kind = 2
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindBox:
		return "Box"
	case KindDiscrete:
		return "Discrete"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Space is a Box or a Discrete space. Use NewBox, Uniform or NewDiscrete to
// build one; the zero Space is invalid.
type Space struct {
	// Kind is KindBox or KindDiscrete.
	Kind Kind
	// Shape is the Box's shape (product = Dim()); nil for Discrete.
	Shape []int
	// Low and High are the per-element bounds of a Box, flattened row-major;
	// nil for Discrete. Infinite bounds are allowed.
	Low, High []float32
	// N is the number of actions of a Discrete space; 0 for a Box.
	N int
}

// NewBox returns a Box with the given flattened bounds and shape. Without a
// shape the Box is one-dimensional. It panics if the lengths disagree or a
// lower bound exceeds its upper bound (programmer error).
func NewBox(low, high []float32, shape ...int) Space {
	if len(shape) == 0 {
		shape = []int{len(low)}
	}
	s := Space{Kind: KindBox, Shape: slices.Clone(shape), Low: slices.Clone(low), High: slices.Clone(high)}
	if err := s.Validate(); err != nil {
		panic("space: " + err.Error())
	}
	return s
}

// Uniform returns a Box whose elements all lie in [low, high].
func Uniform(low, high float32, shape ...int) Space {
	n := 1
	for _, d := range shape {
		n *= d
	}
	lo := make([]float32, n)
	hi := make([]float32, n)
	for i := range lo {
		lo[i], hi[i] = low, high
	}
	return NewBox(lo, hi, shape...)
}

// NewDiscrete returns the space {0, 1, ..., n-1}. It panics if n < 1.
func NewDiscrete(n int) Space {
	s := Space{Kind: KindDiscrete, N: n}
	if err := s.Validate(); err != nil {
		panic("space: " + err.Error())
	}
	return s
}

// Validate reports whether s is well formed.
func (s Space) Validate() error {
	switch s.Kind {
	case KindBox:
		n := 1
		for i, d := range s.Shape {
			if d < 1 {
				return fmt.Errorf("box shape[%d] = %d, want >= 1", i, d)
			}
			n *= d
		}
		if len(s.Shape) == 0 {
			return errors.New("box has no shape")
		}
		if len(s.Low) != n || len(s.High) != n {
			return fmt.Errorf("box shape %v has %d elements but %d low and %d high bounds", s.Shape, n, len(s.Low), len(s.High))
		}
		for i := range s.Low {
			lo, hi := s.Low[i], s.High[i]
			if lo != lo || hi != hi {
				return fmt.Errorf("box bound %d is NaN", i)
			}
			if lo > hi {
				return fmt.Errorf("box bound %d: low %g > high %g", i, lo, hi)
			}
		}
		if s.N != 0 {
			return fmt.Errorf("box has N = %d, want 0", s.N)
		}
		return nil
	case KindDiscrete:
		if s.N < 1 {
			return fmt.Errorf("discrete space has n = %d, want >= 1", s.N)
		}
		if len(s.Shape) != 0 || len(s.Low) != 0 || len(s.High) != 0 {
			return errors.New("discrete space has box bounds")
		}
		return nil
	}
	return fmt.Errorf("unknown space kind %d", s.Kind)
}

// Dim is the length of the flat float32 vector carrying one element of s:
// the product of a Box's shape, or 1 for a Discrete space.
func (s Space) Dim() int {
	if s.Kind == KindDiscrete {
		return 1
	}
	return len(s.Low)
}

// Bounded reports whether every bound of a Box is finite. Discrete spaces
// are bounded.
func (s Space) Bounded() bool {
	for i := range s.Low {
		if math.IsInf(float64(s.Low[i]), 0) || math.IsInf(float64(s.High[i]), 0) {
			return false
		}
	}
	return true
}

// Contains reports whether x is an element of s.
func (s Space) Contains(x []float32) bool {
	if len(x) != s.Dim() {
		return false
	}
	if s.Kind == KindDiscrete {
		v := x[0]
		return v >= 0 && v < float32(s.N) && v == float32(math.Trunc(float64(v)))
	}
	for i, v := range x {
		if !(v >= s.Low[i] && v <= s.High[i]) {
			return false
		}
	}
	return true
}

// Sample writes a uniformly random element of s into dst (len Dim()), as
// gymnasium's Box.sample does for bounded boxes. Unbounded dimensions are
// drawn from a standard normal, shifted by the finite bound when one side is
// bounded (exponential), following gymnasium.spaces.Box.sample.
func (s Space) Sample(r *rand.Rand, dst []float32) {
	if len(dst) != s.Dim() {
		panic(fmt.Sprintf("space: Sample dst has length %d, want %d", len(dst), s.Dim()))
	}
	if s.Kind == KindDiscrete {
		dst[0] = float32(r.IntN(s.N))
		return
	}
	for i := range dst {
		lo, hi := float64(s.Low[i]), float64(s.High[i])
		loInf, hiInf := math.IsInf(lo, -1), math.IsInf(hi, 1)
		var v float64
		switch {
		case !loInf && !hiInf:
			v = lo + r.Float64()*(hi-lo)
		case loInf && hiInf:
			v = r.NormFloat64()
		case loInf:
			v = hi - r.ExpFloat64()
		default:
			v = lo + r.ExpFloat64()
		}
		dst[i] = float32(v)
	}
}

// Equal reports whether s and o describe the same space exactly.
func (s Space) Equal(o Space) bool {
	return s.Kind == o.Kind && s.N == o.N && slices.Equal(s.Shape, o.Shape) &&
		slices.Equal(s.Low, o.Low) && slices.Equal(s.High, o.High)
}

// String formats s like gymnasium's repr: Box(-2.0, 2.0, (1,)) or
// Discrete(3). Bounds that differ between elements are elided.
func (s Space) String() string {
	if s.Kind == KindDiscrete {
		return fmt.Sprintf("Discrete(%d)", s.N)
	}
	if s.Kind != KindBox {
		return fmt.Sprintf("Space(kind=%d)", s.Kind)
	}
	dims := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		dims[i] = fmt.Sprint(d)
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	shape += ")"
	lo, hi := "[...]", "[...]"
	if len(s.Low) > 0 && allEqual(s.Low) {
		lo = fmt.Sprint(s.Low[0])
	}
	if len(s.High) > 0 && allEqual(s.High) {
		hi = fmt.Sprint(s.High[0])
	}
	return fmt.Sprintf("Box(%s, %s, %s)", lo, hi, shape)
}

func allEqual(x []float32) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

// maxElems bounds the size of a decoded space so that a corrupt file cannot
// make UnmarshalBinary allocate without limit: 2^26 elements (256 MiB of
// bounds), far above any observation cclab uses (MARLIN's is 980).
const maxElems = 1 << 26

// AppendBinary appends the little-endian encoding of s to b: kind (1 byte),
// then for Discrete n (uint32), for Box rank (uint32), each dimension
// (uint32), then Dim() low bounds and Dim() high bounds (float32 bits).
func (s Space) AppendBinary(b []byte) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return b, err
	}
	b = append(b, byte(s.Kind))
	if s.Kind == KindDiscrete {
		return binary.LittleEndian.AppendUint32(b, uint32(s.N)), nil
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Shape)))
	for _, d := range s.Shape {
		b = binary.LittleEndian.AppendUint32(b, uint32(d))
	}
	for _, v := range s.Low {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	for _, v := range s.High {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b, nil
}

// MarshalBinary encodes s as described at AppendBinary.
func (s Space) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// Decode reads one space encoded by AppendBinary from the front of b and
// returns it with the number of bytes consumed.
func Decode(b []byte) (Space, int, error) {
	if len(b) < 5 {
		return Space{}, 0, fmt.Errorf("space: truncated encoding (%d bytes)", len(b))
	}
	kind := Kind(b[0])
	u := binary.LittleEndian.Uint32(b[1:5])
	off := 5
	switch kind {
	case KindDiscrete:
		if u < 1 || u > maxElems {
			return Space{}, 0, fmt.Errorf("space: discrete n = %d, want 1..%d", u, maxElems)
		}
		return Space{Kind: KindDiscrete, N: int(u)}, off, nil
	case KindBox:
		rank := int(u)
		if rank < 1 || rank > 8 {
			return Space{}, 0, fmt.Errorf("space: box rank %d, want 1..8", rank)
		}
		if len(b) < off+4*rank {
			return Space{}, 0, errors.New("space: truncated box shape")
		}
		shape := make([]int, rank)
		n := 1
		for i := range shape {
			d := binary.LittleEndian.Uint32(b[off:])
			off += 4
			if d < 1 || d > maxElems {
				return Space{}, 0, fmt.Errorf("space: box dimension %d is %d, want 1..%d", i, d, maxElems)
			}
			shape[i] = int(d)
			n *= int(d)
			if n > maxElems {
				return Space{}, 0, fmt.Errorf("space: box has more than %d elements", maxElems)
			}
		}
		if len(b) < off+8*n {
			return Space{}, 0, errors.New("space: truncated box bounds")
		}
		s := Space{Kind: KindBox, Shape: shape, Low: make([]float32, n), High: make([]float32, n)}
		for i := range s.Low {
			s.Low[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
			off += 4
		}
		for i := range s.High {
			s.High[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
			off += 4
		}
		if err := s.Validate(); err != nil {
			return Space{}, 0, fmt.Errorf("space: %w", err)
		}
		return s, off, nil
	}
	return Space{}, 0, fmt.Errorf("space: unknown kind %d, want %d (Box) or %d (Discrete)", kind, KindBox, KindDiscrete)
}

// UnmarshalBinary decodes exactly one space from b.
func (s *Space) UnmarshalBinary(b []byte) error {
	v, n, err := Decode(b)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("space: %d trailing bytes", len(b)-n)
	}
	*s = v
	return nil
}
