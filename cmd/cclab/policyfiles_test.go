package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPolicyFiles: a directory stands for its *.policy files in name
// order (not checkpoints or other files), among plain entries in the
// order given; an empty directory is refused by name.
func TestPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"seed2.policy", "seed1.policy", "seed1.policy.ckpt", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := policyFiles("a.policy, " + dir + ",b.policy")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.policy", filepath.Join(dir, "seed1.policy"), filepath.Join(dir, "seed2.policy"), "b.policy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policyFiles = %v, want %v", got, want)
	}
	empty := t.TempDir()
	if _, err := policyFiles(empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("an empty directory: %v, want an error naming it", err)
	}
}

// TestMarlinEvalPolicyDirectory evaluates the kept seeds of a compact
// configuration by naming their directory, as docs/marlin.md does.
func TestMarlinEvalPolicyDirectory(t *testing.T) {
	dir := filepath.Join("..", "..", "papers", "marlin", "policy", "compact-rtt")
	code, out, errs := runCmd(t, "marlin", "eval", "--policy", dir, "--runs", "2", "--validation-runs", "2", "--unseen=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "median seed on 2 validation transfers each") || !strings.Contains(errs, "seed") {
		t.Errorf("no median-seed line naming a file: %s", errs)
	}
	for s := 1; s <= 5; s++ {
		if !strings.Contains(out, "--seed "+string(rune('0'+s))) {
			t.Errorf("seed %d's policy not in the report: %s", s, out[:min(len(out), 600)])
		}
	}
	code, _, errs = runCmd(t, "marlin", "eval", "--policy", t.TempDir())
	if code == 0 || !strings.Contains(errs, "holds no *.policy file") {
		t.Errorf("an empty directory: exit %d, %s", code, errs)
	}
}
