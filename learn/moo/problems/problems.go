// Package problems holds standard multi-objective test problems with known
// Pareto fronts, for validating optimisers: ZDT1, ZDT2 and ZDT3 (E. Zitzler,
// K. Deb, L. Thiele, "Comparison of multiobjective evolutionary algorithms:
// empirical results", Evolutionary Computation 8(2), 2000) and DTLZ2 (K. Deb,
// L. Thiele, M. Laumanns, E. Zitzler, "Scalable test problems for
// evolutionary multiobjective optimization", 2005). All objectives are
// minimised.
package problems

import (
	"context"
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/indicator"
)

// Problem is a test problem with an analytically known Pareto front.
type Problem struct {
	// Name is "ZDT1", "ZDT2", "ZDT3", "DTLZ2" or "CONSTR".
	Name string
	// Vars, Objs and Cons are the numbers of variables, objectives and
	// inequality constraints.
	Vars, Objs, Cons int
	lower, upper     []float64 // nil means [0, 1]
	ref              []float64 // nil means 1.1 in every objective
	eval             func(x, f, g []float64)
	front            func(n int) [][]float64
}

// Evaluate writes the objective values of x into f and its constraint values
// (g <= 0 satisfied) into g, which may be nil for unconstrained problems.
func (p *Problem) Evaluate(x, f, g []float64) { p.eval(x, f, g) }

// MOO returns the problem in moo's terms: real variables x0..x{n-1} (in
// [0, 1] unless the constructor says otherwise), minimised objectives
// f1..fm and constraints g1..gc.
func (p *Problem) MOO() moo.Problem {
	vars := make([]moo.Variable, p.Vars)
	for i := range vars {
		vars[i] = moo.Variable{Name: fmt.Sprintf("x%d", i), Lower: 0, Upper: 1}
		if p.lower != nil {
			vars[i].Lower, vars[i].Upper = p.lower[i], p.upper[i]
		}
	}
	objs := make([]moo.Objective, p.Objs)
	for j := range objs {
		objs[j] = moo.Objective{Name: fmt.Sprintf("f%d", j+1)}
	}
	var cons []moo.Constraint
	for j := 0; j < p.Cons; j++ {
		cons = append(cons, moo.Constraint{Name: fmt.Sprintf("g%d", j+1)})
	}
	return moo.Problem{Variables: vars, Objectives: objs, Constraints: cons}
}

// Func returns an evaluation function for moo.Run.
func (p *Problem) Func() moo.Func {
	return func(_ context.Context, c moo.Candidate) (moo.Evaluation, error) {
		e := moo.Evaluation{Objectives: make([]float64, p.Objs)}
		if p.Cons > 0 {
			e.Constraints = make([]float64, p.Cons)
		}
		p.eval(c.X, e.Objectives, e.Constraints)
		return e, nil
	}
}

// Front returns about n points of the true Pareto front, spread as described
// by each constructor.
func (p *Problem) Front(n int) [][]float64 { return p.front(n) }

// Reference returns the reference point used for this problem's hypervolume
// in cclab's validation: 1.1 in every objective for ZDT and DTLZ2, 10% beyond
// the front's nadir point (1, 1) or (1, 1, 1) (for ZDT3 the nadir's f1 is
// 0.852; 1.1 is kept for uniformity); (1.1, 10) for CONSTR, whose nadir is
// (1, 9).
func (p *Problem) Reference() []float64 {
	if p.ref != nil {
		return append([]float64(nil), p.ref...)
	}
	ref := make([]float64, p.Objs)
	for j := range ref {
		ref[j] = 1.1
	}
	return ref
}

// zdtG is the distance function shared by ZDT1-3:
// g = 1 + 9 * sum_{i=2..n} x_i / (n - 1).
func zdtG(x []float64) float64 {
	var s float64
	for _, v := range x[1:] {
		s += v
	}
	return 1 + 9*s/float64(len(x)-1)
}

