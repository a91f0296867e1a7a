package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepCCStudy runs every experiment of `deepcc study` with the shipped
// policy at a tiny size, with --json and --out.
func TestDeepCCStudy(t *testing.T) {
	traces := filepath.Join("..", "..", "traces")
	for _, c := range []struct {
		name string
		args []string
		file string // a figure --out must write
	}{
		{"coexist", []string{"--duration", "3s", "--runs", "1"}, "coexist_1.png"},
		{"convergence", []string{"--duration", "4s", "--every", "1s", "--flows", "2", "--runs", "1"}, "convergence_1.svg"},
		{"loss", []string{"--duration", "3s", "--runs", "1", "--losses", "0,5"}, "loss.png"},
		{"intervals", []string{"--duration", "3s", "--runs", "1", "--decisions", "1", "--rtts", "40", "--tunings", "4",
			"--traces", traces, "--eval-traces", "ATT-LTE-driving-2016.down.gz"}, "intervals_tuning.png"},
		{"modes", []string{"--duration", "3s", "--runs", "1", "--traces", traces, "--eval-traces", "ATT-LTE-driving-2016.down.gz"}, "report.html"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"deepcc", "study", c.name, "--json", "--out", dir}, c.args...)
			code, out, errs := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("--json output is not JSON: %v\n%s", err, out)
			}
			for _, f := range []string{c.name + ".json", c.file} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("--out did not write %s: %v", f, err)
				}
			}
			// The text form prints a table.
			code, out, errs = runCmd(t, append([]string{"deepcc", "study", c.name}, c.args...)...)
			if code != 0 || !strings.Contains(out, "DeepCC") {
				t.Errorf("text output (exit %d): %s%s", code, out, errs)
			}
		})
	}
	expectUsageErrors(t, [][]string{
		{"deepcc", "study"},
		{"deepcc", "study", "nope"},
		{"deepcc", "study", "loss", "--losses", "x"},
		{"deepcc", "study", "coexist", "--competitors", "0"},
		{"deepcc", "study", "loss", "--runs", "-1"},
	})
}
