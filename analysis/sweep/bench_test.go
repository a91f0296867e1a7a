package sweep

import (
	"context"
	"os"
	"testing"
	"time"
)

const satcomUHF = "../../scenarios/satcom-uhf.yaml"

func satcomSpec(t testing.TB, runs int) Spec {
	data, err := os.ReadFile(satcomUHF)
	if err != nil {
		t.Skipf("no %s: %v", satcomUHF, err)
	}
	return Spec{ScenarioPath: satcomUHF, ScenarioData: data, Runs: runs}
}

// TestSatcomUHFThousandRuns checks the figure: a 1,000-run sweep of
// satcom-uhf finishes in under a minute on the 2-core machine, all cores,
// fsync included. Measured figures are in docs/sweeps.md.
func TestSatcomUHFThousandRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	spec := satcomSpec(t, 1000)
	start := time.Now()
	sum, err := Run(context.Background(), mustPlan(t, spec), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	t.Logf("1000 satcom-uhf runs in %v", wall)
	if sum.Done != 1000 || wall > time.Minute {
		t.Errorf("%d runs in %v; want 1000 in under a minute", sum.Done, wall)
	}
}

// BenchmarkSatcomUHFSweep measures whole 1,000-run sweeps (simulation,
// rows, fsyncs and aggregates): go test ./sweep -run '^$' -bench SatcomUHF
func BenchmarkSatcomUHFSweep(b *testing.B) {
	spec := satcomSpec(b, 1000)
	p, err := NewPlan(spec)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), p, b.TempDir(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/1000, "ms/run")
}
