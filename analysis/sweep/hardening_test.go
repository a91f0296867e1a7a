package sweep

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/cclab/cclab/cc/cubic"
	"github.com/cclab/cclab/experiment"
)

// TestRunCountsDoNotOverflow: hardening 7. --runs 9223372036854775807 with
// two combinations overflowed to "-2 runs" and ran out of memory; with no
// grid the limit was never checked.
func TestRunCountsDoNotOverflow(t *testing.T) {
	for _, grid := range [][]Axis{nil, {{Key: "cc", Values: []string{"newreno", "fixed"}}}} {
		spec := testSpec(t)
		spec.Grid = grid
		spec.Runs = 9223372036854775807
		if _, err := NewPlan(spec); err == nil || !strings.Contains(err.Error(), "more than 50000000 runs") {
			t.Errorf("grid %v: got %v", grid, err)
		}
	}
}

// TestOutputDirectoryLocked: hardening 7. Two sweeps on one --out
// interleaved their rows; the second is now refused while the first runs.
func TestOutputDirectoryLocked(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	spec := testSpec(t)
	spec.Runs = 1
	if _, err := Run(context.Background(), mustPlan(t, spec), dir, Options{}); err == nil || !strings.Contains(err.Error(), "another cclab sweep or merge is writing to") {
		t.Errorf("second writer: %v", err)
	}
	unlock()
	if _, err := Run(context.Background(), mustPlan(t, spec), dir, Options{}); err != nil {
		t.Errorf("after the first released the lock: %v", err)
	}
}

// TestExtendFinishedSweep: bug 2. A finished sweep of 3 runs could not be
// extended to 4 in the same --out ("holds a different sweep").
func TestExtendFinishedSweep(t *testing.T) {
	dir := t.TempDir()
	spec := testSpec(t)
	spec.Runs = 3
	if _, err := Run(context.Background(), mustPlan(t, spec), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	spec.Runs = 4
	var warned []string
	sum, err := Run(context.Background(), mustPlan(t, spec), dir, Options{Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 12 || sum.Done != 16 {
		t.Errorf("resumed %d, done %d; want 12 and 16", sum.Resumed, sum.Done)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "extending the sweep from 3 to 4 runs") {
		t.Errorf("warnings %q", warned)
	}
	// The extended directory reads back as the 4-run sweep, and matches a
	// 4-run sweep made in one go.
	m, rs, err := Load(dir, nil)
	if err != nil || m.Runs != 4 || rs.Len() != 16 {
		t.Fatalf("Load: runs %v rows %v err %v", m, rs, err)
	}
	fresh := t.TempDir()
	if _, err := Run(context.Background(), mustPlan(t, spec), fresh, Options{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir, RowsCSVFile))
	b, _ := os.ReadFile(filepath.Join(fresh, RowsCSVFile))
	if stripWall(t, RowsCSVFile, a) != stripWall(t, RowsCSVFile, b) {
		t.Errorf("extended sweep differs from a fresh 4-run sweep")
	}
	// Fewer runs is still a different sweep.
	spec.Runs = 2
	if _, err := Run(context.Background(), mustPlan(t, spec), dir, Options{}); err == nil || !strings.Contains(err.Error(), "--runs: recorded 4, now 2") {
		t.Errorf("shrinking: %v", err)
	}
}

// TestControllerParameterAcrossControllers: bug 2. --grid cc=cubic,bbr
// --grid cubic.beta=0.5,0.7 failed on the combinations without cubic; the
// parameter now does not apply there and rows.csv says so.
func TestControllerParameterAcrossControllers(t *testing.T) {
	spec := testSpec(t)
	spec.Runs = 1
	spec.Grid = []Axis{{Key: "cc", Values: []string{"cubic", "newreno"}}, {Key: "cubic.beta", Values: []string{"0.5", "0.7"}}}
	p := mustPlan(t, spec)
	for _, c := range p.Combos {
		usesCubic := c.Params[0].Value == "cubic"
		if got := len(c.NotApplied) == 0; got != usesCubic {
			t.Errorf("%s: not applied %v", c.Label(), c.NotApplied)
		}
		if usesCubic && c.Scenario.Flows[0].CC.Params["beta"] != mustFloat(c.Params[1].Value) {
			t.Errorf("%s: beta not set: %v", c.Label(), c.Scenario.Flows[0].CC)
		}
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), p, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, RowsCSVFile))
	recs, _ := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if len(recs) != 5 || recs[3][1] != "newreno" || recs[3][2] != NotAppliedCell || recs[1][2] != "0.5" {
		t.Errorf("rows.csv:\n%s", data)
	}
}

func mustFloat(s string) float64 {
	switch s {
	case "0.5":
		return 0.5
	case "0.7":
		return 0.7
	}
	return -1
}

// TestCSVWithoutFloatNoise: rows.csv and aggregate.csv had cells such as
// 3.3138500000000004; every number is now at most ten significant digits.
func TestCSVWithoutFloatNoise(t *testing.T) {
	spec := testSpec(t)
	spec.Runs = 3
	// Several flows: sums of their goodputs showed the noise.
	spec.Sets = append(spec.Sets, "flows.0.count=7")
	dir := t.TempDir()
	if _, err := Run(context.Background(), mustPlan(t, spec), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	noise := regexp.MustCompile(`\d*\.?\d{11,}`)
	for _, name := range []string{RowsCSVFile, AggregateCSVFile} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs[1:] {
			for i, c := range r {
				digits := strings.TrimLeft(strings.Split(strings.NewReplacer(".", "", "-", "").Replace(c), "e")[0], "0")
				if len(digits) > 10 && noise.MatchString(c) && !strings.Contains(recs[0][i], "seed") {
					t.Errorf("%s: %s = %s", name, recs[0][i], c)
				}
			}
		}
	}
}

// TestTotalGoodputWithinTheLink: two flows, one over the whole 10 s run at
// 5 Mbit/s and one over its last 5 s at 10 Mbit/s (each flow's goodput is
// over its own active time), together delivered 6.25 MB: 5 Mbit/s over the
// run. The sum of their goodputs, the column's earlier value, was 15.
func TestTotalGoodputWithinTheLink(t *testing.T) {
	r := &experiment.Result{SimSeconds: 10, Flows: []experiment.FlowResult{
		{BytesDelivered: 6_250_000 / 2, GoodputMbps: 2.5},
		{BytesDelivered: 6_250_000 / 2, GoodputMbps: 5},
	}}
	for _, c := range scalarColumns {
		if c.Name != "total_goodput_mbps" {
			continue
		}
		if got := c.Value(r); math.Abs(got-5) > 1e-9 {
			t.Errorf("total_goodput_mbps = %g, want 5", got)
		}
		return
	}
	t.Fatal("no total_goodput_mbps column")
}
