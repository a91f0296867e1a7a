package tune

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseDefaults: --default never panics, and what it accepts is a
// named, finite baseline (NaN would read as "baseline unknown").
func FuzzParseDefaults(f *testing.F) {
	for _, s := range []string{"vegas.alpha=2", "vegas.alpha=2\nvegas.beta=4", "a=NaN", "a=Inf", "=3", "a", " a = 1e308 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseDefaults(strings.Split(s, "\n"))
		if err != nil {
			return
		}
		for k, v := range m {
			if k == "" || k != strings.TrimSpace(k) || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q: default %q = %v", s, k, v)
			}
		}
	})
}
