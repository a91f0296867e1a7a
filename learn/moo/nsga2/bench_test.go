package nsga2_test

import (
	"context"
	"testing"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/nsga2"
	"github.com/cclab/cclab/learn/moo/problems"
)

// BenchmarkAskTell measures the optimiser's own work per generation:
// mating, variation, duplicate elimination, sorting and survival, for a
// population of 100 on ZDT1 (30 variables, 2 objectives), whose evaluation
// (about 30 additions) is negligible.
func BenchmarkAskTell(b *testing.B) {
	tp := problems.ZDT1(30)
	o := newOpt(b, tp.MOO(), nsga2.Settings{PopSize: 100}, 1)
	evals := make([]moo.Evaluation, 100)
	for i := range evals {
		evals[i].Objectives = make([]float64, 2)
	}
	step := func() {
		batch := o.Ask()
		for i, c := range batch {
			tp.Evaluate(c.X, evals[i].Objectives, nil)
		}
		if _, err := o.Tell(evals[:len(batch)]); err != nil {
			b.Fatal(err)
		}
	}
	for range 20 { // past the random start, into steady state
		step()
	}
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
}

// BenchmarkRun measures a whole validation-sized run through moo.Run (pop
// 100 x 250 generations on ZDT1, 2 workers), including goroutine dispatch and
// the Pareto archive of all evaluations, and reports the cost per generation.
func BenchmarkRun(b *testing.B) {
	tp := problems.ZDT1(30)
	b.ReportAllocs()
	for b.Loop() {
		o := newOpt(b, tp.MOO(), nsga2.Settings{PopSize: 100}, 1)
		if _, err := moo.Run(context.Background(), o, tp.Func(), moo.Settings{Generations: 250, Workers: 2}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/250, "ns/generation")
}

// BenchmarkPaperRun measures the engine's total overhead for the paper's run,
// 10 individuals x 4 generations with 2 integer variables, a constraint and
// 2 workers, with a free evaluator: what cclab tune adds to the simulations.
func BenchmarkPaperRun(b *testing.B) {
	p, f := vegasLike()
	b.ReportAllocs()
	for b.Loop() {
		o := newOpt(b, p, nsga2.Settings{PopSize: 10}, 1)
		if _, err := moo.Run(context.Background(), o, f, moo.Settings{Generations: 4, Workers: 2}); err != nil {
			b.Fatal(err)
		}
	}
}
