package norm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRunningMeanStdMatchesBatch feeds data in uneven chunks and compares
// with the two-pass mean and population variance of all of it. The 1e-4
// pseudo-count biases the result by ≈ 1e-4/N relative.
func TestRunningMeanStdMatchesBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d, n = 3, 1000
	data := make([]float32, n*d)
	for i := range data {
		data[i] = float32(rng.NormFloat64()*float64(i%d+1) + float64(i%d))
	}
	r := NewRunningMeanStd(d)
	for off, chunk := 0, 1; off < n; chunk = chunk*2 + 1 {
		end := min(off+chunk, n)
		r.Update(data[off*d : end*d])
		off = end
	}
	for i := 0; i < d; i++ {
		var s, ss float64
		for k := 0; k < n; k++ {
			s += float64(data[k*d+i])
		}
		m := s / n
		for k := 0; k < n; k++ {
			e := float64(data[k*d+i]) - m
			ss += e * e
		}
		v := ss / n
		if math.Abs(r.Mean[i]-m) > 1e-6*(1+math.Abs(m)) || math.Abs(r.Var[i]-v) > 1e-6*v {
			t.Errorf("dim %d: mean %g var %g, want %g %g", i, r.Mean[i], r.Var[i], m, v)
		}
	}
	if math.Abs(r.Count-(n+InitialCount)) > 1e-9 {
		t.Errorf("count %g, want %g", r.Count, n+InitialCount)
	}
}

func TestObsNormalizeAndClip(t *testing.T) {
	o := NewObs(2)
	o.RMS.Mean = []float64{1, -2}
	o.RMS.Var = []float64{4, 0.25}
	x := []float32{3, -2, 1, 100}
	o.Normalize(x, x)
	want := []float32{1, 0, 0, 10}
	for i := range x {
		if math.Abs(float64(x[i]-want[i])) > 1e-6 {
			t.Errorf("normalised[%d] = %g, want %g", i, x[i], want[i])
		}
	}
}

func TestObsRoundTrip(t *testing.T) {
	o := NewObs(3)
	o.RMS.Update([]float32{1, 2, 3, 4, 5, 6})
	b, _ := o.AppendBinary([]byte{0xAA})
	got, n, err := DecodeObs(b[1:])
	if err != nil || n != len(b)-1 {
		t.Fatalf("DecodeObs: n=%d err=%v, want n=%d", n, err, len(b)-1)
	}
	for i := range o.RMS.Mean {
		if got.RMS.Mean[i] != o.RMS.Mean[i] || got.RMS.Var[i] != o.RMS.Var[i] {
			t.Errorf("dim %d: got mean %g var %g, want %g %g", i, got.RMS.Mean[i], got.RMS.Var[i], o.RMS.Mean[i], o.RMS.Var[i])
		}
	}
	if _, _, err := DecodeObs(b[1 : len(b)-3]); err == nil {
		t.Errorf("truncated normaliser decoded without error")
	}
}

func FuzzDecodeObs(f *testing.F) {
	o := NewObs(2)
	b, _ := o.AppendBinary(nil)
	f.Add(b)
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, n, err := DecodeObs(data)
		if err != nil {
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		x := make([]float32, got.Dim())
		got.Normalize(x, x) // must not panic
	})
}
