package nsga2_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/nsga2"
	"github.com/cclab/cclab/learn/moo/operator"
	"github.com/cclab/cclab/learn/moo/problems"
)

func newOpt(t testing.TB, p moo.Problem, s nsga2.Settings, seed uint64) *nsga2.Optimizer {
	t.Helper()
	o, err := nsga2.New(p, s, rand.NewPCG(seed, 0))
	if err != nil {
		t.Fatalf("nsga2.New: %v", err)
	}
	return o
}

func run(t testing.TB, o moo.Method, f moo.Func, s moo.Settings) *moo.Result {
	t.Helper()
	res, err := moo.Run(context.Background(), o, f, s)
	if err != nil {
		t.Fatalf("moo.Run: %v", err)
	}
	return res
}

// vegasLike is a small integer problem shaped like the paper's: alpha in
// [1, 20], beta in [1, 30], alpha < beta, maximise alpha (a stand-in for
// throughput) and minimise beta (for delay). Its Pareto set is beta = alpha+1
// for alpha = 1..19: 19 points.
func vegasLike() (moo.Problem, moo.Func) {
	p := moo.Problem{
		Variables: []moo.Variable{
			{Name: "vegas.alpha", Lower: 1, Upper: 20, Kind: moo.Integer},
			{Name: "vegas.beta", Lower: 1, Upper: 30, Kind: moo.Integer},
		},
		Objectives:  []moo.Objective{{Name: "alpha", Sense: moo.Maximize}, {Name: "beta"}},
		Constraints: []moo.Constraint{{Name: "vegas.alpha < vegas.beta"}},
	}
	f := func(_ context.Context, c moo.Candidate) (moo.Evaluation, error) {
		a, b := c.X[0], c.X[1]
		g := a - b + 0.5 // a < b for integers
		if g > 0 {
			// Infeasible: skip the "simulation", objectives unused.
			return moo.Evaluation{Objectives: []float64{math.NaN(), math.NaN()}, Constraints: []float64{g}}, nil
		}
		return moo.Evaluation{Objectives: []float64{a, b}, Constraints: []float64{g}}, nil
	}
	return p, f
}

func TestNewErrors(t *testing.T) {
	good := problems.ZDT1(3).MOO()
	tests := []struct {
		name    string
		p       moo.Problem
		s       nsga2.Settings
		nilSrc  bool
		contain string
	}{
		{"nil source", good, nsga2.Settings{}, true, "nil random source"},
		{"pop 1", good, nsga2.Settings{PopSize: 1}, false, "PopSize 1; want at least 2"},
		{"crossover prob", good, nsga2.Settings{CrossoverProb: 1.5}, false, "CrossoverProb 1.5"},
		{"rounds", good, nsga2.Settings{MaxMatingRounds: -1}, false, "MaxMatingRounds -1"},
		{"bad SBX", good, nsga2.Settings{Crossover: operator.SBX{Eta: -1}}, false, "Eta -1"},
		{"bad PM", good, nsga2.Settings{Mutation: operator.Polynomial{Prob: 2}}, false, "Prob 2"},
		{"too many initial", good, nsga2.Settings{PopSize: 2, Initial: [][]float64{{0, 0, 0}, {1, 1, 1}, {0.5, 0.5, 0.5}}}, false, "3 initial points for a population of 2"},
		{"initial length", good, nsga2.Settings{Initial: [][]float64{{0, 0}}}, false, "initial point 0 has 2 values, want 3"},
		{"initial outside", good, nsga2.Settings{Initial: [][]float64{{0, 2, 0}}}, false, "x1 = 2 is outside the real range [0, 1]"},
		{"no variables", moo.Problem{Objectives: good.Objectives}, nsga2.Settings{}, false, "no variables"},
		{"no objectives", moo.Problem{Variables: good.Variables}, nsga2.Settings{}, false, "no objectives"},
		{"bad bounds", moo.Problem{Variables: []moo.Variable{{Name: "a", Lower: 2, Upper: 1}}, Objectives: good.Objectives}, nsga2.Settings{}, false, "lower bound 2 must be less than upper bound 1"},
		{"duplicate variable", moo.Problem{Variables: []moo.Variable{{Name: "a", Upper: 1}, {Name: "a", Upper: 1}}, Objectives: good.Objectives}, nsga2.Settings{}, false, "variable \"a\" appears twice"},
		{"fractional int bounds", moo.Problem{Variables: []moo.Variable{{Name: "a", Lower: 0.5, Upper: 3, Kind: moo.Integer}}, Objectives: good.Objectives}, nsga2.Settings{}, false, "whole-number bounds"},
	}
	for _, tc := range tests {
		var src rand.Source = rand.NewPCG(1, 2)
		if tc.nilSrc {
			src = nil
		}
		_, err := nsga2.New(tc.p, tc.s, src)
		if err == nil || !strings.Contains(err.Error(), tc.contain) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.contain)
		}
	}
	// An integer initial point must be whole.
	p, _ := vegasLike()
	if _, err := nsga2.New(p, nsga2.Settings{Initial: [][]float64{{2.5, 4}}}, rand.NewPCG(1, 1)); err == nil ||
		!strings.Contains(err.Error(), "vegas.alpha = 2.5 is outside the int range [1, 20]") {
		t.Errorf("fractional integer initial point: got %v", err)
	}
}

