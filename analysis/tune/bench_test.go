package tune

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// studyCases returns the Vegas study's scenario expanded over one shipped
// trace, cut into 120 s pieces in dir.
func studyCases(b *testing.B, mode, trace, dir string) (*Problem, []Case) {
	b.Helper()
	root := filepath.Join("..", "..")
	s, err := scenario.Load(filepath.Join(root, "papers", "vegas", "vegas.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	cases, err := Cases([]*scenario.Scenario{s}, CaseOptions{Traces: []string{filepath.Join(root, "traces", trace)}, Piece: 120 * time.Second, TraceMode: mode, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewProblem([]*scenario.Scenario{s}, Spec{
		Params:      []string{"vegas.alpha=1:20:int", "vegas.beta=1:30:int"},
		Objectives:  []string{"max:goodput_mbps", "min:qdelay_mean_ms"},
		Constraints: []string{"vegas.alpha < vegas.beta"},
	})
	if err != nil {
		b.Fatal(err)
	}
	return p, cases
}

// BenchmarkSimulatePiece is one simulation of the Vegas study: 120 s of
// Vegas on a 120 s piece of ATT-LTE-driving (first piece, about 7 Mbit/s),
// including building the network and reading the piece.
func BenchmarkSimulatePiece(b *testing.B) {
	for _, mode := range []string{"average", "exact"} {
		b.Run(mode, func(b *testing.B) {
			p, cases := studyCases(b, mode, "ATT-LTE-driving.down.gz", b.TempDir())
			s := cases[0].Scenario.Clone()
			if err := p.Apply(s, []float64{2, 4}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := experiment.Run(context.Background(), s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPaperSizedRun is the paper's 10 x 4 tuning on the six 120 s
// pieces of ATT-LTE-driving in average mode (one run per iteration, no
// cache carried over).
func BenchmarkPaperSizedRun(b *testing.B) {
	p, cases := studyCases(b, "average", "ATT-LTE-driving.down.gz", b.TempDir())
	for b.Loop() {
		if _, err := Run(context.Background(), p, cases, Options{Pop: 10, Gens: 4, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
