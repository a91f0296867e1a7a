package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestNCWindowAndSharing(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "nc", "window", "--seeds", "1", "--duration", "10s", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("nc window: exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) == 0 {
		t.Fatalf("nc window --json: %v\n%s", err, out)
	}
	code, out, errs = runCmd(t, "nc", "sharing", "--duration", "10s", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("nc sharing: exit %d: %s", code, errs)
	}
	var sh map[string]any
	if err := json.Unmarshal([]byte(out), &sh); err != nil {
		t.Fatalf("nc sharing --json: %v", err)
	}
	for _, f := range []string{"window.json", "window.png", "sharing.json", "sharing.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	expectUsageErrors(t, [][]string{{"nc", "window", "--seeds", "0"}, {"nc", "sharing", "--interval", "0s"}, {"nc", "window", "x"}})
}

func TestMarlinBackground(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "marlin", "background", "--duration", "12s", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var p struct {
		Components []struct {
			Name string `json:"name"`
		} `json:"components"`
		Changes []float64 `json:"changes_s"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Components) != 6 || len(p.Changes) != 1 {
		t.Fatalf("--json: %v, %+v", err, p)
	}
	for _, f := range []string{"background.json", "background.png", "background.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if code, _, _ := runCmd(t, "marlin", "background", "--interval", "0s"); code != 2 {
		t.Errorf("--interval 0s: exit %d, want 2", code)
	}
}

func TestNCHops(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "nc", "hops", "--q", "0.02", "--seeds", "1", "--duration", "20s", "--json", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "hops.png")); err != nil {
		t.Errorf("no hops.png: %v", err)
	}
	expectUsageErrors(t, [][]string{{"nc", "hops", "--q", "x"}, {"nc", "hops", "--hops", "0"}})
}

// TestNCNoSACK: --no-sack reaches the studies and their headings, so a
// Reno-style table cannot be mistaken for the default's.
func TestNCNoSACK(t *testing.T) {
	code, out, errs := runCmd(t, "nc", "hops", "--no-sack", "--seeds", "1", "--duration", "10s", "--q", "0.02")
	if code != 0 {
		t.Fatalf("nc hops --no-sack: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "TCP without SACK") {
		t.Errorf("nc hops --no-sack heading does not say so:\n%s", out)
	}
	code, out, errs = runCmd(t, "nc", "study", "--quick", "--no-sack", "--json")
	if code != 0 {
		t.Fatalf("nc study --no-sack: exit %d: %s", code, errs)
	}
	var res struct {
		NoSACK bool `json:"no_sack"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.NoSACK {
		t.Errorf("nc study --no-sack --json: no_sack = %v (%v)", res.NoSACK, err)
	}
}

// TestNCHopsEndToEndLossUpFront: per-hop losses whose end-to-end loss the
// study cannot simulate are refused before any run, in the command line's
// terms (--q, --hops), with the largest --q that works.
func TestNCHopsEndToEndLossUpFront(t *testing.T) {
	upTo := regexp.MustCompile(`--q up to ([0-9.]+)`)
	for _, tc := range []struct {
		args []string
		hops int
		want []string
	}{
		{[]string{"--q", "0.9", "--hops", "64"}, 64, []string{"--q 0.9 over --hops 64", "1-(1-0.9)^64 ≈ 1", "no flow survives"}},
		{[]string{"--q", "0.01,0.5", "--hops", "4"}, 4, []string{"--q 0.5 over --hops 4", "= 0.9375", "R = 16.01", "limit of 10"}},
		{[]string{"--q", "0.8999", "--hops", "1"}, 1, []string{"--q 0.8999 over --hops 1"}},
	} {
		errs := expectUsageError(t, append([]string{"nc", "hops", "--seeds", "1", "--duration", "2s"}, tc.args...), tc.want...)
		if strings.Contains(errs, "flows[0]") || strings.Contains(errs, " runs") {
			t.Errorf("%v: the runs started, or the error names a scenario field: %q", tc.args, errs)
		}
		// The largest --q offered is accepted, and a little more is not.
		m := upTo.FindStringSubmatch(errs)
		if m == nil {
			t.Errorf("%v: stderr %q offers no largest --q", tc.args, errs)
			continue
		}
		qMax, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkHopLosses([]float64{qMax}, tc.hops); err != nil {
			t.Errorf("--hops %d: the offered --q %g is refused: %v", tc.hops, qMax, err)
		}
		if err := checkHopLosses([]float64{qMax + 0.001}, tc.hops); err == nil {
			t.Errorf("--hops %d: --q %g, above the offered %g, is accepted", tc.hops, qMax+0.001, qMax)
		}
	}
	expectUsageErrors(t, [][]string{{"nc", "hops", "--q", "1"}, {"nc", "hops", "--q", "-0.1"}, {"nc", "hops", "--jobs", "-1"}})
}