func TestAskTellProtocol(t *testing.T) {
	tp := problems.ZDT1(4)
	o := newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 6}, 1)
	if _, err := o.Tell(nil); err == nil || !strings.Contains(err.Error(), "without an outstanding Ask") {
		t.Errorf("Tell before Ask: got %v, want an error", err)
	}
	b1 := o.Ask()
	b2 := o.Ask()
	if len(b1) != 6 {
		t.Fatalf("initial batch has %d candidates, want 6", len(b1))
	}
	for i := range b1 {
		if !slices.Equal(b1[i].X, b2[i].X) || b1[i].Seed != b2[i].Seed || b1[i].Index != i || b1[i].Generation != 1 {
			t.Fatalf("Ask twice: candidate %d differs or is mislabelled: %+v vs %+v", i, b1[i], b2[i])
		}
	}
	b1[0].X[0] = 42 // the caller's copy; must not affect the optimiser
	evals := make([]moo.Evaluation, len(b2))
	for i, c := range b2 {
		evals[i].Objectives = make([]float64, 2)
		tp.Evaluate(c.X, evals[i].Objectives, nil)
	}
	if _, err := o.Tell(evals[:5]); err == nil || !strings.Contains(err.Error(), "got 5 evaluations for a batch of 6") {
		t.Errorf("short Tell: got %v", err)
	}
	bad := slices.Clone(evals)
	bad[3] = moo.Evaluation{Objectives: []float64{1, math.NaN()}}
	if _, err := o.Tell(bad); err == nil || !strings.Contains(err.Error(), "candidate 3 of generation 1: objective \"f2\" is NaN") {
		t.Errorf("NaN objective: got %v", err)
	}
	bad[3] = moo.Evaluation{Objectives: []float64{1}}
	if _, err := o.Tell(bad); err == nil || !strings.Contains(err.Error(), "got 1 objective values, want 2 (f1, f2)") {
		t.Errorf("missing objective: got %v", err)
	}
	if o.Generation() != 0 {
		t.Fatalf("failed Tells advanced the generation to %d", o.Generation())
	}
	inds, err := o.Tell(evals)
	if err != nil {
		t.Fatal(err)
	}
	if o.Generation() != 1 || len(inds) != 6 || len(o.Population()) != 6 {
		t.Fatalf("after Tell: generation %d, %d individuals, population %d; want 1, 6, 6", o.Generation(), len(inds), len(o.Population()))
	}
	if inds[0].X[0] == 42 {
		t.Error("modifying an asked candidate's X changed the optimiser's copy")
	}
	rank, crowd := o.Ranks()
	if len(rank) != 6 || len(crowd) != 6 {
		t.Fatalf("Ranks: %d and %d values, want 6", len(rank), len(crowd))
	}
	next := o.Ask()
	if len(next) != 6 || next[0].Generation != 2 {
		t.Errorf("second batch: %d candidates of generation %d, want 6 of generation 2", len(next), next[0].Generation)
	}
}

// jittered wraps an evaluation function with a delay drawn from the
// candidate's own seed, so that completion order differs between runs with
// different numbers of workers.
func jittered(f moo.Func) moo.Func {
	return func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		time.Sleep(time.Duration(c.Seed%40) * time.Microsecond)
		return f(ctx, c)
	}
}

