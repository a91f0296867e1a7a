package model

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseValues: --loss and --R never panic, and what they accept is
// finite; a sweep starts and ends where it was asked, stays between its
// ends and has the number of points asked for. (A sweep from -1e308 to
// 1e308 once gave NaN and infinite points.)
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{"0.01", "0.01,0.02, 0.05", "0.001:0.3:50", "1e-9:0.5:3", "-1e308:1e308:3", "1e-308:1e308:3", "1:2:100001", "opt,1.5", "1:1:2", ""} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, spec string, logSweep bool) {
		vs, err := ParseValues(spec, logSweep)
		if err == nil {
			if len(vs) == 0 {
				t.Fatalf("%q: no values and no error", spec)
			}
			for _, v := range vs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%q: value %v", spec, v)
				}
			}
			if parts := strings.Split(spec, ":"); len(parts) == 3 {
				from, _ := parseFloat(parts[0])
				to, _ := parseFloat(parts[1])
				if vs[0] != from || vs[len(vs)-1] != to {
					t.Fatalf("%q: sweep from %v to %v", spec, vs[0], vs[len(vs)-1])
				}
				for _, v := range vs {
					if v < from || v > to {
						t.Fatalf("%q: point %v outside [%v, %v]", spec, v, from, to)
					}
				}
			}
		}
		rs, err := ParseRedundancies(spec, logSweep)
		if err != nil {
			return
		}
		for _, r := range rs {
			if !r.Opt && !(r.Value >= 1 && r.Value <= 100) {
				t.Fatalf("%q: redundancy %v", spec, r.Value)
			}
		}
	})
}
