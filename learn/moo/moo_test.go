package moo

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestVariable(t *testing.T) {
	iv := Variable{Name: "k", Lower: 1, Upper: 20, Kind: Integer}
	rv := Variable{Name: "x", Lower: -1, Upper: 1}
	tests := []struct {
		v        Variable
		in, want float64
	}{
		{iv, 3.4, 3}, {iv, 3.5, 4}, {iv, 4.5, 4}, // half to even
		{iv, 0.5, 1}, {iv, 20.5, 20}, {iv, -7, 1}, {iv, 99, 20},
		{iv, math.NaN(), 1},
		{rv, 0.25, 0.25}, {rv, -2, -1}, {rv, 1.5, 1}, {rv, math.Inf(1), 1},
	}
	for _, tc := range tests {
		if got := tc.v.Repair(tc.in); got != tc.want {
			t.Errorf("%s.Repair(%v) = %v, want %v", tc.v.Name, tc.in, got, tc.want)
		}
		if !tc.v.Contains(tc.v.Repair(tc.in)) {
			t.Errorf("%s: repaired %v not contained", tc.v.Name, tc.in)
		}
	}
	if iv.Contains(2.5) || iv.Contains(21) || !iv.Contains(20) || rv.Contains(1.01) {
		t.Error("Contains accepts or rejects the wrong values")
	}
	if Integer.String() != "int" || Real.String() != "real" || Maximize.String() != "max" || Minimize.String() != "min" {
		t.Error("kind or sense spelled differently from the --param/--objective syntax")
	}
}

func TestProblemValidate(t *testing.T) {
	obj := []Objective{{Name: "f"}}
	tests := []struct {
		p       Problem
		contain string
	}{
		{Problem{Objectives: obj}, "no variables"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1}}}, "no objectives"},
		{Problem{Variables: []Variable{{Upper: 1}}, Objectives: obj}, "empty name"},
		{Problem{Variables: []Variable{{Name: "a", Lower: math.Inf(-1), Upper: 1}}, Objectives: obj}, "must be finite"},
		{Problem{Variables: []Variable{{Name: "a", Lower: 1, Upper: 1}}, Objectives: obj}, "lower bound 1 must be less than upper bound 1"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1, Kind: 7}}, Objectives: obj}, "unknown kind"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1e17, Kind: Integer}}, Objectives: obj}, "±2^53"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1}}, Objectives: []Objective{{Name: "f"}, {Name: "f", Sense: Maximize}}}, "objective \"f\" appears twice"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1}}, Objectives: []Objective{{Name: "f", Sense: 3}}}, "unknown sense"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1}}, Objectives: []Objective{{}}}, "objective 0 has an empty name"},
		{Problem{Variables: []Variable{{Name: "a", Upper: 1}}, Objectives: obj, Constraints: []Constraint{{}}}, "constraint 0 has an empty name"},
	}
	for _, tc := range tests {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.contain) {
			t.Errorf("got %v, want an error containing %q", err, tc.contain)
		}
	}
}

func perfProblem() Problem {
	return Problem{
		Variables:   []Variable{{Name: "vegas.alpha", Lower: 1, Upper: 20, Kind: Integer}, {Name: "vegas.beta", Lower: 1, Upper: 30, Kind: Integer}},
		Objectives:  []Objective{{Name: "goodput_mbps", Sense: Maximize}, {Name: "qdelay_mean_ms"}},
		Constraints: []Constraint{{Name: "a"}, {Name: "b"}},
	}
}

