package problems

import (
	"context"
	"math"
	"testing"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/indicator"
	"github.com/cclab/cclab/learn/moo/pareto"
)

func TestEvaluateHandComputed(t *testing.T) {
	half := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.5
		}
		return x
	}
	// ZDT, 30 variables all 0.5: g = 1 + 9*0.5 = 5.5, f1 = 0.5, r = f1/g = 1/11.
	r := 1.0 / 11
	tests := []struct {
		p    *Problem
		x    []float64
		want []float64
	}{
		{ZDT1(30), half(30), []float64{0.5, 5.5 * (1 - math.Sqrt(r))}},
		{ZDT2(30), half(30), []float64{0.5, 5.5 * (1 - r*r)}},
		{ZDT3(30), half(30), []float64{0.5, 5.5 * (1 - math.Sqrt(r) - r*math.Sin(5*math.Pi))}},
		// DTLZ2 at the centre: g = 0, both angles pi/4.
		{DTLZ2(3, 10), half(12), []float64{0.5, 0.5, math.Sqrt2 / 2}},
		// DTLZ2 with x1 = 0 (f3 = 0), x2 = 1 (f1 = 0), distance variables 1:
		// g = 10 * 0.25 = 2.5, f2 = 3.5.
		{DTLZ2(3, 10), append([]float64{0, 1}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}...), []float64{0, 3.5, 0}},
		{CONSTR(), []float64{0.5, 1}, []float64{0.5, 4}},
	}
	for _, tc := range tests {
		f := make([]float64, tc.p.Objs)
		g := make([]float64, tc.p.Cons)
		tc.p.Evaluate(tc.x, f, g)
		for j := range f {
			if math.Abs(f[j]-tc.want[j]) > 1e-12 {
				t.Errorf("%s: f%d = %v, want %v", tc.p.Name, j+1, f[j], tc.want[j])
			}
		}
	}
}

// TestParetoOptimalDecisionsHitTheFront evaluates points of the known
// Pareto-optimal sets and checks they land on the curve Front samples.
func TestParetoOptimalDecisionsHitTheFront(t *testing.T) {
	for _, p := range []*Problem{ZDT1(30), ZDT2(30), ZDT3(30)} {
		x := make([]float64, 30)
		f := make([]float64, 2)
		for _, t1 := range []float64{0, 0.25, 0.5, 1} {
			x[0] = t1 // x2..x30 = 0 makes g = 1
			p.Evaluate(x, f, nil)
			curve := p.Front(5)
			if p.Name != "ZDT3" && math.Abs(f[1]-curve[int(t1*4)][1]) > 1e-12 {
				t.Errorf("%s at f1=%v: f2 = %v, want %v", p.Name, t1, f[1], curve[int(t1*4)][1])
			}
			if p.Name == "ZDT3" && math.Abs(f[1]-zdt3Curve(t1)) > 1e-12 {
				t.Errorf("ZDT3 at f1=%v: f2 = %v, want %v", t1, f[1], zdt3Curve(t1))
			}
		}
	}
	// DTLZ2: distance variables at 0.5 put any angles on the unit sphere.
	p := DTLZ2(3, 10)
	x := make([]float64, 12)
	f := make([]float64, 3)
	for i := range x {
		x[i] = 0.5
	}
	for _, a := range []float64{0, 0.3, 1} {
		x[0], x[1] = a, 1-a
		p.Evaluate(x, f, nil)
		if n := math.Sqrt(f[0]*f[0] + f[1]*f[1] + f[2]*f[2]); math.Abs(n-1) > 1e-12 {
			t.Errorf("DTLZ2 at angles (%v, %v): |f| = %v, want 1", a, 1-a, n)
		}
	}
}