// TestSameSeedSameFrontAnyWorkers runs the same seed with 1, 2 and 7 workers
// and jittered evaluation times, and requires bit-identical evaluations, final
// populations and Pareto sets; and checks that another seed gives a
// different run, so that the comparison is not vacuous.
func TestSameSeedSameFrontAnyWorkers(t *testing.T) {
	zdt := problems.ZDT1(10)
	vp, vf := vegasLike()
	cases := []struct {
		name string
		p    moo.Problem
		f    moo.Func
	}{
		{"ZDT1", zdt.MOO(), zdt.Func()},
		{"integer constrained", vp, vf},
	}
	for _, tc := range cases {
		var ref *moo.Result
		for _, workers := range []int{1, 2, 7} {
			o := newOpt(t, tc.p, nsga2.Settings{PopSize: 20}, 42)
			res := run(t, o, jittered(tc.f), moo.Settings{Generations: 15, Workers: workers})
			if ref == nil {
				ref = res
				continue
			}
			if d := diff(ref, res); d != "" {
				t.Errorf("%s: %d workers differ from 1 worker: %s", tc.name, workers, d)
			}
		}
		other := run(t, newOpt(t, tc.p, nsga2.Settings{PopSize: 20}, 43), tc.f, moo.Settings{Generations: 15, Workers: 1})
		if diff(ref, other) == "" {
			t.Errorf("%s: seeds 42 and 43 gave identical runs", tc.name)
		}
	}
}

func diff(a, b *moo.Result) string {
	same := func(x, y []moo.Individual) bool {
		return slices.EqualFunc(x, y, func(p, q moo.Individual) bool {
			return bitsEqual(p.X, q.X) && bitsEqual(p.Objectives, q.Objectives) && bitsEqual(p.Constraints, q.Constraints) &&
				p.Seed == q.Seed && p.Generation == q.Generation && p.Index == q.Index
		})
	}
	switch {
	case !same(a.Evaluated, b.Evaluated):
		return "evaluations"
	case !same(a.Population, b.Population):
		return "final population"
	case !same(a.Pareto, b.Pareto):
		return "Pareto set"
	}
	return ""
}

func bitsEqual(x, y []float64) bool {
	return slices.EqualFunc(x, y, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })
}

// TestMaximizeMirrorsMinimize: reporting -f2 as a maximised objective must
// give exactly the same search as minimising f2.
func TestMaximizeMirrorsMinimize(t *testing.T) {
	tp := problems.ZDT2(8)
	pMin := tp.MOO()
	pMax := tp.MOO()
	pMax.Objectives = []moo.Objective{{Name: "f1"}, {Name: "neg_f2", Sense: moo.Maximize}}
	fMax := func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		e, err := tp.Func()(ctx, c)
		e.Objectives[1] = -e.Objectives[1]
		return e, err
	}
	a := run(t, newOpt(t, pMin, nsga2.Settings{PopSize: 16}, 5), tp.Func(), moo.Settings{Generations: 20})
	b := run(t, newOpt(t, pMax, nsga2.Settings{PopSize: 16}, 5), fMax, moo.Settings{Generations: 20})
	for i := range a.Evaluated {
		if !bitsEqual(a.Evaluated[i].X, b.Evaluated[i].X) {
			t.Fatalf("evaluation %d: X %v when minimising, %v when maximising the negation", i, a.Evaluated[i].X, b.Evaluated[i].X)
		}
	}
	if len(a.Pareto) != len(b.Pareto) {
		t.Fatalf("Pareto sets of %d and %d", len(a.Pareto), len(b.Pareto))
	}
	for i := range a.Pareto {
		if a.Pareto[i].Objectives[1] != -b.Pareto[i].Objectives[1] {
			t.Fatalf("Pareto member %d: f2 %v vs -(%v)", i, a.Pareto[i].Objectives[1], b.Pareto[i].Objectives[1])
		}
	}
}

