package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMarlinTrainAblationFlagsRefused: malformed ablation options exit 2
// with a message naming the flag, before any training starts.
func TestMarlinTrainAblationFlagsRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.policy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--switch-range", "5s"}, `--switch-range: want LO,HI, got "5s"`},
		{[]string{"--switch-exclude", "4s,six"}, `--switch-exclude: "six" in "4s,six": not a duration`},
		{[]string{"--background-range", "0.6,x"}, `"x" in "0.6,x": not a number`},
		{[]string{"--randomize=false", "--background-exclude", "1.3,1.7"}, "need --randomize"},
		{[]string{"--randomize=false", "--rate-range", "0.5,2"}, "need --randomize"},
		{[]string{"--queue-range", "0.5"}, "--queue-range: want LO,HI"},
		{[]string{"--rate-range", "2,0.5"}, "link-rate scale range [2 0.5] must be positive, increasing and at most 10"},
		{[]string{"--queue-range", "0,1"}, "queue-limit scale range [0 1] must be positive"},
		{[]string{"--delay-range", "1,11"}, "link-delay scale range [1 11] must be positive, increasing and at most 10"},
		{[]string{"--switch-range", "9s,4s"}, "switch-time range [9s 4s] must be positive and increasing"},
		{[]string{"--n-step", "0"}, "--n-step and --frame-skip >= 1"},
		{[]string{"--ent-coef-init", "0"}, "--ent-coef-init > 0"},
		{[]string{"--demo", "cubic", "--demo-steps", "8"}, "--demo must be bdp"},
		{[]string{"--demo", "bdp"}, "--demo goes with a positive --demo-steps or --bc-weight"},
		{[]string{"--demo-steps", "8"}, "--demo-steps with --demo"},
		{[]string{"--bc-weight", "0.4"}, "--bc-weight must be finite and >= 0, with --demo"},
		{[]string{"--demo", "bdp", "--bc-weight", "-1"}, "--bc-weight must be finite and >= 0"},
		{[]string{"--demo", "bdp", "--bc-weight", "Inf"}, "--bc-weight must be finite and >= 0"},
		{[]string{"--demo", "bdp", "--demo-steps", "8", "--demo-noise", "-1"}, "--demo-noise must be >= 0"},
		{[]string{"--demo-noise", "0.1"}, "--demo-noise must be >= 0, with --demo"},
		{[]string{"--demo-scale", "4"}, "--demo-scale must be in (0, 64], with --demo"},
		{[]string{"--demo", "bdp", "--bc-weight", "0.4", "--demo-scale", "-1"}, "--demo-scale must be in (0, 64]"},
		{[]string{"--demo", "bdp", "--bc-weight", "0.4", "--demo-scale", "65"}, "--demo-scale must be in (0, 64]"},
		{[]string{"--capacity-window", "150ms"}, "--capacity-window must be a multiple of 100ms up to 10s"},
		{[]string{"--min-rtt-window", "11s"}, "--min-rtt-window must be a multiple of 100ms up to 10s"},
		{[]string{"--variant", "paper", "--capacity-window", "1s"}, "--capacity-window needs --variant compact"},
		{[]string{"--bdp-span", "0.5"}, "--bdp-span must be from 1 to 8"},
		{[]string{"--bdp-span", "NaN"}, "--bdp-span must be from 1 to 8"},
		{[]string{"--action", "log2", "--bdp-span", "4"}, "--bdp-span needs --variant compact and its bdp action"},
		{[]string{"--variant", "paper", "--bdp-span", "4"}, "--bdp-span needs --variant compact"},
	} {
		args := append([]string{"marlin", "train", "--variant", "compact", "--steps", "8", "--out", out}, c.args...)
		code, _, errs := runCmd(t, args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
	// Errors found by the training configuration name the option.
	code, _, errs := runCmd(t, "marlin", "train", "--frame-skip", "2", "--steps", "8", "--out", out)
	if code == 0 || !strings.Contains(errs, "frame skip needs the \"compact\" variant") {
		t.Errorf("--frame-skip with the paper's agent: exit %d, stderr %q", code, errs)
	}
}