// TestZDT3FrontPieces checks the sampled ZDT3 front is non-dominated and
// falls into the five pieces reported in the literature (f1 intervals
// [0, 0.0830], [0.1822, 0.2578], [0.4093, 0.4539], [0.6184, 0.6525],
// [0.8233, 0.8518], to 4 decimals; the sampling spacing is 1e-4).
func TestZDT3FrontPieces(t *testing.T) {
	front := ZDT3(30).Front(10001)
	if nd := pareto.NonDominated(front, nil); len(nd) != len(front) {
		t.Fatalf("%d of %d front points non-dominated, want all", len(nd), len(front))
	}
	pieces := [][2]float64{{0, 0.0830}, {0.1822, 0.2578}, {0.4093, 0.4539}, {0.6184, 0.6525}, {0.8233, 0.8518}}
	var got [][2]float64
	for i, p := range front {
		if i == 0 || p[0]-front[i-1][0] > 2e-4 {
			got = append(got, [2]float64{p[0], p[0]})
		}
		got[len(got)-1][1] = p[0]
	}
	if len(got) != len(pieces) {
		t.Fatalf("got %d pieces %v, want %d", len(got), got, len(pieces))
	}
	for k := range pieces {
		for e := 0; e < 2; e++ {
			if math.Abs(got[k][e]-pieces[k][e]) > 2e-4 {
				t.Errorf("piece %d end %d: f1 = %.4f, want %.4f", k, e, got[k][e], pieces[k][e])
			}
		}
	}
}

func TestDTLZ2Front(t *testing.T) {
	front := DTLZ2(3, 10).Front(1000)
	// The smallest lattice with at least 1000 points: h = 44, C(46, 2) = 1035.
	if len(front) != 1035 {
		t.Errorf("got %d points, want 1035", len(front))
	}
	for _, p := range front {
		if n := math.Sqrt(p[0]*p[0] + p[1]*p[1] + p[2]*p[2]); math.Abs(n-1) > 1e-12 {
			t.Fatalf("point %v has norm %v, want 1", p, n)
		}
	}
}

// TestTrueHypervolume checks the closed forms against the hypervolume of a
// dense sample of the front, which approaches the continuous value from
// below as the sample gets denser.
func TestTrueHypervolume(t *testing.T) {
	tests := []struct {
		p    *Problem
		n    int
		tol  float64
		want float64
	}{
		{ZDT1(30), 100001, 1e-4, 0.876667},
		{ZDT2(30), 100001, 1e-4, 0.543333},
		{ZDT3(30), 100001, 1e-4, 1.331762},
		{CONSTR(), 100001, 1e-4, 5.332670},
	}
	for _, tc := range tests {
		got := tc.p.TrueHypervolume()
		if math.Abs(got-tc.want) > 5e-7 {
			t.Errorf("%s: TrueHypervolume() = %.7f, want %.6f", tc.p.Name, got, tc.want)
		}
		sample, err := indicator.Hypervolume(tc.p.Front(tc.n), tc.p.Reference())
		if err != nil {
			t.Fatal(err)
		}
		if sample > got+1e-12 || got-sample > tc.tol {
			t.Errorf("%s: hypervolume of %d front samples %.7f, want at most %.7f and within %v", tc.p.Name, tc.n, sample, got, tc.tol)
		}
	}
	if got, want := DTLZ2(3, 10).TrueHypervolume(), 1.331-math.Pi/6; got != want {
		t.Errorf("DTLZ2: got %v, want %v", got, want)
	}
}

// TestCONSTRFrontIsFeasible checks CONSTR's front points come from feasible
// decisions with both constraints satisfied and at least one active.
func TestCONSTRFrontIsFeasible(t *testing.T) {
	p := CONSTR()
	f, g := make([]float64, 2), make([]float64, 2)
	for _, z := range p.Front(50) {
		x := []float64{z[0], max(0, 6-9*z[0])} // smallest feasible x2
		p.Evaluate(x, f, g)
		if g[0] > 1e-12 || g[1] > 1e-12 {
			t.Fatalf("front point %v: constraints %v, want <= 0", z, g)
		}
		if math.Abs(f[1]-z[1]) > 1e-9 {
			t.Fatalf("front point %v: f2 = %v from x = %v", z, f[1], x)
		}
	}
}

func TestMOOAndFunc(t *testing.T) {
	p := CONSTR()
	mp := p.MOO()
	if err := mp.Validate(); err != nil {
		t.Fatal(err)
	}
	if mp.Variables[0].Lower != 0.1 || mp.Variables[1].Upper != 5 || len(mp.Constraints) != 2 {
		t.Errorf("CONSTR as moo.Problem: %+v", mp)
	}
	e, err := p.Func()(context.Background(), moo.Candidate{X: []float64{0.5, 1}})
	if err != nil {
		t.Fatal(err)
	}
	// g1 = 6 - 1 - 4.5 = 0.5, g2 = 1 + 1 - 4.5 = -2.5.
	if e.Constraints[0] != 0.5 || e.Constraints[1] != -2.5 {
		t.Errorf("constraints %v, want [0.5 -2.5]", e.Constraints)
	}
}