// TestIntegerOffspringAreNewAndWhole checks, generation by generation, that
// integer candidates are whole, in bounds, distinct within the batch and
// distinct from the current population (pymoo's duplicate elimination).
func TestIntegerOffspringAreNewAndWhole(t *testing.T) {
	p, f := vegasLike()
	for _, s := range []nsga2.Settings{
		{PopSize: 10},
		{PopSize: 10, Crossover: operator.Mean{}, Mutation: operator.Uniform{}},
	} {
		o := newOpt(t, p, s, 7)
		for gen := 0; gen < 30; gen++ {
			pop := o.Population()
			batch := o.Ask()
			if gen > 0 && len(batch) != 10 {
				t.Fatalf("%T: generation %d: batch of %d, want 10 (the space has 600 points)", s.Crossover, gen+1, len(batch))
			}
			evals := make([]moo.Evaluation, len(batch))
			for i, c := range batch {
				for j, v := range p.Variables {
					if !v.Contains(c.X[j]) {
						t.Fatalf("generation %d: %s = %v is not a whole number in [%v, %v]", gen+1, v.Name, c.X[j], v.Lower, v.Upper)
					}
				}
				for _, q := range batch[:i] {
					if slices.Equal(q.X, c.X) {
						t.Fatalf("generation %d: duplicate candidate %v in the batch", gen+1, c.X)
					}
				}
				for _, m := range pop {
					if slices.Equal(m.X, c.X) {
						t.Fatalf("generation %d: candidate %v duplicates a population member", gen+1, c.X)
					}
				}
				evals[i], _ = f(context.Background(), c)
			}
			if _, err := o.Tell(evals); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestIntegerBoundsReachable checks the half-unit widening: with uniform
// mutation (which ignores the old value) every integer in [1, 4], bounds
// included, is produced about equally often.
func TestIntegerBoundsReachable(t *testing.T) {
	p := moo.Problem{
		Variables:  []moo.Variable{{Name: "k", Lower: 1, Upper: 4, Kind: moo.Integer}, {Name: "x", Upper: 1}},
		Objectives: []moo.Objective{{Name: "f"}},
	}
	f := func(_ context.Context, c moo.Candidate) (moo.Evaluation, error) {
		return moo.Evaluation{Objectives: []float64{c.X[1]}}, nil
	}
	o := newOpt(t, p, nsga2.Settings{PopSize: 40, Crossover: operator.NoCrossover{}, Mutation: operator.Uniform{Prob: 1}}, 9)
	res := run(t, o, f, moo.Settings{Generations: 50})
	count := map[float64]int{}
	for _, ind := range res.Evaluated[40:] {
		count[ind.X[0]]++
	}
	n := float64(len(res.Evaluated) - 40)
	for k := 1.0; k <= 4; k++ {
		// About 1960 draws: a share's standard error is below 0.01.
		if share := float64(count[k]) / n; math.Abs(share-0.25) > 0.05 {
			t.Errorf("k = %v: share %.3f of offspring, want 0.25", k, share)
		}
	}
}

// TestExhaustedSpace: 3 x 3 integer points and a population of 10. The
// initial batch holds all 9 points, later batches are empty, the run
// finishes, and the Pareto set is the hand-computed one: minimising
// f1 = x + y and f2 = 2 - x + y, the points with y = 0.
func TestExhaustedSpace(t *testing.T) {
	p := moo.Problem{
		Variables:  []moo.Variable{{Name: "x", Upper: 2, Kind: moo.Integer}, {Name: "y", Upper: 2, Kind: moo.Integer}},
		Objectives: []moo.Objective{{Name: "f1"}, {Name: "f2"}},
	}
	f := func(_ context.Context, c moo.Candidate) (moo.Evaluation, error) {
		x, y := c.X[0], c.X[1]
		return moo.Evaluation{Objectives: []float64{x + y, 2 - x + y}}, nil
	}
	o := newOpt(t, p, nsga2.Settings{PopSize: 10, MaxMatingRounds: 5}, 1)
	res := run(t, o, f, moo.Settings{Generations: 4})
	if len(res.Evaluated) != 9 || res.Generations != 4 {
		t.Errorf("got %d evaluations over %d generations, want 9 over 4", len(res.Evaluated), res.Generations)
	}
	var got [][]float64
	for _, ind := range res.Pareto {
		got = append(got, ind.X)
	}
	want := [][]float64{{0, 0}, {1, 0}, {2, 0}}
	if !slices.EqualFunc(got, want, func(a, b []float64) bool { return slices.Equal(a, b) }) {
		t.Errorf("Pareto set %v, want %v", got, want)
	}
}

// TestInitialPoints: seeded points open the first batch, duplicates dropped.
func TestInitialPoints(t *testing.T) {
	p, _ := vegasLike()
	o := newOpt(t, p, nsga2.Settings{PopSize: 5, Initial: [][]float64{{2, 4}, {2, 4}, {1, 30}}}, 1)
	b := o.Ask()
	if len(b) != 5 || !slices.Equal(b[0].X, []float64{2, 4}) || !slices.Equal(b[1].X, []float64{1, 30}) {
		t.Errorf("first batch %v, want it to start with [2 4] and [1 30]", b)
	}
}

// TestPaperOperators runs the paper's operators (mean crossover, uniform
// mutation) at the paper's size, 10 individuals and 4 generations, and then
// longer, on the Vegas-like problem: every Pareto member must be on the true
// Pareto set (beta = alpha + 1), and the longer run must find most of it.
func TestPaperOperators(t *testing.T) {
	p, f := vegasLike()
	mean, _ := operator.CrossoverByName("mean")
	uniform, _ := operator.MutationByName("uniform")
	for _, tc := range []struct{ pop, gens, minFound int }{{10, 4, 1}, {20, 40, 15}} {
		o := newOpt(t, p, nsga2.Settings{PopSize: tc.pop, Crossover: mean, Mutation: uniform}, 11)
		res := run(t, o, f, moo.Settings{Generations: tc.gens})
		if len(res.Evaluated) != tc.pop*tc.gens {
			t.Errorf("%dx%d: %d evaluations, want %d", tc.pop, tc.gens, len(res.Evaluated), tc.pop*tc.gens)
		}
		onFront := 0
		for _, ind := range res.Pareto {
			if ind.X[1] == ind.X[0]+1 {
				onFront++
			}
		}
		if tc.gens > 4 && onFront != len(res.Pareto) {
			t.Errorf("%dx%d: %d of %d Pareto members have beta = alpha+1, want all", tc.pop, tc.gens, onFront, len(res.Pareto))
		}
		if onFront < tc.minFound {
			t.Errorf("%dx%d: found %d of the 19 Pareto-optimal points, want at least %d", tc.pop, tc.gens, onFront, tc.minFound)
		}
	}
}

func TestRunCancellation(t *testing.T) {
	tp := problems.ZDT1(5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	f := func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		if calls.Add(1) == 25 { // inside generation 3 of 10-member batches
			cancel()
		}
		if err := ctx.Err(); err != nil {
			return moo.Evaluation{}, err
		}
		return tp.Func()(ctx, c)
	}
	o := newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 10}, 1)
	res, err := moo.Run(ctx, o, f, moo.Settings{Generations: 50, Workers: 3})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want context.Canceled", err)
	}
	if res == nil || res.Generations != 2 || len(res.Evaluated) != 20 || len(res.Population) != 10 {
		t.Fatalf("partial result: %+v, want 2 generations and 20 evaluations", res)
	}
}