// ZDT1 has a convex front f2 = 1 - sqrt(f1), f1 in [0, 1]; n variables
// (30 in the literature). Front(n) samples f1 uniformly.
func ZDT1(n int) *Problem {
	return &Problem{
		Name: "ZDT1", Vars: n, Objs: 2,
		eval: func(x, f, _ []float64) {
			g := zdtG(x)
			f[0] = x[0]
			f[1] = g * (1 - math.Sqrt(x[0]/g))
		},
		front: func(k int) [][]float64 {
			return curve(k, func(f1 float64) float64 { return 1 - math.Sqrt(f1) })
		},
	}
}

// ZDT2 has a concave front f2 = 1 - f1^2, f1 in [0, 1]. Front(n) samples f1
// uniformly.
func ZDT2(n int) *Problem {
	return &Problem{
		Name: "ZDT2", Vars: n, Objs: 2,
		eval: func(x, f, _ []float64) {
			g := zdtG(x)
			f[0] = x[0]
			r := x[0] / g
			f[1] = g * (1 - r*r)
		},
		front: func(k int) [][]float64 {
			return curve(k, func(f1 float64) float64 { return 1 - f1*f1 })
		},
	}
}

// ZDT3 has a front of five disconnected pieces: the non-dominated part of
// f2 = 1 - sqrt(f1) - f1 sin(10 pi f1), f1 in [0, 1]. Front(n) samples f1
// uniformly on [0, 1] and keeps the non-dominated samples, so it returns
// fewer than n points (about 28% of them).
func ZDT3(n int) *Problem {
	return &Problem{
		Name: "ZDT3", Vars: n, Objs: 2,
		eval: func(x, f, _ []float64) {
			g := zdtG(x)
			f[0] = x[0]
			r := x[0] / g
			f[1] = g * (1 - math.Sqrt(r) - r*math.Sin(10*math.Pi*x[0]))
		},
		front: func(k int) [][]float64 {
			pts := curve(k, zdt3Curve)
			// Sorted by f1, a sample is non-dominated iff its f2 is below
			// every earlier sample's.
			out := pts[:0]
			best := math.Inf(1)
			for _, p := range pts {
				if p[1] < best {
					out = append(out, p)
					best = p[1]
				}
			}
			return out
		},
	}
}

func zdt3Curve(f1 float64) float64 { return 1 - math.Sqrt(f1) - f1*math.Sin(10*math.Pi*f1) }

// curve samples (f1, h(f1)) at k evenly spaced f1 in [0, 1].
func curve(k int, h func(float64) float64) [][]float64 {
	pts := make([][]float64, k)
	for i := range pts {
		f1 := float64(i) / float64(k-1)
		pts[i] = []float64{f1, h(f1)}
	}
	return pts
}

// DTLZ2 has m objectives and m+k-1 variables (k = 10 in the literature, so
// 12 variables for 3 objectives); its front is the part of the unit sphere
// in the positive orthant. Front(n) returns the Das-Dennis simplex-lattice
// points (the smallest lattice with at least n points, as pymoo's reference
// directions) projected onto the sphere.
func DTLZ2(m, k int) *Problem {
	return &Problem{
		Name: "DTLZ2", Vars: m + k - 1, Objs: m,
		eval: func(x, f, _ []float64) {
			// g = sum over the last k variables of (x_i - 0.5)^2.
			var g float64
			for _, v := range x[m-1:] {
				g += (v - 0.5) * (v - 0.5)
			}
			for j := 0; j < m; j++ {
				v := 1 + g
				for _, xi := range x[:m-1-j] {
					v *= math.Cos(xi * math.Pi / 2)
				}
				if j > 0 {
					v *= math.Sin(x[m-1-j] * math.Pi / 2)
				}
				f[j] = v
			}
		},
		front: func(n int) [][]float64 {
			h := 1
			for binomial(h+m-1, m-1) < n {
				h++
			}
			pts := dasDennis(m, h)
			for _, p := range pts {
				var norm float64
				for _, v := range p {
					norm += v * v
				}
				norm = math.Sqrt(norm)
				for j := range p {
					p[j] /= norm
				}
			}
			return pts
		},
	}
}

