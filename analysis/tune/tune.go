// Package tune tunes any congestion controller's parameters (in fact any
// numeric scenario field) for several objectives at once, by NSGA-II
// (moo/nsga2) over simulations: each candidate parameter set is simulated on
// a set of cases (scenarios, trace pieces, seeds) and scored by the mean of
// metrics of the run summary (experiment.Result), such as goodput and
// queueing delay. It is the engine of `cclab tune`.
//
// The pieces:
//   - Spec and NewProblem: the --param, --objective and --constraint
//     arguments checked against the scenarios, the controllers' parameter
//     ranges and the metric namespace (LookupMetric), with the baseline
//     ("default") parameter values.
//   - Cases: scenarios expanded over trace files, trace pieces and seeds.
//   - Evaluator: deterministic, cached, parallel simulation of parameter
//     vectors on cases, at most Jobs simulations at once.
//   - Run: NSGA-II driven by moo.Run, with the baseline seeded into the
//     first population and evaluated for reference, the Pareto set of all
//     evaluations and the hypervolume per generation.
//   - Result.Holdout: the baseline and every Pareto point scored on cases
//     the tuning never saw; Problem.Beats checks "better by a margin".
//   - Result.WriteDir, Result.Summary: tables, CSV, JSON and plots.
//
// Determinism: the optimiser draws from one seeded stream on one
// goroutine, every case has a fixed seed, and means are summed in case
// order, so the same seed gives the same evaluations, front and
// hypervolume whatever the number of jobs.
package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/nsga2"
	"github.com/cclab/cclab/learn/moo/operator"
)

// Options configures Run.
type Options struct {
	// Pop is the population size [10, the Vegas paper's].
	Pop int
	// Gens is the number of generations, the initial population being
	// generation 1 as in pymoo [4, the paper's]; a run evaluates at most
	// Pop x Gens candidates.
	Gens int
	// Seed seeds the optimiser.
	Seed uint64
	// Jobs bounds the simulations running at once; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Jobs int
	// Crossover and Mutation name the variation operators (operator.
	// CrossoverNames, MutationNames) ["sbx", "pm": pymoo's defaults];
	// "mean" and "uniform" are the Vegas paper's.
	Crossover, Mutation string
	// NoSeedDefault leaves the baseline out of the first population (it is
	// still simulated, for reference).
	NoSeedDefault bool
	// Progress, if set, is called after each candidate's evaluation.
	Progress func(moo.Progress)
	// Generation, if set, is called after each generation.
	Generation func(*moo.Generation)
}

// Point is a parameter vector with its scores.
type Point struct {
	// X holds the parameters in Problem.Params order.
	X []float64
	// Objectives holds the mean objectives (Problem.Objectives order);
	// NaN for a candidate that was not simulated.
	Objectives []float64
	// Constraints and Violation are as in moo.Individual.
	Constraints []float64
	Violation   float64
	// Scores are the simulation results behind the objectives (nil if the
	// point was not simulated).
	Scores *Scores
}

// Feasible reports whether the point satisfies every constraint.
func (pt *Point) Feasible() bool { return pt.Violation <= 0 }

// Result is the outcome of Run.
type Result struct {
	Problem *Problem
	Options Options
	Cases   []Case
	// Evaluated lists every evaluation in order (moo.Result.Evaluated).
	Evaluated []moo.Individual
	// Pareto is the Pareto set of all evaluations, best first objective
	// first.
	Pareto []moo.Individual
	// Default is the baseline, simulated on the cases whether or not it
	// lies in the search space; nil when a parameter's baseline is
	// unknown.
	Default *Point
	// Reference is the hypervolume reference point (moo.NadirReference
	// with a 10% margin over every feasible evaluation and the baseline),
	// Volume the volume that normalises hypervolumes to [0, 1].
	Reference []float64
	Volume    float64
	// Hypervolume is the hypervolume of the Pareto set of the evaluations
	// up to each generation, in the objectives' units (non-decreasing).
	Hypervolume []float64
	// Simulations is the number of simulations run, CacheHits the
	// evaluations answered from the cache.
	Simulations, CacheHits int64
	// Wall is the run's wall-clock time.
	Wall time.Duration

	eval *Evaluator
}

