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

// expectUsageError requires args to fail as a usage error (exit 2) whose
// message holds every one of want, and returns the message.
func expectUsageError(t *testing.T, args []string, want ...string) string {
	t.Helper()
	code, _, errs := runCmd(t, args...)
	if code != 2 {
		t.Errorf("%v: exit %d (stderr %q), want 2", args, code, errs)
		return errs
	}
	for _, w := range want {
		if !strings.Contains(errs, w) {
			t.Errorf("%v: stderr %q lacks %q", args, errs, w)
		}
	}
	return errs
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

// TestRLSpeedSizeBounds: sizes whose networks would not fit in memory are
// refused up front, naming the flag and what is accepted, rather than
// crashing the process with the runtime's out-of-memory error.
func TestRLSpeedSizeBounds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--obs", "1000000", "--hidden", "100000"}, []string{"--hidden", "100000", "1 to 65536"}},
		{[]string{"--obs", "2000000"}, []string{"--obs 2000000", "1 to 1048576"}},
		{[]string{"--batch", "1000000"}, []string{"--batch", "1 to 65536"}},
		{[]string{"--hidden", strings.Repeat("8,", 16) + "8"}, []string{"--hidden", "17 layers", "1 to 16"}},
		// Each size within its range, together far too large.
		{[]string{"--obs", "1000000", "--hidden", "400,300"}, []string{"--obs 1000000", "parameters", "limit of 2 GiB"}},
		{[]string{"--algo", "mlp", "--obs", "1048576", "--hidden", "65536"}, []string{"--hidden 65536", "limit of 2 GiB"}},
	} {
		expectUsageError(t, append([]string{"rl", "speed", "--seconds", "0.01"}, tc.args...), tc.want...)
	}
}

// TestRLSpeedFootprint: the estimate admits the sizes measured in practice
// and stays above what the learners allocate.
func TestRLSpeedFootprint(t *testing.T) {
	for _, algo := range []string{"sac", "ddpg", "ppo", "mlp", "infer"} {
		mem, params := speedFootprint(algo, 980, 1, []int{400, 300}, 512)
		if mem <= 0 || mem > 256<<20 {
			t.Errorf("%s at MARLIN's sizes: %.0f bytes, want under 256 MiB", algo, mem)
		}
		// The actor alone: 980×400 + 400 + 400×300 + 300 + 300×out + out.
		if actor := 980*400 + 400 + 400*300 + 300 + 300 + 1.0; params < actor {
			t.Errorf("%s: %.0f parameters, fewer than the actor's %.0f", algo, params, actor)
		}
	}
	// SAC's four critics' Adam moments, gradients and targets alone: 12
	// copies of a (obs+1)×h + h + h + 1 network.
	mem, _ := speedFootprint("sac", 100000, 1, []int{1000}, 1)
	if floor := 4 * 12 * (100001*1000 + 2000 + 1.0); mem < floor {
		t.Errorf("sac: %.0f bytes, below the critics' %.0f", mem, floor)
	}
}

// TestRLBenchShortRun: the curve shows a dash, not NaN, while no
// training episode has finished (Pendulum's last 200 steps).
func TestRLBenchShortRun(t *testing.T) {
	code, out, errs := runCmd(t, "rl", "bench", "pendulum", "--algo", "sac", "--steps", "60", "--eval-every", "30", "--eval-episodes", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if strings.Contains(out, "NaN") {
		t.Errorf("curve prints NaN:\n%s", out)
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "1" {
			rows++
			if f[2] != "-" {
				t.Errorf("train_return before any episode finished is %q, want -: %q", f[2], l)
			}
		}
	}
	if rows != 2 {
		t.Errorf("%d curve rows, want 2:\n%s", rows, out)
	}
}

// TestRLBenchSaveCheckedFirst: a --save path that cannot be written fails
// before training, as an unwritable --csv does, naming the flag.
func TestRLBenchSaveCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, save := range []string{filepath.Join(dir, "missing", "p.pol"), dir} {
		code, out, errs := runCmd(t, "rl", "bench", "pendulum", "--algo", "sac", "--steps", "60", "--eval-episodes", "1", "--save", save)
		if code != 1 || !strings.Contains(errs, "--save") || !strings.Contains(errs, save) {
			t.Errorf("--save %s: exit %d, stderr %q; want exit 1 naming --save and the path", save, code, errs)
		}
		if strings.Contains(out, "# seed 1:") {
			t.Errorf("--save %s: training started before the path was checked:\n%s", save, out)
		}
	}
	// With several seeds, every seed's file is checked before the first
	// trains: here seed 2's name is taken by a folder.
	save := filepath.Join(dir, "multi.pol")
	if err := os.Mkdir(save+".seed2", 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "rl", "bench", "pendulum", "--algo", "sac", "--steps", "60", "--eval-episodes", "1", "--seeds", "2", "--save", save)
	if code != 1 || !strings.Contains(errs, save+".seed2") || strings.Contains(out, "# seed 1:") {
		t.Errorf("--seeds 2 with seed 2's file a folder: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
