package main

import (
	"strings"
	"testing"
)

// TestNCStudyQuickKeepsExplicitFlags: --quick only supplies defaults, so
// --seeds and --duration given with it are the ones run (as a dc
// --workload's settings yield to explicit flags).
func TestNCStudyQuickKeepsExplicitFlags(t *testing.T) {
	code, out, errs := runCmd(t, "nc", "study", "--quick", "--seeds", "1", "--duration", "2s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "1 runs of 2s per point") {
		t.Errorf("--quick --seeds 1 --duration 2s did not run 1 run of 2s per point:\n%s", out)
	}
}

// TestNCStudyRejectsZero: an explicit 0 is an error, not tcpnc's "use the
// default" (10 seeds, 200 s), with or without --quick.
func TestNCStudyRejectsZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--quick", "--seeds", "0"}, "--seeds must be at least 1, got 0"},
		{[]string{"--seeds", "0"}, "--seeds must be at least 1, got 0"},
		{[]string{"--quick", "--seeds", "-3"}, "--seeds must be at least 1, got -3"},
		{[]string{"--quick", "--duration", "0s"}, "--duration must be at least 1s, got 0s"},
		{[]string{"--quick", "--jobs", "-1"}, "--jobs must be 0"},
	} {
		code, _, errs := runCmd(t, append([]string{"nc", "study"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("nc study %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
