package deepcc

import "testing"

// FuzzParseTuning: --target and --mode (and a scenario flow's keys)
// never panic; what they accept is a valid target or a known mode, never
// both, and nothing when neither is given.
func FuzzParseTuning(f *testing.F) {
	for _, c := range [][2]string{{"5,100,0.01", ""}, {"", "low-delay"}, {"", "high-throughput"}, {"5,100,0.01", "low-delay"},
		{"NaN,1,0", ""}, {"0,0,0", ""}, {"1,2", ""}, {"1e400,1,0", ""}, {"", "fast"}, {"", ""}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, target, mode string) {
		lt, err := ParseTuning(target, mode)
		if err != nil {
			return
		}
		switch {
		case target == "" && mode == "":
			if lt != nil {
				t.Fatalf("nothing given, got %+v", lt)
			}
		case lt == nil || (lt.Target == nil) == (mode == ""):
			t.Fatalf("target %q mode %q: got %+v", target, mode, lt)
		case lt.Target != nil:
			if err := lt.Target.Validate(); err != nil {
				t.Fatalf("target %q accepted: %v", target, err)
			}
		default:
			if _, err := ParseMode(mode); err != nil {
				t.Fatalf("mode %q accepted: %v", mode, err)
			}
		}
	})
}
