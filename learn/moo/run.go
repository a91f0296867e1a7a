package moo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"

	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/moo/indicator"
)

// Func evaluates one candidate. Run calls it from Settings.Workers goroutines
// at once, so it must be safe for concurrent use; it must not modify c.X. It
// should return promptly with ctx.Err() once ctx is cancelled. An error stops
// the run; to mark a candidate as bad without stopping, report a positive
// constraint value instead.
type Func func(ctx context.Context, c Candidate) (Evaluation, error)

// Settings configures Run.
type Settings struct {
	// Generations is the total number of generations, counting the initial
	// population as generation 1 (pymoo's n_gen), so a run evaluates at most
	// PopulationSize * Generations candidates. Required, >= 1. If the method
	// has already completed some generations, Run continues up to this many.
	Generations int
	// Workers is the number of candidates evaluated at once; 0 means
	// runtime.GOMAXPROCS(0). Results do not depend on it.
	Workers int
	// Progress, if not nil, is called after each evaluation completes, from
	// the goroutine that called Run (never concurrently), for progress bars.
	Progress func(Progress)
	// Recorder, if not nil, is called after each generation from the
	// goroutine that called Run. It must not modify the data it is given
	// (individuals are shared with the optimiser); it may keep it. A non-nil
	// error stops the run and is returned.
	Recorder func(*Generation) error
	// Reference, if not nil, is the reference point, in the objectives'
	// units and senses (see Hypervolume), for the hypervolume of the
	// cumulative Pareto set after each generation (Generation.Hypervolume,
	// Result.Hypervolume). When it is not known before the run, compute the
	// same trace afterwards with NadirReference and HypervolumeTrace.
	Reference []float64
}

// Progress is a snapshot of a run's progress.
type Progress struct {
	// Generation is the 1-based generation being evaluated, of Generations.
	Generation, Generations int
	// Done is the number of evaluations completed so far in the run.
	Done int
	// Total is the expected number of evaluations of the whole run: exact for
	// the generations already asked for, PopulationSize for each later one
	// (an upper bound: the optimiser may propose fewer when it runs out of
	// new points).
	Total int
}

// Generation is what Run hands to Settings.Recorder after each generation.
type Generation struct {
	// Index is the 1-based generation number (1 is the initial population).
	Index int
	// Evaluations is the number of evaluations in the run so far.
	Evaluations int
	// Offspring are the individuals evaluated in this generation.
	Offspring []Individual
	// Population is the population after survival selection.
	Population []Individual
	// Front is the Pareto set of Population (feasible, non-dominated,
	// deduplicated), ordered as Archive.Members orders it.
	Front []Individual
	// Pareto is the number of individuals in the Pareto set of every
	// evaluation so far (Result.Pareto at this point).
	Pareto int
	// Hypervolume is the hypervolume of that Pareto set with respect to
	// Settings.Reference, or NaN without a reference.
	Hypervolume float64
}

// Result is the outcome of Run. When Run continues a method that had
// already completed generations, Evaluated, Pareto and Hypervolume cover only
// the generations run by this call.
type Result struct {
	// Evaluated lists every evaluation in order of generation and index.
	Evaluated []Individual
	// Pareto is the Pareto set of Evaluated (feasible, non-dominated,
	// deduplicated by X), ordered as Archive.Members orders it. It is the
	// run's answer; it is empty when no feasible candidate was found.
	Pareto []Individual
	// Population is the final population.
	Population []Individual
	// Generations is the number of generations completed.
	Generations int
	// Hypervolume holds, when Settings.Reference is set, the hypervolume of
	// the cumulative Pareto set after each generation run by this call (a
	// non-decreasing sequence); nil otherwise.
	Hypervolume []float64
}

