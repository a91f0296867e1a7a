package report

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestRunDirRoundTrip writes a run's output directory and its report: the
// CSV has one row per flow and sample inside the flow's lifetime, and the
// report lists every flow and draws the time series.
func TestRunDirRoundTrip(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name: rt
seed: 3
duration: 4s
sample: 200ms
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 50}}
flows:
  - {name: a, cc: cubic}
  - {name: b, cc: bbr, start: 1s}
`), "rt.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	res, n, err := experiment.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteRunDir(dir, s, res, n); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "flows.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	perFlow := map[string]int{}
	for _, r := range rows[1:] {
		perFlow[r[1]]++
	}
	// Samples at 0, 0.2, ..., 4 s: 21 for a, and those from 1 s on for b.
	if perFlow["a"] != 21 || perFlow["b"] != 16 {
		t.Errorf("flows.csv rows per flow %v, want a:21 b:16", perFlow)
	}
	path, figs, err := WriteDir(context.Background(), dir, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Run of rt (seed 3)", ">a<", ">b<", "Time series"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(figs) < 3 {
		t.Errorf("figures %v, want the dashboard and two CDFs", figs)
	}
	if _, _, err := WriteDir(context.Background(), t.TempDir(), DirOptions{}); err == nil {
		t.Error("WriteDir on an empty directory: no error")
	}
}