// dasDennis returns the points of the simplex {w >= 0, sum w = 1} in m
// dimensions whose coordinates are multiples of 1/h (I. Das and J. E.
// Dennis, 1998): C(h+m-1, m-1) points.
func dasDennis(m, h int) [][]float64 {
	var out [][]float64
	w := make([]int, m)
	var rec func(j, left int)
	rec = func(j, left int) {
		if j == m-1 {
			w[j] = left
			p := make([]float64, m)
			for i, v := range w {
				p[i] = float64(v) / float64(h)
			}
			out = append(out, p)
			return
		}
		for v := 0; v <= left; v++ {
			w[j] = v
			rec(j+1, left-v)
		}
	}
	rec(0, h)
	return out
}

func binomial(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

// TrueHypervolume returns the hypervolume of the continuous Pareto front with
// respect to Reference(), or NaN for DTLZ2 with other than 3 objectives:
//
//	ZDT1:   0.1 + 2/3 + 0.11 = 0.876667 (exact)
//	ZDT2:   0.1 + 1/3 + 0.11 = 0.543333 (exact)
//	ZDT3:   1.331762 (numerical, see below)
//	DTLZ2:  1.1^3 - pi/6     = 0.807401 (exact, 3 objectives)
//	CONSTR: 95/18 - 7 ln(12/7) + 10/3 - ln(3/2) + 0.9 = 5.332670 (exact)
//
// For ZDT1 and ZDT2: the integral over f1 in [0, 1] of 1.1 - f2(f1), plus the
// strip f1 in [1, 1.1] dominated by (1, 0), of area 0.1 * 1.1. For DTLZ2: the
// reference box minus the unit ball's positive octant. For ZDT3: the
// hypervolume of the non-dominated points among 10^6 + 1 evenly spaced
// samples of the front curve; the staircase under-estimates by at most the
// sum of the pieces' f2 ranges times the 10^-6 spacing, below 3e-6, and
// halving the spacing changes the value by less than 1e-6. For CONSTR: the
// integrals of 10 - f2 over its two pieces, 19 (2/3 - 7/18) - 7 ln(12/7) and
// 10/3 - ln(3/2), plus the strip f1 in [1, 1.1] dominated by (1, 1).
func (p *Problem) TrueHypervolume() float64 {
	switch p.Name {
	case "ZDT1":
		return 0.1 + 2.0/3 + 0.11
	case "ZDT2":
		return 0.1 + 1.0/3 + 0.11
	case "ZDT3":
		v, err := indicator.Hypervolume(p.Front(1_000_001), p.Reference())
		if err != nil {
			panic("problems: " + err.Error()) // the inputs are ours and finite
		}
		return v
	case "DTLZ2":
		if p.Objs == 3 {
			return 1.331 - math.Pi/6
		}
	case "CONSTR":
		return 95.0/18 - 7*math.Log(12.0/7) + 10.0/3 - math.Log(1.5) + 0.9
	}
	return math.NaN()
}

// CONSTR is the constrained two-objective problem of Deb 2002 (section VI,
// table V): minimise f1 = x1 and f2 = (1 + x2)/x1 subject to
// x2 + 9 x1 >= 6 and -x2 + 9 x1 >= 1, x1 in [0.1, 1], x2 in [0, 5]. In
// g <= 0 form, g1 = 6 - x2 - 9 x1 and g2 = 1 + x2 - 9 x1. Its front: with x2 as
// small as the constraints allow, f2 = 7/f1 - 9 for f1 in [7/18, 2/3]
// (g1 active) and f2 = 1/f1 for f1 in [2/3, 1] (x2 = 0). Front(n) samples f1
// uniformly on [7/18, 1].
func CONSTR() *Problem {
	return &Problem{
		Name: "CONSTR", Vars: 2, Objs: 2, Cons: 2,
		lower: []float64{0.1, 0}, upper: []float64{1, 5}, ref: []float64{1.1, 10},
		eval: func(x, f, g []float64) {
			f[0] = x[0]
			f[1] = (1 + x[1]) / x[0]
			g[0] = 6 - x[1] - 9*x[0]
			g[1] = 1 + x[1] - 9*x[0]
		},
		front: func(k int) [][]float64 {
			pts := make([][]float64, k)
			for i := range pts {
				f1 := 7.0/18 + (1-7.0/18)*float64(i)/float64(k-1)
				f2 := 1 / f1
				if f1 < 2.0/3 {
					f2 = 7/f1 - 9
				}
				pts[i] = []float64{f1, f2}
			}
			return pts
		},
	}
}