func TestNewIndividual(t *testing.T) {
	p := perfProblem()
	c := Candidate{X: []float64{2, 4}, Generation: 3, Index: 5, Seed: 9}
	e := Evaluation{Objectives: []float64{5, 60}, Constraints: []float64{-1, 0}}
	ind, err := p.NewIndividual(c, e)
	if err != nil || !ind.Feasible() || ind.Violation != 0 || ind.Generation != 3 || ind.Index != 5 || ind.Seed != 9 {
		t.Fatalf("got %+v, %v", ind, err)
	}
	e.Objectives[0] = 99
	if ind.Objectives[0] != 5 {
		t.Error("the individual shares the evaluation's slice")
	}
	// Violation sums the positive parts; objectives of an infeasible
	// candidate may be NaN.
	ind, err = p.NewIndividual(c, Evaluation{Objectives: []float64{math.NaN(), math.Inf(1)}, Constraints: []float64{0.5, 2}})
	if err != nil || ind.Violation != 2.5 || ind.Feasible() {
		t.Errorf("infeasible: got %+v, %v; want violation 2.5", ind, err)
	}
	bad := []struct {
		e       Evaluation
		contain string
	}{
		{Evaluation{Objectives: []float64{1}}, "got 1 objective values, want 2 (goodput_mbps, qdelay_mean_ms)"},
		{Evaluation{Objectives: []float64{1, 2}, Constraints: []float64{0}}, "got 1 constraint values, want 2"},
		{Evaluation{Objectives: []float64{1, 2}, Constraints: []float64{0, math.NaN()}}, "constraint \"b\" is NaN"},
		{Evaluation{Objectives: []float64{1, math.Inf(1)}, Constraints: []float64{0, 0}}, "objective \"qdelay_mean_ms\" is +Inf"},
	}
	for _, tc := range bad {
		_, err := p.NewIndividual(c, tc.e)
		if err == nil || !strings.Contains(err.Error(), tc.contain) || !strings.Contains(err.Error(), "candidate 5 of generation 3") {
			t.Errorf("got %v, want an error naming candidate 5 of generation 3 and containing %q", err, tc.contain)
		}
	}
}

func ind(x0, x1, goodput, delay, viol float64) Individual {
	return Individual{X: []float64{x0, x1}, Objectives: []float64{goodput, delay}, Violation: viol}
}

func xs(inds []Individual) [][]float64 {
	var out [][]float64
	for _, i := range inds {
		out = append(out, i.X)
	}
	return out
}

// TestArchive walks the archive through a hand-computed sequence with one
// maximised (goodput) and one minimised (delay) objective.
func TestArchive(t *testing.T) {
	a := NewArchive(perfProblem())
	steps := []struct {
		in      Individual
		entered bool
		members [][]float64 // X of members, ordered best goodput first
	}{
		{ind(1, 2, 4, 60, 0), true, [][]float64{{1, 2}}},
		{ind(9, 9, 100, 1, 1), false, [][]float64{{1, 2}}},               // infeasible
		{ind(2, 3, 3, 70, 0), false, [][]float64{{1, 2}}},                // dominated
		{ind(3, 4, 6, 100, 0), true, [][]float64{{3, 4}, {1, 2}}},        // trade-off
		{ind(1, 2, 4, 60, 0), false, [][]float64{{3, 4}, {1, 2}}},        // exact copy of a member
		{ind(1, 2, 5, 80, 0), true, [][]float64{{3, 4}, {1, 2}}},         // same X, another trade-off: the first is reported
		{ind(5, 6, 4, 60, 0), true, [][]float64{{3, 4}, {1, 2}, {5, 6}}}, // same objectives, other X: kept
		{ind(7, 8, 6, 50, 0), true, [][]float64{{7, 8}}},                 // dominates all three
		{ind(8, 9, 6, 50, 0), true, [][]float64{{7, 8}, {8, 9}}},         // ties sorted by insertion
		{ind(4, 5, 6.5, 50, 0), true, [][]float64{{4, 5}}},               // dominates both
	}
	for i, s := range steps {
		if got := a.Add(s.in); got != s.entered {
			t.Errorf("step %d: Add returned %v, want %v", i, got, s.entered)
		}
		got := xs(a.Members())
		if !slices.EqualFunc(got, s.members, func(x, y []float64) bool { return slices.Equal(x, y) }) {
			t.Errorf("step %d: members %v, want %v", i, got, s.members)
		}
		if a.Len() != len(s.members) {
			t.Errorf("step %d: Len %d, want %d", i, a.Len(), len(s.members))
		}
	}
}

