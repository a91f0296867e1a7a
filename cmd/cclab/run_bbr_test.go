package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRunBBREstimates: `cclab run` of the Figure 2(b) probe writes BBR's
// estimates (bbr.csv, bbr_estimates.png); a run without BBR does not.
func TestRunBBREstimates(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCmd(t, "run", "bbr-bw-probe", "--set", "duration=5s", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	f, err := os.Open(filepath.Join(dir, "bbr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 40 || rows[0][2] != "btlbw_mbps" || rows[0][3] != "rtprop_ms" {
		t.Fatalf("bbr.csv: %d rows, header %v", len(rows), rows[0])
	}
	// RTprop is the 40 ms propagation RTT (plus serialisation) once set.
	last := rows[len(rows)-1]
	if r, _ := strconv.ParseFloat(last[3], 64); r < 40 || r > 42 {
		t.Errorf("final RTprop %s ms, want about 40", last[3])
	}
	if _, err := os.Stat(filepath.Join(dir, "bbr_estimates.png")); err != nil {
		t.Errorf("no bbr_estimates.png: %v", err)
	}
	other := t.TempDir()
	if code, _, errs := runCmd(t, "run", "bbr-bw-probe", "--cc", "cubic", "--set", "duration=4s", "--out", other); code != 0 {
		t.Fatalf("cubic run: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(other, "bbr.csv")); err == nil {
		t.Errorf("a run without BBR flows wrote bbr.csv")
	}
}