// Run tunes p on cases.
func Run(ctx context.Context, p *Problem, cases []Case, o Options) (*Result, error) {
	if o.Pop == 0 {
		o.Pop = 10
	}
	if o.Gens == 0 {
		o.Gens = 4
	}
	switch {
	case o.Pop < 2:
		return nil, fmt.Errorf("population %d: want at least 2", o.Pop)
	case o.Gens < 1:
		return nil, fmt.Errorf("generations %d: want at least 1", o.Gens)
	}
	if o.Crossover == "" {
		o.Crossover = "sbx"
	}
	if o.Mutation == "" {
		o.Mutation = "pm"
	}
	cx, err := operator.CrossoverByName(o.Crossover)
	if err != nil {
		return nil, err
	}
	mut, err := operator.MutationByName(o.Mutation)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ev, err := NewEvaluator(p, cases, o.Jobs)
	if err != nil {
		return nil, err
	}
	settings := nsga2.Settings{PopSize: o.Pop, Crossover: cx, Mutation: mut}
	def := p.Default()
	if def != nil && !o.NoSeedDefault && inDomain(p, def) {
		settings.Initial = [][]float64{def}
	}
	opt, err := nsga2.New(p.MOO, settings, rand.NewPCG(o.Seed, 0x7475_6e65)) // "tune"
	if err != nil {
		return nil, err
	}
	ms := moo.Settings{
		Generations: o.Gens,
		// One goroutine per candidate; the evaluator's limiter runs the
		// simulations Jobs at a time, so all of a generation's simulations
		// are queued at once and no core idles while the last candidates
		// finish.
		Workers:  o.Pop,
		Progress: o.Progress,
	}
	if o.Generation != nil {
		ms.Recorder = func(g *moo.Generation) error { o.Generation(g); return nil }
	}
	mr, err := moo.Run(ctx, opt, ev.Func(), ms)
	if err != nil {
		return nil, err
	}
	r := &Result{Problem: p, Options: o, Cases: cases, Evaluated: mr.Evaluated, Pareto: mr.Pareto, eval: ev}
	if def != nil {
		if r.Default, err = ev.Point(ctx, def); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
	}
	if err := r.hypervolume(); err != nil {
		return nil, err
	}
	r.Simulations, r.CacheHits = ev.Simulations(), ev.CacheHits()
	r.Wall = time.Since(start)
	return r, nil
}

func inDomain(p *Problem, x []float64) bool {
	for i, v := range p.MOO.Variables {
		if !v.Contains(x[i]) {
			return false
		}
	}
	return true
}

// Point simulates x on the evaluator's cases (or takes it from the cache)
// and scores it. Constraints on the parameters do not prevent the
// simulation: the baseline is wanted even outside the search space.
func (e *Evaluator) Point(ctx context.Context, x []float64) (*Point, error) {
	s, err := e.Scores(ctx, x)
	if err != nil {
		return nil, err
	}
	ev := e.p.evaluation(x, s.Means, s.Undefined)
	pt := &Point{X: x, Objectives: ev.Objectives, Constraints: ev.Constraints, Scores: s}
	for _, g := range ev.Constraints {
		if g > 0 {
			pt.Violation += g
		}
	}
	return pt, nil
}

