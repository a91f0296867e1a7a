package moo_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/expr"
	"github.com/cclab/cclab/learn/moo/nsga2"
	"github.com/cclab/cclab/learn/moo/spec"
)

// toyVegas stands in for a simulation of Vegas over trace k: goodput grows
// with alpha and saturates, queueing delay grows with alpha + beta.
func toyVegas(alpha, beta float64, k int) (goodputMbps, qdelayMs float64) {
	capacity := 8 + float64(k) // Mbit/s, one value per "trace"
	return capacity * (1 - math.Exp(-alpha/4)), 2.5*(alpha+beta) + float64(k)
}

// Example shows what cclab tune does with the package: parse --param,
// --objective and --constraint, evaluate each candidate over three traces
// (skipping the simulation of candidates that violate a parameter
// constraint), run the paper-sized NSGA-II, and report the Pareto set and the
// hypervolume per generation.
func Example() {
	params := []string{"vegas.alpha=1:20:int", "vegas.beta=1:30:int"}
	objectives := []string{"max:goodput_mbps", "min:qdelay_mean_ms"}
	constraints := []string{"vegas.alpha < vegas.beta"}

	var p moo.Problem
	for _, s := range params {
		v, err := spec.ParseParam(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		p.Variables = append(p.Variables, v)
	}
	for _, s := range objectives {
		o, err := spec.ParseObjective(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		p.Objectives = append(p.Objectives, o)
	}
	var cons []*expr.Constraint
	for _, s := range constraints {
		c, err := expr.Parse(s, p.VariableNames())
		if err != nil {
			fmt.Println(err)
			return
		}
		cons = append(cons, c)
		p.Constraints = append(p.Constraints, moo.Constraint{Name: c.Source()})
	}

	const traces = 3
	eval, err := moo.Replicate(traces, moo.NewLimiter(0), func(ctx context.Context, c moo.Candidate, k int) (moo.Evaluation, error) {
		e := moo.Evaluation{Objectives: []float64{math.NaN(), math.NaN()}}
		infeasible := false
		for _, con := range cons {
			g := con.G(c.X)
			e.Constraints = append(e.Constraints, g)
			infeasible = infeasible || g > 0
		}
		if infeasible {
			return e, nil // no need to simulate
		}
		e.Objectives[0], e.Objectives[1] = toyVegas(c.X[0], c.X[1], k)
		return e, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	defaults := []float64{2, 4} // Vegas's alpha and beta, segments
	opt, err := nsga2.New(p, nsga2.Settings{PopSize: 10, Initial: [][]float64{defaults}}, rand.NewPCG(2024, 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	done := 0
	res, err := moo.Run(context.Background(), opt, eval, moo.Settings{
		Generations: 4,
		Workers:     opt.PopulationSize(),
		Progress:    func(pr moo.Progress) { done = pr.Done }, // drive a progress bar here
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ref, volume, err := moo.NadirReference(p, res.Evaluated, 0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	hv, err := moo.HypervolumeTrace(p, res.Evaluated, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d evaluations, %d progress reports\n", len(res.Evaluated), done)
	for _, ind := range res.Pareto {
		fmt.Printf("alpha=%v beta=%v goodput_mbps=%.2f qdelay_mean_ms=%.2f\n", ind.X[0], ind.X[1], ind.Objectives[0], ind.Objectives[1])
	}
	fmt.Print("normalised hypervolume per generation:")
	for _, v := range hv {
		fmt.Printf(" %.3f", v/volume)
	}
	fmt.Println()
	// Output:
	// 40 evaluations, 40 progress reports
	// alpha=15 beta=19 goodput_mbps=8.79 qdelay_mean_ms=86.00
	// alpha=7 beta=21 goodput_mbps=7.44 qdelay_mean_ms=71.00
	// alpha=6 beta=21 goodput_mbps=6.99 qdelay_mean_ms=68.50
	// alpha=5 beta=19 goodput_mbps=6.42 qdelay_mean_ms=61.00
	// alpha=3 beta=4 goodput_mbps=4.75 qdelay_mean_ms=18.50
	// alpha=2 beta=3 goodput_mbps=3.54 qdelay_mean_ms=13.50
	// normalised hypervolume per generation: 0.445 0.562 0.579 0.591
}
