package vegas

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cclab/cclab/analysis/tune"
	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment/scenario"
)

func studyProblem(t *testing.T) *tune.Problem {
	t.Helper()
	s, err := scenario.Parse(Scenario, "vegas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	prob, err := Problem(s)
	if err != nil {
		t.Fatal(err)
	}
	return prob
}

// TestGridCSV checks the exhaustive check's table: every integer (alpha,
// beta) of the search space, each once, with its training and held-out
// objectives in the columns the header names.
func TestGridCSV(t *testing.T) {
	prob := studyProblem(t)
	xs, err := prob.Grid(100_000)
	if err != nil {
		t.Fatal(err)
	}
	train := make([]*tune.Point, len(xs))
	test := make([]*tune.Point, len(xs))
	for i, x := range xs {
		train[i] = &tune.Point{X: x, Objectives: []float64{x[0], x[1]}}
		test[i] = &tune.Point{X: x, Objectives: []float64{-x[0], -x[1]}}
	}
	dir := t.TempDir()
	if err := writeGridCSV(dir, prob, xs, train, test); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "grid.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "vegas.alpha,vegas.beta,train_goodput_mbps,train_qdelay_mean_ms,test_goodput_mbps,test_qdelay_mean_ms" {
		t.Fatalf("header %s", got)
	}
	// alpha in [1, 20], beta in [1, 30], alpha < beta: 20*30 - 210 points.
	if len(recs)-1 != 390 {
		t.Errorf("%d points, want 390", len(recs)-1)
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		a, _ := strconv.Atoi(r[0])
		b, _ := strconv.Atoi(r[1])
		if a >= b || a < 1 || b > 30 || seen[r[0]+","+r[1]] || r[2] != r[0] || r[3] != r[1] || r[4] != "-"+r[0] || r[5] != "-"+r[1] {
			t.Fatalf("row %v", r)
		}
		seen[r[0]+","+r[1]] = true
	}
}

// TestTextNamesTheTunedController: the text verdict prints the best
// point's alpha and beta whether they were tuned on Linux's Vegas
// (vegas.alpha) or ns-3's (vegas_ns3.alpha), as the JSON does.
func TestTextNamesTheTunedController(t *testing.T) {
	for _, name := range []string{"vegas", "vegas_ns3"} {
		gain, qd := 1.5, -0.2
		g := Goal{Best: &tune.PointJSON{Params: map[string]float64{name + ".alpha": 8, name + ".beta": 15}}, GainMbps: &gain, QdelayDiffMs: &qd}
		var b strings.Builder
		g.WriteText(&b, "average")
		if !strings.Contains(b.String(), "alpha=8 beta=15") {
			t.Errorf("%s: %q lacks alpha=8 beta=15", name, b.String())
		}
	}
}
