package scenario

import (
	"math"
	"strings"
	"testing"
)

const tunedFlow = `name: t
duration: 5s
bottleneck: {rate: 8Mbps, delay: 20ms}
flows:
  - name: d
    cc: newreno
    stack: cclab
    agent: deepcc:g2
`

// TestFlowTuningKeys: a DeepCC agent flow takes the tuner's target or
// mode (the names of cclab send's flags); misuse is refused at the line
// and field, naming what is accepted.
func TestFlowTuningKeys(t *testing.T) {
	for _, ok := range []string{"    target: 8,70,0.01\n", "    mode: low-delay\n", "    target: 0, 50, 0\n"} {
		s, err := Parse([]byte(tunedFlow+ok), "x.yaml")
		if err != nil {
			t.Fatalf("%q refused: %v", ok, err)
		}
		if f := s.Flows[0]; f.Target == "" && f.Mode == "" {
			t.Fatalf("%q: not read", ok)
		}
	}
	v, err := ParseTarget("8, 70,0.01")
	if err != nil || v != [3]float64{8, 70, 0.01} {
		t.Fatalf("ParseTarget = %v, %v", v, err)
	}
	for _, c := range []struct{ in, edit, want string }{
		{"    target: 8,70\n", "", `x.yaml:9:13: flows[0].target: target "8,70": want MBPS,DELAY_MS,LOSS`},
		{"    target: 8,x,0\n", "", `flows[0].target: target "8,x,0": "x" is not a finite non-negative number`},
		{"    target: 8,-1,0\n", "", `"-1" is not a finite non-negative number`},
		{"    target: 8,NaN,0\n", "", `"NaN" is not a finite non-negative number`},
		{"    target: 8,70,0\n    mode: low-delay\n", "", `flows[0].mode: give target or mode, not both`},
		{"    mode: low-delay\n", "agent: deepcc:g2", `flows[0].mode: mode tunes DeepCC's goal online: it needs agent: deepcc or deepcc:GOAL (with stack: cclab), got agent "marlin"`},
		{"    target: 1,0,0\n", "    agent: deepcc:g2\n", `flows[0].target: target tunes DeepCC's goal online: it needs agent: deepcc`},
	} {
		in := tunedFlow + c.in
		if c.edit == "agent: deepcc:g2" {
			in = strings.Replace(in, c.edit, "agent: marlin", 1)
		} else if c.edit != "" {
			in = strings.Replace(in, c.edit, "", 1)
		}
		_, err := Parse([]byte(in), "x.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %s", c.in, err, c.want)
		}
	}
	// --set reaches the keys like any other.
	s, err := Parse([]byte(tunedFlow), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("flows.0.mode", "high-throughput"); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil || s.Flows[0].Mode != "high-throughput" {
		t.Fatalf("--set flows.0.mode: %v, mode %q", err, s.Flows[0].Mode)
	}
}

// FuzzParseTarget: any string is refused with an error or read as three
// finite, non-negative numbers; never a panic.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"8,70,0.01", "0,0,0", ",,", "1e308,1e309,0", "-0,0,0", "NaN,1,1", " 1 , 2 ,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseTarget(s)
		if err != nil {
			return
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Fatalf("ParseTarget(%q) = %v", s, v)
			}
		}
	})
}
