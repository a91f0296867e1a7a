package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// expectUsageErrors runs each command line and requires the usage-error
// exit status, 2.
func expectUsageErrors(t *testing.T, cases [][]string) {
	t.Helper()
	for _, args := range cases {
		if code, _, errs := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d (stderr %q), want 2", args, code, errs)
		}
	}
}

// expectJunkPolicy requires a command given a file that is not a policy to
// fail (exit 1) with an error naming --policy.
func expectJunkPolicy(t *testing.T, args ...string) {
	t.Helper()
	junk := filepath.Join(t.TempDir(), "junk.policy")
	if err := os.WriteFile(junk, []byte("not a policy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd(t, append(args, "--policy", junk)...); code != 1 || !strings.Contains(errs, "--policy") {
		t.Errorf("junk policy: exit %d, stderr %q", code, errs)
	}
}

func TestRLBenchSmoke(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "log.csv")
	code, out, errs := runCmd(t, "rl", "bench", "pendulum", "--algo", "sac", "--steps", "150", "--eval-episodes", "2", "--csv", csv)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "# seed 1 final: mean return") || !strings.Contains(out, "eval_return") {
		t.Errorf("output lacks the curve or final line:\n%s", out)
	}
}

func TestRLBenchSaveEvalAndMismatch(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "cartpole.pol")
	code, out, errs := runCmd(t, "rl", "bench", "cartpole", "--algo", "ppo", "--steps", "512", "--eval-episodes", "2", "--save", pol)
	if code != 0 {
		t.Fatalf("bench exit %d: %s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "rl", "eval", "cartpole", pol, "--episodes", "3")
	if code != 0 || !strings.Contains(out, "mean return") || !strings.Contains(out, "training_wall_s") {
		t.Fatalf("eval exit %d: %s%s", code, out, errs)
	}
	code, _, errs = runCmd(t, "rl", "eval", "pendulum", pol)
	if code != 1 || !strings.Contains(errs, "trained on observations") {
		t.Errorf("evaluating a CartPole policy on Pendulum: exit %d, stderr %q; want exit 1 naming the mismatch", code, errs)
	}
}

func TestRLUsageErrors(t *testing.T) {
	expectUsageErrors(t, [][]string{
		{"rl", "bench"},
		{"rl", "bench", "mountaincar"},
		{"rl", "bench", "cartpole", "--algo", "sac"},
		{"rl", "bench", "pendulum", "--resume"},
		{"rl", "bench", "pendulum", "--seeds", "0"},
		{"rl", "speed", "--hidden", "64,x"},
		{"rl", "eval", "pendulum"},
	})
}

func TestRLSpeed(t *testing.T) {
	code, out, errs := runCmd(t, "rl", "speed", "--obs", "8", "--hidden", "16,16", "--batch", "32", "--seconds", "0.2")
	if code != 0 || !strings.Contains(out, "updates/s") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
}
