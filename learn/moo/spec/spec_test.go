package spec

import (
	"math"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/moo"
)

func TestParseParam(t *testing.T) {
	tests := []struct {
		in   string
		want moo.Variable
	}{
		{"vegas.alpha=1:20:int", moo.Variable{Name: "vegas.alpha", Lower: 1, Upper: 20, Kind: moo.Integer}},
		{"vegas.beta=1:30:real", moo.Variable{Name: "vegas.beta", Lower: 1, Upper: 30}},
		{"bbr.gain=1.5:3", moo.Variable{Name: "bbr.gain", Lower: 1.5, Upper: 3}},
		{" x = -1e-3 : 2.5e2 ", moo.Variable{Name: "x", Lower: -0.001, Upper: 250}},
		{"n=-5:5:int", moo.Variable{Name: "n", Lower: -5, Upper: 5, Kind: moo.Integer}},
		{"n=1.0:2e1:int", moo.Variable{Name: "n", Lower: 1, Upper: 20, Kind: moo.Integer}},
	}
	for _, tc := range tests {
		got, err := ParseParam(tc.in)
		if err != nil {
			t.Errorf("ParseParam(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseParam(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseParamErrors(t *testing.T) {
	tests := []struct{ in, contain string }{
		{"vegas.alpha", "missing '='"},
		{"=1:2", "missing parameter name"},
		{"2x=1:2", "malformed name \"2x\""},
		{"a.=1:2", "malformed name"},
		{"a=1", "has 1 fields"},
		{"a=1:2:int:x", "has 4 fields"},
		{"a=1:2:float", "unknown kind \"float\"; accepted: int, real"},
		{"a=x:2", "lower bound \"x\" is not a finite number"},
		{"a=1:inf", "upper bound \"inf\" is not a finite number"},
		{"a=NaN:1", "not a finite number"},
		{"a=20:1", "lower bound 20 must be less than upper bound 1"},
		{"a=1:1", "must be less than"},
		{"a=1.5:3:int", "lower bound 1.5 of an int parameter is not a whole number"},
		{"a=1:1e300:int", "±2^53"},
	}
	for _, tc := range tests {
		_, err := ParseParam(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.contain) || !strings.Contains(err.Error(), "want NAME=LO:HI[:int|:real]") {
			t.Errorf("ParseParam(%q): got error %v, want one containing %q and the accepted syntax", tc.in, err, tc.contain)
		}
	}
}

func TestParseObjective(t *testing.T) {
	tests := []struct {
		in   string
		want moo.Objective
	}{
		{"max:goodput_mbps", moo.Objective{Name: "goodput_mbps", Sense: moo.Maximize}},
		{"min:qdelay_mean_ms", moo.Objective{Name: "qdelay_mean_ms", Sense: moo.Minimize}},
		{" min : flow.rtt_p95 ", moo.Objective{Name: "flow.rtt_p95", Sense: moo.Minimize}},
	}
	for _, tc := range tests {
		got, err := ParseObjective(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseObjective(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, contain string }{
		{"goodput", "missing ':'; want max:NAME or min:NAME"},
		{"maximize:goodput", "unknown sense \"maximize\"; accepted: max, min"},
		{"max:", "malformed metric name \"\""},
		{"max:good put", "malformed metric name"},
	}
	for _, tc := range bad {
		_, err := ParseObjective(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.contain) {
			t.Errorf("ParseObjective(%q): got error %v, want one containing %q", tc.in, err, tc.contain)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	vars := []moo.Variable{
		{Name: "vegas.alpha", Lower: 1, Upper: 20, Kind: moo.Integer},
		{Name: "x", Lower: -0.1, Upper: 1e-7},
		{Name: "y", Lower: math.Nextafter(1, 0), Upper: 1},
	}
	for _, v := range vars {
		got, err := ParseParam(FormatParam(v))
		if err != nil || got != v {
			t.Errorf("round trip of %+v via %q: got %+v, %v", v, FormatParam(v), got, err)
		}
	}
	for _, o := range []moo.Objective{{Name: "a", Sense: moo.Maximize}, {Name: "b.c"}} {
		got, err := ParseObjective(FormatObjective(o))
		if err != nil || got != o {
			t.Errorf("round trip of %+v: got %+v, %v", o, got, err)
		}
	}
}

// FuzzParseParam checks ParseParam never panics, accepts only valid
// variables, and that accepted ones survive a format/parse round trip.
func FuzzParseParam(f *testing.F) {
	for _, s := range []string{"vegas.alpha=1:20:int", "a=1.5:3", "a=20:1", "=:", "a=1:2:int:", "x=-0:0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseParam(s)
		if err != nil {
			return
		}
		if err := v.Validate(); err != nil {
			t.Fatalf("ParseParam(%q) accepted an invalid variable %+v: %v", s, v, err)
		}
		back, err := ParseParam(FormatParam(v))
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, v, FormatParam(v), back, err)
		}
	})
}

// FuzzParseObjective checks ParseObjective never panics and round-trips.
func FuzzParseObjective(f *testing.F) {
	for _, s := range []string{"max:goodput_mbps", "min:a.b", "max", ":", "min: x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjective(s)
		if err != nil {
			return
		}
		back, err := ParseObjective(FormatObjective(o))
		if err != nil || back != o {
			t.Fatalf("round trip of %q: %+v -> %+v, %v", s, o, back, err)
		}
	})
}
