package main

import (
	"bytes"
	"context"
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
	for _, args := range [][]string{
		{"rl", "bench"},
		{"rl", "bench", "mountaincar"},
		{"rl", "bench", "cartpole", "--algo", "sac"},
		{"rl", "bench", "pendulum", "--resume"},
		{"rl", "bench", "pendulum", "--seeds", "0"},
		{"rl", "speed", "--hidden", "64,x"},
		{"rl", "eval", "pendulum"},
	} {
		if code, _, errs := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d (stderr %q), want 2", args, code, errs)
		}
	}
}

func TestRLSpeed(t *testing.T) {
	code, out, errs := runCmd(t, "rl", "speed", "--obs", "8", "--hidden", "16,16", "--batch", "32", "--seconds", "0.2")
	if code != 0 || !strings.Contains(out, "updates/s") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
}