func TestRunEvaluationErrors(t *testing.T) {
	tp := problems.ZDT1(5)
	boom := errors.New("simulator exploded")
	failing := func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		if c.Generation == 2 && (c.Index == 3 || c.Index == 7) {
			return moo.Evaluation{}, boom
		}
		return tp.Func()(ctx, c)
	}
	o := newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 10}, 1)
	res, err := moo.Run(context.Background(), o, failing, moo.Settings{Generations: 5, Workers: 1})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "candidate 3 of generation 2") {
		t.Errorf("got error %v, want the simulator's error for candidate 3 of generation 2", err)
	}
	if res == nil || res.Generations != 1 {
		t.Errorf("partial result %+v, want generation 1 kept", res)
	}

	panicky := func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		if c.Index == 4 {
			panic("index out of range")
		}
		return tp.Func()(ctx, c)
	}
	_, err = moo.Run(context.Background(), newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 10}, 1), panicky, moo.Settings{Generations: 2, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "candidate 4 of generation 1") || !strings.Contains(err.Error(), "panic: index out of range") {
		t.Errorf("got error %v, want a panic report for candidate 4", err)
	}

	wrong := func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		return moo.Evaluation{Objectives: []float64{1, 2, 3}}, nil
	}
	_, err = moo.Run(context.Background(), newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 4}, 1), wrong, moo.Settings{Generations: 2})
	if err == nil || !strings.Contains(err.Error(), "got 3 objective values, want 2 (f1, f2)") {
		t.Errorf("got error %v, want one about the objective count", err)
	}
}