// TestParetoSetMatchesBruteForce compares ParetoSet with the definition on
// random integer-valued objectives, with duplicates and infeasible points.
func TestParetoSetMatchesBruteForce(t *testing.T) {
	p := perfProblem()
	r := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 200; trial++ {
		var inds []Individual
		for i := 0; i < 1+r.IntN(30); i++ {
			viol := 0.0
			if r.IntN(4) == 0 {
				viol = 1
			}
			inds = append(inds, ind(float64(r.IntN(6)), float64(r.IntN(6)), float64(r.IntN(8)), float64(r.IntN(8)), viol))
		}
		got := ParetoSet(p, inds)
		// Brute force: feasible and not dominated by any feasible one; then,
		// of those with the same X, the first.
		var want []Individual
		for _, a := range inds {
			if a.Feasible() && isNonDominated(a, inds) &&
				!slices.ContainsFunc(want, func(w Individual) bool { return slices.Equal(w.X, a.X) }) {
				want = append(want, a)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d: got %d members %v, want %d %v", trial, len(got), xs(got), len(want), xs(want))
		}
		for _, w := range want {
			if !slices.ContainsFunc(got, func(g Individual) bool { return slices.Equal(g.X, w.X) && slices.Equal(g.Objectives, w.Objectives) }) {
				t.Fatalf("trial %d: member %v %v missing from %v", trial, w.X, w.Objectives, xs(got))
			}
		}
	}
}

func isNonDominated(a Individual, inds []Individual) bool {
	for _, b := range inds {
		if b.Feasible() && b.Objectives[0] >= a.Objectives[0] && b.Objectives[1] <= a.Objectives[1] &&
			(b.Objectives[0] > a.Objectives[0] || b.Objectives[1] < a.Objectives[1]) {
			return false
		}
	}
	return true
}

// TestHypervolumeUnits: maximise goodput, minimise delay, reference
// (0 Mbps, 200 ms). Boxes [0,6]x[100,200] (600) and [0,4]x[60,200] (560)
// overlap in [0,4]x[100,200] (400): 760 Mbps*ms. Infeasible points and points
// beyond the reference add nothing.
func TestHypervolumeUnits(t *testing.T) {
	p := perfProblem()
	inds := []Individual{ind(0, 0, 4, 60, 0), ind(0, 1, 6, 100, 0), ind(0, 2, 50, 1, 3), ind(0, 3, -1, 10, 0)}
	got, err := Hypervolume(p, inds, []float64{0, 200})
	if err != nil || got != 760 {
		t.Errorf("got %v, %v; want 760", got, err)
	}
	if _, err := Hypervolume(p, inds, []float64{0}); err == nil {
		t.Error("a short reference point must be rejected")
	}
}

func TestHypervolumeTrace(t *testing.T) {
	p := perfProblem()
	at := func(gen int, i Individual) Individual { i.Generation = gen; return i }
	evals := []Individual{
		at(1, ind(0, 0, 4, 60, 0)),  // 4 x 140 = 560
		at(1, ind(0, 1, 1, 199, 1)), // infeasible
		at(2, ind(0, 2, 2, 150, 0)), // dominated: no change
		at(3, ind(0, 3, 6, 100, 0)), // 760 as above
		at(4, ind(0, 4, 10, 10, 0)), // dominates everything: 10 x 190
	}
	got, err := HypervolumeTrace(p, evals, []float64{0, 200})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{560, 560, 760, 1900}; !slices.Equal(got, want) {
		t.Errorf("trace %v, want %v", got, want)
	}
	if _, err := HypervolumeTrace(p, []Individual{ind(0, 0, 1, 1, 0)}, []float64{0, 200}); err == nil {
		t.Error("generation 0 must be rejected")
	}
}

func TestNadirReference(t *testing.T) {
	p := perfProblem()
	inds := []Individual{ind(0, 0, 4, 60, 0), ind(0, 1, 6, 100, 0), ind(0, 2, 0, 500, 2)}
	ref, vol, err := NadirReference(p, inds, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	// Goodput (max): worst 4, range 2, so 4 - 0.2 = 3.8; delay: worst 100,
	// range 40, so 104. Volume: (6 - 3.8) * (104 - 60).
	if math.Abs(ref[0]-3.8) > 1e-12 || math.Abs(ref[1]-104) > 1e-12 || math.Abs(vol-2.2*44) > 1e-9 {
		t.Errorf("got ref %v volume %v, want [3.8 104] and %v", ref, vol, 2.2*44)
	}
	// The normalised hypervolume lies in [0, 1].
	hv, err := Hypervolume(p, inds, ref)
	if err != nil || hv/vol <= 0 || hv/vol > 1 {
		t.Errorf("normalised hypervolume %v, %v; want in (0, 1]", hv/vol, err)
	}
	ref, _, _ = NadirReference(p, inds[:1], 0.1) // zero range: margin * max(1, |worst|)
	if math.Abs(ref[0]-3.6) > 1e-12 || math.Abs(ref[1]-66) > 1e-12 {
		t.Errorf("single point: ref %v, want [3.6 66]", ref)
	}
	if _, _, err := NadirReference(p, inds[2:], 0.1); err == nil {
		t.Error("no feasible individual: want an error")
	}
	if _, _, err := NadirReference(p, inds, -1); err == nil {
		t.Error("negative margin: want an error")
	}
}

// randomSearch is a minimal Method used to test Run independently of
// NSGA-II: it proposes uniform points and keeps the last batch.
type randomSearch struct {
	p       Problem
	r       *rand.Rand
	n, gen  int
	pending []Candidate
	pop     []Individual
}

func (m *randomSearch) Problem() Problem         { return m.p }
func (m *randomSearch) PopulationSize() int      { return m.n }
func (m *randomSearch) Generation() int          { return m.gen }
func (m *randomSearch) Population() []Individual { return slices.Clone(m.pop) }
func (m *randomSearch) Ask() []Candidate {
	if m.pending == nil {
		size := m.n
		if m.gen%2 == 1 {
			size = 0 // every other batch empty: Run must cope
		}
		for i := 0; i < size; i++ {
			x := make([]float64, len(m.p.Variables))
			for j, v := range m.p.Variables {
				x[j] = v.Repair(v.Lower + m.r.Float64()*(v.Upper-v.Lower))
			}
			m.pending = append(m.pending, Candidate{X: x, Generation: m.gen + 1, Index: i, Seed: m.r.Uint64()})
		}
		if m.pending == nil {
			m.pending = []Candidate{}
		}
	}
	return m.pending
}
func (m *randomSearch) Tell(evals []Evaluation) ([]Individual, error) {
	var out []Individual
	for i, e := range evals {
		ind, err := m.p.NewIndividual(m.pending[i], e)
		if err != nil {
			return nil, err
		}
		out = append(out, ind)
	}
	if len(out) > 0 {
		m.pop = out
	}
	m.pending = nil
	m.gen++
	return out, nil
}

func TestRunWithAnotherMethod(t *testing.T) {
	p := perfProblem()
	p.Constraints = nil
	f := func(_ context.Context, c Candidate) (Evaluation, error) {
		return Evaluation{Objectives: []float64{c.X[0], c.X[0] * c.X[1]}}, nil
	}
	var results []*Result
	for _, workers := range []int{1, 3} {
		m := &randomSearch{p: p, r: rand.New(rand.NewPCG(1, 2)), n: 8}
		res, err := Run(context.Background(), m, f, Settings{Generations: 5, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	res := results[0]
	if len(res.Evaluated) != 24 || res.Generations != 5 {
		t.Errorf("got %d evaluations over %d generations, want 24 over 5", len(res.Evaluated), res.Generations)
	}
	if !slices.EqualFunc(res.Evaluated, results[1].Evaluated, func(a, b Individual) bool { return slices.Equal(a.X, b.X) }) {
		t.Error("1 and 3 workers evaluated different points")
	}
	if want := ParetoSet(p, res.Evaluated); !slices.EqualFunc(res.Pareto, want, func(a, b Individual) bool { return slices.Equal(a.X, b.X) }) {
		t.Errorf("Result.Pareto %v, want the Pareto set of all evaluations %v", xs(res.Pareto), xs(want))
	}
}

// TestRunHypervolume checks the per-generation hypervolume of Run against
// HypervolumeTrace on the same evaluations, and that it never decreases.
func TestRunHypervolume(t *testing.T) {
	p := perfProblem()
	p.Constraints = nil
	f := func(_ context.Context, c Candidate) (Evaluation, error) {
		return Evaluation{Objectives: []float64{c.X[0], c.X[0] * c.X[1] / 20}}, nil
	}
	ref := []float64{0, 40}
	var recorded []float64
	m := &randomSearch{p: p, r: rand.New(rand.NewPCG(3, 4)), n: 6}
	res, err := Run(context.Background(), m, f, Settings{Generations: 9, Reference: ref, Recorder: func(g *Generation) error {
		recorded = append(recorded, g.Hypervolume)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := HypervolumeTrace(p, res.Evaluated, ref)
	if err != nil {
		t.Fatal(err)
	}
	// Empty generations (every other one here) have no evaluations, so the
	// trace, indexed by generation, has the same length as Run's.
	if !slices.Equal(res.Hypervolume, want) || !slices.Equal(recorded, want) {
		t.Errorf("Run hypervolumes %v, recorded %v, want %v", res.Hypervolume, recorded, want)
	}
	if !slices.IsSorted(res.Hypervolume) || res.Hypervolume[len(res.Hypervolume)-1] <= 0 {
		t.Errorf("hypervolume trace %v: want non-decreasing and positive", res.Hypervolume)
	}
	if _, err := Run(context.Background(), m, f, Settings{Generations: 10, Reference: []float64{1}}); err == nil {
		t.Error("a short Reference must be rejected")
	}
	if _, err := Run(context.Background(), m, f, Settings{Generations: 10, Reference: []float64{1, math.NaN()}}); err == nil {
		t.Error("a NaN Reference must be rejected")
	}
}
