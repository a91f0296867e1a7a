package agentutil

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/space"
)

func TestWindowKeepsLastN(t *testing.T) {
	w := NewWindow(3)
	if !math.IsNaN(w.MeanReturn()) {
		t.Errorf("empty window mean %g, want NaN", w.MeanReturn())
	}
	for i := 1; i <= 5; i++ {
		w.Add(float64(i), float64(10*i))
	}
	if got := w.MeanReturn(); got != 4 { // episodes 3, 4, 5
		t.Errorf("mean return %g, want 4", got)
	}
	if got := w.MeanLength(); got != 40 {
		t.Errorf("mean length %g, want 40", got)
	}
	path := filepath.Join(t.TempDir(), "w")
	if err := checkpoint.Save(path, "w", func(e *checkpoint.Encoder) error { w.Save(e); return nil }); err != nil {
		t.Fatal(err)
	}
	r := NewWindow(3)
	if err := checkpoint.Load(path, "w", func(d *checkpoint.Decoder) error { r.Load(d); return d.Err() }); err != nil {
		t.Fatal(err)
	}
	w.Add(6, 60)
	r.Add(6, 60)
	if r.MeanReturn() != w.MeanReturn() || r.Total != w.Total {
		t.Errorf("restored window mean %g total %d, want %g %d", r.MeanReturn(), r.Total, w.MeanReturn(), w.Total)
	}
}

func TestScaleUnscaleInverse(t *testing.T) {
	s := space.NewBox([]float32{-2, 0}, []float32{2, 10})
	a := []float32{-1, 1, 0, -0.5}
	x := make([]float32, 4)
	Unscale(s, a, x)
	if want := []float32{-2, 10, 0, 2.5}; x[0] != want[0] || x[1] != want[1] || x[2] != want[2] || x[3] != want[3] {
		t.Errorf("Unscale = %v, want %v", x, want)
	}
	back := make([]float32, 4)
	Scale(s, x, back)
	for i := range a {
		if math.Abs(float64(back[i]-a[i])) > 1e-6 {
			t.Errorf("Scale(Unscale(a))[%d] = %g, want %g", i, back[i], a[i])
		}
	}
}

func TestConcat(t *testing.T) {
	dst := make([]float32, 6)
	Concat(dst, []float32{1, 2, 3, 4}, 2, []float32{9, 8}, 1)
	if want := []float32{1, 2, 9, 3, 4, 8}; !equal(dst, want) {
		t.Errorf("Concat = %v, want %v", dst, want)
	}
}

func equal(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