// Run drives m until it has completed s.Generations generations, evaluating
// each batch with f on s.Workers goroutines. Candidates are handed out by
// index and their results stored by index, and the method draws all its
// random numbers on this goroutine, so the result for a given method state is
// the same whatever the number of workers and however the scheduler
// interleaves them.
//
// If ctx is cancelled, f fails, f panics, or the recorder fails, Run stops
// and returns the error together with the result of the generations completed
// so far (the interrupted generation is discarded). When several evaluations
// of a batch fail, the error of the lowest-indexed one is returned.
func Run(ctx context.Context, m Method, f Func, s Settings) (*Result, error) {
	switch {
	case m == nil:
		return nil, errors.New("moo: Run: nil method")
	case f == nil:
		return nil, errors.New("moo: Run: nil evaluation function")
	case s.Generations < 1:
		return nil, fmt.Errorf("moo: Run: Generations is %d; want at least 1", s.Generations)
	case s.Workers < 0:
		return nil, fmt.Errorf("moo: Run: Workers is %d; want 0 (all cores) or more", s.Workers)
	}
	p := m.Problem()
	var minRef []float64
	if s.Reference != nil {
		if len(s.Reference) != len(p.Objectives) {
			return nil, fmt.Errorf("moo: Run: Reference has %d values, want one per objective (%d)", len(s.Reference), len(p.Objectives))
		}
		for j, v := range s.Reference {
			if !isFinite(v) {
				return nil, fmt.Errorf("moo: Run: Reference value for %q is %v; want a finite number", p.Objectives[j].Name, v)
			}
		}
		minRef = p.Minimized(s.Reference, nil)
	}
	workers := s.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	archive := NewArchive(p)
	res := &Result{}
	finish := func() *Result {
		res.Pareto = archive.Members()
		res.Population = m.Population()
		res.Generations = m.Generation()
		return res
	}
	for m.Generation() < s.Generations {
		if err := ctx.Err(); err != nil {
			return finish(), err
		}
		batch := m.Ask()
		gen := m.Generation() + 1
		done := len(res.Evaluated)
		total := done + len(batch) + (s.Generations-gen)*m.PopulationSize()
		var progress func(int)
		if s.Progress != nil {
			progress = func(k int) {
				s.Progress(Progress{Generation: gen, Generations: s.Generations, Done: done + k, Total: total})
			}
		}
		evals, err := evaluate(ctx, f, batch, workers, progress)
		if err != nil {
			return finish(), err
		}
		inds, err := m.Tell(evals)
		if err != nil {
			return finish(), fmt.Errorf("moo: generation %d: %w", gen, err)
		}
		res.Evaluated = append(res.Evaluated, inds...)
		changed := false
		for _, ind := range inds {
			changed = archive.Add(ind) || changed
		}
		hv := math.NaN()
		if minRef != nil {
			if !changed && len(res.Hypervolume) > 0 {
				hv = res.Hypervolume[len(res.Hypervolume)-1]
			} else if hv, err = indicator.Hypervolume(archive.minimized(), minRef); err != nil {
				return finish(), fmt.Errorf("moo: generation %d: %w", gen, err)
			}
			res.Hypervolume = append(res.Hypervolume, hv)
		}
		if s.Recorder != nil {
			pop := m.Population()
			g := &Generation{
				Index:       gen,
				Evaluations: len(res.Evaluated),
				Offspring:   inds,
				Population:  pop,
				Front:       ParetoSet(p, pop),
				Pareto:      archive.Len(),
				Hypervolume: hv,
			}
			if err := s.Recorder(g); err != nil {
				return finish(), fmt.Errorf("moo: recorder at generation %d: %w", gen, err)
			}
		}
	}
	return finish(), nil
}

// evaluate runs f on every candidate of batch with up to workers goroutines
// and returns the evaluations by index. progress, if not nil, is called on
// this goroutine with the number completed after each completion.
func evaluate(ctx context.Context, f Func, batch []Candidate, workers int, progress func(int)) ([]Evaluation, error) {
	n := len(batch)
	evals := make([]Evaluation, n)
	errs := make([]error, n)
	if n == 0 {
		return evals, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make([]bool, n)
	var report func(done, total int)
	if progress != nil {
		report = func(done, _ int) { progress(done) }
	}
	par.Do(ctx, n, workers, report, func(_, i int) {
		ran[i] = true
		evals[i], errs[i] = call(ctx, f, batch[i])
		if errs[i] != nil {
			cancel() // no point finishing a failed batch
		}
	})
	// Jobs that never started were cut off by a failure or by the caller.
	for i := range n {
		if !ran[i] {
			errs[i] = ctx.Err()
		}
	}
	// Prefer a genuine failure to the cancellations it caused.
	var first error
	for i, err := range errs {
		if err == nil {
			continue
		}
		c := batch[i]
		err = fmt.Errorf("moo: evaluating candidate %d of generation %d (x = %v): %w", c.Index, c.Generation, c.X, err)
		if first == nil {
			first = err
		}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
	}
	if first != nil {
		return nil, first
	}
	return evals, nil
}

// call runs f, turning a panic into an error so that one bad candidate
// (a simulator bug hit by an odd parameter) does not take the process down
// without saying which candidate it was.
func call(ctx context.Context, f Func, c Candidate) (e Evaluation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f(ctx, c)
}
