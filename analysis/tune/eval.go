package tune

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/moo"
)

// Evaluator simulates parameter vectors on a set of cases and reports the
// metrics a Problem needs, averaged over the cases. Simulations are
// deterministic (each case has a fixed seed: common random numbers across
// candidates), so results are cached by parameter vector: the optimiser
// revisits points, and the baseline is usually in the first population.
// An Evaluator is safe for concurrent use.
type Evaluator struct {
	p     *Problem
	cases []Case
	limit moo.Limiter

	mu    sync.Mutex
	cache map[string]*Scores

	sims, hits atomic.Int64
}

// Scores are the metrics of one parameter vector.
type Scores struct {
	// X is the parameter vector.
	X []float64
	// PerCase[k][i] is metric i (Problem.Metrics order) in case k; NaN
	// where the metric is undefined in that case.
	PerCase [][]float64
	// Means[i] is metric i averaged over the cases (summed in case order,
	// so it does not depend on which simulation finished first). When
	// some metric is undefined in some case, its mean is NaN.
	Means []float64
	// Undefined is the fraction of cases in which some metric was
	// undefined; Reason says why for the first such case.
	Undefined float64
	Reason    string

	done chan struct{}
	err  error
}

// NewEvaluator returns an evaluator running at most jobs simulations at
// once (0: GOMAXPROCS) over cases.
func NewEvaluator(p *Problem, cases []Case, jobs int) (*Evaluator, error) {
	if len(cases) == 0 {
		return nil, fmt.Errorf("no case to evaluate on")
	}
	if jobs < 0 {
		return nil, fmt.Errorf("jobs %d: want 0 (all cores) or more", jobs)
	}
	return &Evaluator{p: p, cases: cases, limit: moo.NewLimiter(jobs), cache: map[string]*Scores{}}, nil
}

// Simulations returns the number of simulations run so far, and
// CacheHits the number of evaluations answered from the cache.
func (e *Evaluator) Simulations() int64 { return e.sims.Load() }

// CacheHits returns the number of evaluations answered from the cache.
func (e *Evaluator) CacheHits() int64 { return e.hits.Load() }

func key(x []float64) string {
	b := make([]byte, 8*len(x))
	for i, v := range x {
		if v == 0 {
			v = 0 // -0 and +0 are the same parameter value
		}
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return string(b)
}

// Scores simulates x on every case (or returns the cached result). A
// simulation error (a scenario the parameters make unbuildable, a
// cancelled context) is returned naming the case.
func (e *Evaluator) Scores(ctx context.Context, x []float64) (*Scores, error) {
	k := key(x)
	e.mu.Lock()
	s, ok := e.cache[k]
	if !ok {
		s = &Scores{X: append([]float64(nil), x...), done: make(chan struct{})}
		e.cache[k] = s
	}
	e.mu.Unlock()
	if ok {
		e.hits.Add(1)
		select {
		case <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s, s.err
	}
	s.err = e.run(ctx, s)
	if s.err != nil {
		// Do not keep a failure caused by cancellation: a later run with
		// a live context must simulate again.
		e.mu.Lock()
		delete(e.cache, k)
		e.mu.Unlock()
	}
	close(s.done)
	return s, s.err
}

func (e *Evaluator) run(ctx context.Context, s *Scores) error {
	n := len(e.cases)
	metrics := e.p.metrics
	s.PerCase = make([][]float64, n)
	reasons := make([]string, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for k := range n {
		select {
		case e.limit <- struct{}{}:
		case <-ctx.Done():
			errs[k] = ctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-e.limit }()
			defer func() {
				if r := recover(); r != nil {
					errs[k] = fmt.Errorf("panic: %v", r)
					cancel()
				}
			}()
			res, err := e.simulate(ctx, e.cases[k], s.X)
			if err != nil {
				errs[k] = err
				cancel()
				return
			}
			vals := make([]float64, len(metrics))
			for i, m := range metrics {
				v, err := m.Value(res)
				if err != nil {
					v = math.NaN()
					if reasons[k] == "" {
						reasons[k] = err.Error()
					}
				}
				vals[i] = v
			}
			s.PerCase[k] = vals
		})
	}
	wg.Wait()
	// A failure cancels the other simulations: report it rather than the
	// cancellations it caused.
	var first error
	for k, err := range errs {
		if err == nil {
			continue
		}
		err = fmt.Errorf("case %s, %s: %w", e.cases[k].Name, e.p.FormatX(s.X), err)
		if !isCancel(err) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	s.Means = make([]float64, len(metrics))
	undefined := 0
	for k, vals := range s.PerCase {
		if reasons[k] != "" {
			undefined++
			if s.Reason == "" {
				s.Reason = e.cases[k].Name + ": " + reasons[k]
			}
		}
		for i, v := range vals {
			s.Means[i] += v
		}
	}
	for i := range s.Means {
		s.Means[i] /= float64(n)
	}
	s.Undefined = float64(undefined) / float64(n)
	return nil
}

func isCancel(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// simulate runs case c with parameters x on a clone of its scenario.
func (e *Evaluator) simulate(ctx context.Context, c Case, x []float64) (*experiment.Result, error) {
	s := c.Scenario.Clone()
	if err := e.p.Apply(s, x); err != nil {
		return nil, err
	}
	e.sims.Add(1)
	return Simulate(ctx, s)
}

// Simulate builds and runs a validated scenario, checking ctx every 100 ms
// of simulated time so that an interrupt stops a long run promptly.
func Simulate(ctx context.Context, s *scenario.Scenario) (*experiment.Result, error) {
	n, err := network.Build(s)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := n.RunContext(ctx); err != nil {
		return nil, err
	}
	return experiment.Summarize(n, time.Since(start)), nil
}

// Func returns the moo.Func that scores candidates: constraints on the
// parameters alone are checked first and a candidate violating one is not
// simulated (its objectives are NaN, which the optimiser never reads, and
// constraints on metrics count as satisfied, so that its violation measures
// how far its parameters are from feasible). Otherwise the candidate is
// simulated on every case and its objectives and metric constraints are
// computed from the mean metrics.
func (e *Evaluator) Func() moo.Func {
	return func(ctx context.Context, c moo.Candidate) (moo.Evaluation, error) {
		if g, infeasible := e.p.paramConstraints(c.X); infeasible {
			obj := make([]float64, len(e.p.Objectives))
			for j := range obj {
				obj[j] = math.NaN()
			}
			return moo.Evaluation{Objectives: obj, Constraints: g}, nil
		}
		s, err := e.Scores(ctx, c.X)
		if err != nil {
			return moo.Evaluation{}, err
		}
		return e.p.evaluation(c.X, s.Means, s.Undefined), nil
	}
}
