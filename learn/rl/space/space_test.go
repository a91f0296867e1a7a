package space

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBoxBasics(t *testing.T) {
	b := NewBox([]float32{-1, 0, -2}, []float32{1, 5, 2})
	if b.Dim() != 3 || b.String() != "Box([...], [...], (3,))" {
		t.Errorf("Dim %d String %q", b.Dim(), b.String())
	}
	u := Uniform(-2, 2, 1)
	if u.String() != "Box(-2, 2, (1,))" {
		t.Errorf("String = %q, want Box(-2, 2, (1,))", u.String())
	}
	for _, tc := range []struct {
		x    []float32
		want bool
	}{{[]float32{0, 0, 0}, true}, {[]float32{1, 5, 2}, true}, {[]float32{1.01, 0, 0}, false}, {[]float32{0, 0}, false}, {[]float32{float32(math.NaN()), 0, 0}, false}} {
		if got := b.Contains(tc.x); got != tc.want {
			t.Errorf("Contains(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	grid := Uniform(0, 1, 10, 98)
	if grid.Dim() != 980 || len(grid.Shape) != 2 {
		t.Errorf("10×98 box: Dim %d shape %v", grid.Dim(), grid.Shape)
	}
}

func TestSampleInsideAndUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	b := NewBox([]float32{-1, 10}, []float32{1, 20})
	x := make([]float32, 2)
	var sum [2]float64
	const n = 20000
	for i := 0; i < n; i++ {
		b.Sample(r, x)
		if !b.Contains(x) {
			t.Fatalf("sample %v outside %v", x, b)
		}
		sum[0] += float64(x[0])
		sum[1] += float64(x[1])
	}
	// Means of U(-1,1) and U(10,20): sd of the mean is (range/sqrt 12)/sqrt n.
	if m := sum[0] / n; math.Abs(m) > 5*2/math.Sqrt(12*n) {
		t.Errorf("mean of dimension 0 = %g, want ≈ 0", m)
	}
	if m := sum[1] / n; math.Abs(m-15) > 5*10/math.Sqrt(12*n) {
		t.Errorf("mean of dimension 1 = %g, want ≈ 15", m)
	}
	d := NewDiscrete(3)
	counts := [3]int{}
	one := make([]float32, 1)
	for i := 0; i < 3000; i++ {
		d.Sample(r, one)
		counts[int(one[0])]++
	}
	for k, c := range counts {
		if c < 850 || c > 1150 {
			t.Errorf("Discrete(3) drew %d %d times of 3000, want ≈ 1000", k, c)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	for _, s := range []Space{
		{},
		{Kind: KindBox, Shape: []int{2}, Low: []float32{0}, High: []float32{1}},
		{Kind: KindBox, Shape: []int{1}, Low: []float32{2}, High: []float32{1}},
		{Kind: KindBox, Shape: []int{0}},
		{Kind: KindDiscrete, N: 0},
		{Kind: 9},
	} {
		if s.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", s)
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, s := range []Space{Uniform(-2, 2, 1), NewBox([]float32{-inf, 0}, []float32{inf, 1}), Uniform(0, 1, 10, 98), NewDiscrete(7)} {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got Space
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		if !got.Equal(s) {
			t.Errorf("round trip of %v gave %v", s, got)
		}
		if err := got.UnmarshalBinary(b[:len(b)-1]); err == nil {
			t.Errorf("%v: truncated encoding accepted", s)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []Space{Uniform(-2, 2, 3), NewDiscrete(4)} {
		b, _ := s.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, n, err := Decode(data)
		if err != nil {
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid space: %v", err)
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if s2, _, err := Decode(b); err != nil || !s2.Equal(s) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}
