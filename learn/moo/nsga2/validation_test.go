package nsga2_test

import (
	"testing"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/indicator"
	"github.com/cclab/cclab/learn/moo/nsga2"
	"github.com/cclab/cclab/learn/moo/problems"
)

// TestValidation runs NSGA-II with its default settings (pymoo's: SBX eta 15,
// polynomial mutation eta 20, crossover probability 0.9) for 250 generations
// of 100 individuals, 25,000 evaluations, on the standard problems, and
// compares the result with the analytically known front.
//
// The result judged is the run's answer, Result.Pareto: the Pareto set of all
// 25,000 evaluations, which is what cclab tune reports. Its targets are the
// issue's: IGD at most 0.01 (ZDT1, ZDT2), 0.02 (ZDT3), 0.05 (DTLZ2), and a
// hypervolume within 1% of the continuous true front's, with reference point
// 1.1 in every objective (true hypervolumes 0.876667, 0.543333, 1.331762 and
// 0.807401; see problems.TrueHypervolume). DTLZ2's hypervolume target is 2.5%
// instead, because 1% is out of reach of any sample of a few thousand points:
// an exact, evenly spread 6,105-point sample of the sphere already falls 0.9%
// short (a staircase under a curved surface), and 1,035 points fall 2.2% short.
// CONSTR (Deb 2002's constrained problem, reference (1.1, 10), true
// hypervolume 5.332670) checks constraint handling with the same targets as
// ZDT1.
//
// The final population's front (100 points at most) is also checked against
// the IGD targets, which NSGA-II's population meets for ZDT (measured
// 0.0045-0.0056 over seeds 1-3). For CONSTR its bound is 0.03 (measured
// 0.019): f2 spans [1, 9], so unnormalised distances are larger, and crowding
// thins the population out on the steep first piece. For DTLZ2 it does not, and cannot be expected to: even an ideal evenly
// spread 105-point sample of the front has IGD 0.049 against the 1,035-point
// reference, and crowding distance spreads poorly in three objectives; the
// population's bound is 0.08 (measured 0.067-0.071 over seeds 1-3), a
// regression guard. Likewise its hypervolume bounds (2% for ZDT, 15% for
// DTLZ2, whose best 105-point sample is 7.2% short) only guard regressions.
//
// IGD reference fronts: 1,000 points evenly spaced in f1 for ZDT1, ZDT2 and
// CONSTR; for ZDT3 the non-dominated ones among 1,000 such samples of the
// curve (274 points); for DTLZ2 the 1,035 Das-Dennis lattice points (44
// divisions) projected on the sphere.
func TestValidation(t *testing.T) {
	tests := []struct {
		p              *problems.Problem
		igd, hvTol     float64 // targets for the run's Pareto set
		popIGD, popTol float64 // targets for the final population's front
	}{
		{problems.ZDT1(30), 0.01, 0.01, 0.01, 0.02},
		{problems.ZDT2(30), 0.01, 0.01, 0.01, 0.02},
		{problems.ZDT3(30), 0.02, 0.01, 0.02, 0.02},
		{problems.DTLZ2(3, 10), 0.05, 0.025, 0.08, 0.15},
		{problems.CONSTR(), 0.01, 0.01, 0.03, 0.02},
	}
	for _, tc := range tests {
		t.Run(tc.p.Name, func(t *testing.T) {
			t.Parallel()
			mp := tc.p.MOO()
			o := newOpt(t, mp, nsga2.Settings{PopSize: 100}, 1)
			res := run(t, o, tc.p.Func(), moo.Settings{Generations: 250, Workers: 1})
			if len(res.Evaluated) != 25000 {
				t.Errorf("%d evaluations, want 25,000", len(res.Evaluated))
			}
			front := tc.p.Front(1000)
			trueHV := tc.p.TrueHypervolume()
			check := func(what string, inds []moo.Individual, igdMax, hvTol float64) {
				t.Helper()
				pts := objectives(inds)
				igd, err := indicator.IGD(pts, front)
				if err != nil {
					t.Fatal(err)
				}
				hv, err := indicator.Hypervolume(pts, tc.p.Reference())
				if err != nil {
					t.Fatal(err)
				}
				short := (trueHV - hv) / trueHV
				t.Logf("%s: %d points, IGD %.5f (max %.3f), hypervolume %.6f, %.2f%% below the true %.6f (max %.1f%%)",
					what, len(pts), igd, igdMax, hv, 100*short, trueHV, 100*hvTol)
				if igd > igdMax {
					t.Errorf("%s: IGD %.5f, want at most %.3f", what, igd, igdMax)
				}
				// No feasible set can beat the true front.
				if hv > trueHV*(1+1e-9) || short > hvTol {
					t.Errorf("%s: hypervolume %.6f, want within %.1f%% below %.6f", what, hv, 100*hvTol, trueHV)
				}
			}
			check("Pareto set of all evaluations", res.Pareto, tc.igd, tc.hvTol)
			popFront := moo.ParetoSet(mp, res.Population)
			if len(popFront) == 0 || len(res.Population) != 100 {
				t.Fatalf("final population %d, front %d", len(res.Population), len(popFront))
			}
			check("final population's front", popFront, tc.popIGD, tc.popTol)
			for _, ind := range res.Pareto {
				if !ind.Feasible() {
					t.Fatalf("infeasible Pareto member %v", ind.X)
				}
			}
		})
	}
}

func objectives(inds []moo.Individual) [][]float64 {
	out := make([][]float64, len(inds))
	for i := range inds {
		out[i] = inds[i].Objectives
	}
	return out
}
