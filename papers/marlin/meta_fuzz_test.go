package marlin

import (
	"maps"
	"testing"
	"time"
)

// FuzzPolicyMeta: whatever a policy file's options say (variant, action,
// frame skip, filter windows, BDP span, minimum-RTT feature, window cap),
// CheckPolicy either refuses them
// with an error or the policy can be evaluated: its evaluation
// environment builds, and the policy acts in it.
func FuzzPolicyMeta(f *testing.F) {
	f.Add("compact", "bdp", "", "", "", "", "", "")
	f.Add("compact", "bdp", "4", "1s", "1s", "4", "", "200KB")
	f.Add("compact", "log2", "3", "150ms", "20s", "3", "true", "")
	f.Add("paper", "linear", "", "2s", "", "", "", "150KB")
	f.Add("paper", "bdp", "2", "", "", "0.5", "true", "1MB")
	f.Add("compact", "", "x", "-1s", "1e9h", "NaN", "maybe", "-3KB")
	base := base(f)
	shipped, err := ShippedCompactPolicy()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, variant, action, skip, capWin, rttWin, span, rttFeature, windowCap string) {
		p := shipped.Clone()
		p.Meta.Extra = maps.Clone(shipped.Meta.Extra)
		for k, v := range map[string]string{"variant": variant, "action": action, "frame_skip": skip,
			"capacity_window": capWin, "min_rtt_window": rttWin, "bdp_span": span, "rtt_feature": rttFeature, "window_cap": windowCap} {
			if v == "" {
				delete(p.Meta.Extra, k)
			} else {
				p.Meta.Extra[k] = v
			}
		}
		if CheckPolicy(p) != nil {
			return
		}
		e, err := NewPolicyEvalEnv(base, 0.03, 20_000, 2*time.Second, p)
		if err != nil {
			t.Fatalf("CheckPolicy accepted %v, but its evaluation environment failed: %v", p.Meta.Extra, err)
		}
		obs, _ := e.Reset(1)
		e.Step(p.ActInto(obs))
	})
}

// FuzzParseWindowCap: --window-cap never panics and gives 0 (the paper's
// cap) or a cap in [MinWindowCap, MaxWindowCap].
func FuzzParseWindowCap(f *testing.F) {
	for _, s := range []string{"150KB", "200KB", "15KB", "10MB", "10.000001MB", "1e30B", "-1KB", "NaNKB", "200"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseWindowCap(s)
		if err == nil && b != 0 && !ValidWindowCap(b) {
			t.Fatalf("%q: cap %d", s, b)
		}
	})
}