// Points scores every x at once, so that their simulations share the
// cores, and returns them in order.
func (e *Evaluator) Points(ctx context.Context, xs [][]float64) ([]*Point, error) {
	pts := make([]*Point, len(xs))
	errs := make([]error, len(xs))
	done := make(chan struct{})
	for i, x := range xs {
		go func() {
			pts[i], errs[i] = e.Point(ctx, x)
			done <- struct{}{}
		}()
	}
	for range xs {
		<-done
	}
	for _, err := range errs {
		if err != nil && !isCancel(err) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return pts, nil
}

// hypervolume sets the reference point and the hypervolume trace.
func (r *Result) hypervolume() error {
	p := r.Problem.MOO
	pts := r.Evaluated
	if r.Default != nil && r.Default.Feasible() {
		pts = append(pts[:len(pts):len(pts)], moo.Individual{X: r.Default.X, Objectives: r.Default.Objectives, Generation: 1})
	}
	ref, vol, err := moo.NadirReference(p, pts, 0.1)
	if err != nil {
		// No feasible point: nothing to measure.
		r.Hypervolume = make([]float64, 0)
		return nil
	}
	r.Reference, r.Volume = ref, vol
	r.Hypervolume, err = moo.HypervolumeTrace(p, r.Evaluated, ref)
	return err
}

// Evaluator returns the evaluator the run used, with its cache, to score
// more points on the tuning cases without repeating simulations.
func (r *Result) Evaluator() *Evaluator { return r.eval }

// Scores returns the simulation results of an evaluated parameter vector
// (from the cache), or nil if it was not simulated.
func (r *Result) Scores(x []float64) *Scores {
	if r.eval == nil {
		return nil
	}
	r.eval.mu.Lock()
	defer r.eval.mu.Unlock()
	s := r.eval.cache[key(x)]
	if s == nil || s.err != nil || s.Means == nil {
		return nil
	}
	return s
}

// Holdout is the baseline and the Pareto set scored on other cases.
type Holdout struct {
	Cases []Case
	// Default is the baseline on these cases (nil if unknown).
	Default *Point
	// Pareto[i] is Result.Pareto[i] on these cases.
	Pareto []*Point
	// Simulations is the number of simulations run.
	Simulations int64
}

// Holdout simulates the baseline and every Pareto point on cases, e.g.
// trace pieces the tuning never saw.
func (r *Result) Holdout(ctx context.Context, cases []Case, jobs int) (*Holdout, error) {
	ev, err := NewEvaluator(r.Problem, cases, jobs)
	if err != nil {
		return nil, err
	}
	h := &Holdout{Cases: cases, Pareto: make([]*Point, len(r.Pareto))}
	xs := make([][]float64, 0, len(r.Pareto)+1)
	for _, ind := range r.Pareto {
		xs = append(xs, ind.X)
	}
	if r.Default != nil {
		xs = append(xs, r.Default.X)
	}
	pts, err := ev.Points(ctx, xs)
	if err != nil {
		return nil, fmt.Errorf("held-out cases: %w", err)
	}
	copy(h.Pareto, pts)
	if r.Default != nil {
		h.Default = pts[len(pts)-1]
	}
	h.Simulations = ev.Simulations()
	return h, nil
}

// Beats reports whether objectives a are better than b by at least margin
// in objective j (in its sense: larger for a maximised objective) and no
// worse in any other objective. With margin 0 and j = -1 it is weak
// dominance.
func (p *Problem) Beats(a, b []float64, j int, margin float64) bool {
	for i, o := range p.MOO.Objectives {
		d := a[i] - b[i]
		if o.Sense == moo.Minimize {
			d = -d
		}
		if math.IsNaN(d) {
			return false
		}
		need := 0.0
		if i == j {
			need = margin
		}
		if d < need {
			return false
		}
	}
	return true
}

// BestGain returns the Pareto point with the largest improvement over the
// baseline in objective j (in its sense) among those no worse than the
// baseline in every other objective, and that improvement; -1 and NaN when
// there is no such point or no baseline.
func (h *Holdout) BestGain(p *Problem, j int) (int, float64) {
	best, gain := -1, math.NaN()
	if h.Default == nil {
		return best, gain
	}
	for i, pt := range h.Pareto {
		if !p.noWorseExcept(pt.Objectives, h.Default.Objectives, j) {
			continue
		}
		d := pt.Objectives[j] - h.Default.Objectives[j]
		if p.MOO.Objectives[j].Sense == moo.Minimize {
			d = -d
		}
		if best < 0 || d > gain {
			best, gain = i, d
		}
	}
	return best, gain
}

// noWorseExcept reports whether a is no worse than b in every objective
// but j.
func (p *Problem) noWorseExcept(a, b []float64, j int) bool {
	for i, o := range p.MOO.Objectives {
		if i == j {
			continue
		}
		d := a[i] - b[i]
		if o.Sense == moo.Minimize {
			d = -d
		}
		if !(d >= 0) {
			return false
		}
	}
	return true
}

// Grid returns every point of an all-integer search space that satisfies
// the constraints on parameters alone, in lexicographic order (the first
// parameter varying slowest), for an exhaustive check of what the
// optimiser finds. It fails for a real parameter or more than limit points.
func (p *Problem) Grid(limit int) ([][]float64, error) {
	size := 1.0
	for _, q := range p.Params {
		if q.Kind != moo.Integer {
			return nil, fmt.Errorf("grid: parameter %s is real; a grid needs int parameters", q.Name)
		}
		size *= q.Upper - q.Lower + 1
	}
	if size > float64(limit) {
		return nil, fmt.Errorf("grid: %.0f points exceed the limit of %d", size, limit)
	}
	var out [][]float64
	x := make([]float64, len(p.Params))
	var walk func(i int)
	walk = func(i int) {
		if i == len(x) {
			if _, infeasible := p.paramConstraints(x); !infeasible {
				out = append(out, slices.Clone(x))
			}
			return
		}
		for v := p.Params[i].Lower; v <= p.Params[i].Upper; v++ {
			x[i] = v
			walk(i + 1)
		}
	}
	walk(0)
	return out, nil
}
