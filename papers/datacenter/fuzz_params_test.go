package datacenter

import "testing"

// FuzzParseParams: --params never panics and accepts only windows BBR's
// tuner may set: an RTprop window in [0.1, 600] s and [1, 100] rounds.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"0.1,2", "600,100", "NaN,2", "0.1,1e3", "1,", ",", " 10 , 10 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseParams(s)
		if err != nil {
			return
		}
		if !(p.MinRTTWindow >= 0.1 && p.MinRTTWindow <= 600) || p.BwWindowRounds < 1 || p.BwWindowRounds > 100 {
			t.Fatalf("%q: %+v", s, p)
		}
	})
}
