package fmtnum

import (
	"math"
	"strconv"
	"testing"
)

func TestShort(t *testing.T) {
	for in, want := range map[float64]string{
		3.3138500000000004: "3.31385",
		0.1 + 0.2:          "0.3",
		42:                 "42",
		1e-7:               "1e-07",
		-2.5:               "-2.5",
		1.0 / 3:            "0.3333333333",
		123456789012345:    "123456789012345",
		1.5e300:            "1.5e+300",
		0:                  "0",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%v) = %q, want %q", in, got, want)
		}
	}
	if Short(math.NaN()) != "NaN" {
		t.Errorf("NaN")
	}
}

// FuzzShort: the text reads back within the stated precision.
func FuzzShort(f *testing.F) {
	f.Add(3.3138500000000004)
	f.Add(1e300)
	f.Add(-5e-324)
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		r, err := strconv.ParseFloat(Short(v), 64)
		if err != nil || math.Abs(r-v) > 1e-9*math.Abs(v) {
			t.Fatalf("Short(%v) = %q reads back as %v (%v)", v, Short(v), r, err)
		}
	})
}

// TestJSON: finite values come back as themselves, NaN and infinities as
// nil (null in JSON).
func TestJSON(t *testing.T) {
	for _, v := range []float64{0, -1.5, 1e300} {
		if p := JSON(v); p == nil || *p != v {
			t.Errorf("JSON(%g) = %v", v, p)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if p := JSON(v); p != nil {
			t.Errorf("JSON(%g) = %g, want nil", v, *p)
		}
	}
}