func TestRunSettingsErrors(t *testing.T) {
	tp := problems.ZDT1(5)
	o := newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 4}, 1)
	tests := []struct {
		m       moo.Method
		f       moo.Func
		s       moo.Settings
		contain string
	}{
		{nil, tp.Func(), moo.Settings{Generations: 1}, "nil method"},
		{o, nil, moo.Settings{Generations: 1}, "nil evaluation function"},
		{o, tp.Func(), moo.Settings{}, "Generations is 0; want at least 1"},
		{o, tp.Func(), moo.Settings{Generations: 1, Workers: -1}, "Workers is -1"},
	}
	for _, tc := range tests {
		if _, err := moo.Run(context.Background(), tc.m, tc.f, tc.s); err == nil || !strings.Contains(err.Error(), tc.contain) {
			t.Errorf("got error %v, want one containing %q", err, tc.contain)
		}
	}
}

// TestRecorderAndProgress checks the callbacks: the recorder sees each
// generation once, in order, with consistent counts and a non-dominated
// front; progress reports come in order, one per evaluation, never past the
// announced total; a recorder error stops the run.
func TestRecorderAndProgress(t *testing.T) {
	p, f := vegasLike()
	o := newOpt(t, p, nsga2.Settings{PopSize: 12}, 3)
	var gens []int
	var seen []moo.Individual
	var lastDone, progressCalls int
	rec := func(g *moo.Generation) error {
		gens = append(gens, g.Index)
		if len(g.Population) != 12 || g.Evaluations != 12*g.Index || len(g.Offspring) != 12 {
			t.Errorf("generation %d: population %d, evaluations %d, offspring %d; want 12, %d, 12", g.Index, len(g.Population), g.Evaluations, len(g.Offspring), 12*g.Index)
		}
		for _, a := range g.Front {
			if !a.Feasible() {
				t.Errorf("generation %d: infeasible front member %v", g.Index, a.X)
			}
			for _, b := range g.Front {
				if b.Objectives[0] >= a.Objectives[0] && b.Objectives[1] <= a.Objectives[1] && !slices.Equal(a.Objectives, b.Objectives) {
					t.Errorf("generation %d: front member %v dominated by %v", g.Index, a.Objectives, b.Objectives)
				}
			}
		}
		seen = append(seen, g.Offspring...)
		if want := len(moo.ParetoSet(p, seen)); g.Pareto != want {
			t.Errorf("generation %d: cumulative Pareto set of %d, want %d", g.Index, g.Pareto, want)
		}
		return nil
	}
	prog := func(pr moo.Progress) {
		progressCalls++
		if pr.Done != lastDone+1 || pr.Done > pr.Total || pr.Generations != 6 || pr.Generation != (pr.Done-1)/12+1 {
			t.Errorf("progress %+v after done=%d", pr, lastDone)
		}
		lastDone = pr.Done
	}
	res := run(t, o, f, moo.Settings{Generations: 6, Workers: 3, Recorder: rec, Progress: prog})
	if !slices.Equal(gens, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("recorder saw generations %v, want 1..6", gens)
	}
	if progressCalls != len(res.Evaluated) || lastDone != 72 {
		t.Errorf("%d progress calls ending at %d, want %d ending at 72", progressCalls, lastDone, len(res.Evaluated))
	}

	stop := errors.New("enough")
	o = newOpt(t, p, nsga2.Settings{PopSize: 12}, 3)
	res, err := moo.Run(context.Background(), o, f, moo.Settings{Generations: 6, Recorder: func(g *moo.Generation) error {
		if g.Index == 2 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || res.Generations != 2 {
		t.Errorf("recorder error: got %v after %d generations, want %v after 2", err, res.Generations, stop)
	}
}

// TestResumeRun: Run continues a method that has already completed
// generations, up to the total asked for.
func TestResumeRun(t *testing.T) {
	tp := problems.ZDT1(5)
	whole := run(t, newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 8}, 2), tp.Func(), moo.Settings{Generations: 6})
	o := newOpt(t, tp.MOO(), nsga2.Settings{PopSize: 8}, 2)
	first := run(t, o, tp.Func(), moo.Settings{Generations: 3})
	second := run(t, o, tp.Func(), moo.Settings{Generations: 6})
	got := append(first.Evaluated, second.Evaluated...)
	if len(got) != len(whole.Evaluated) {
		t.Fatalf("resumed run evaluated %d, want %d", len(got), len(whole.Evaluated))
	}
	for i := range got {
		if !bitsEqual(got[i].X, whole.Evaluated[i].X) {
			t.Fatalf("evaluation %d differs between a resumed and a whole run", i)
		}
	}
}
