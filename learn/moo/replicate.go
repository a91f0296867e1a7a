package moo

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Limiter bounds how many replications run at once across every Func built
// by Replicate with it. Share one Limiter between all candidates of a run.
type Limiter chan struct{}

// NewLimiter returns a Limiter admitting n replications at once; n = 0 means
// runtime.GOMAXPROCS(0).
func NewLimiter(n int) Limiter {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return make(Limiter, n)
}

// Replicate returns a Func that evaluates a candidate n times, calling
// run(ctx, c, k) for k = 0..n-1 (one scenario, trace or seed each), and
// reports the mean of each objective and of each constraint value. The means
// are summed in k order, so they do not depend on which replication finished
// first.
//
// The replications of a candidate run concurrently, at most cap(limit) at a
// time across all candidates sharing limit. Use it with Settings.Workers set
// to the population size: every replication of a generation is then queued at
// once and the cores stay busy until the generation's last simulation, rather
// than idling while the last few whole candidates finish.
//
// The first failing replication (lowest k) fails the candidate. An
// infeasible candidate's objectives may be NaN (see Evaluation): replications
// that know the candidate is infeasible can skip the simulation.
func Replicate(n int, limit Limiter, run func(ctx context.Context, c Candidate, k int) (Evaluation, error)) (Func, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("moo: Replicate: %d replications; want at least 1", n)
	case cap(limit) < 1:
		return nil, errors.New("moo: Replicate: limiter admits nothing; use NewLimiter")
	case run == nil:
		return nil, errors.New("moo: Replicate: nil run function")
	}
	return func(ctx context.Context, c Candidate) (Evaluation, error) {
		evals := make([]Evaluation, n)
		errs := make([]error, n)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var wg sync.WaitGroup
		for k := range n {
			select {
			case limit <- struct{}{}:
			case <-ctx.Done():
				errs[k] = ctx.Err()
				continue
			}
			wg.Go(func() {
				defer func() { <-limit }()
				evals[k], errs[k] = call(ctx, func(ctx context.Context, c Candidate) (Evaluation, error) {
					return run(ctx, c, k)
				}, c)
				if errs[k] != nil {
					cancel()
				}
			})
		}
		wg.Wait()
		var first error
		for k, err := range errs {
			if err == nil {
				continue
			}
			err = fmt.Errorf("replication %d: %w", k, err)
			if first == nil {
				first = err
			}
			if !errors.Is(err, context.Canceled) {
				return Evaluation{}, err
			}
		}
		if first != nil {
			return Evaluation{}, first
		}
		mean := Evaluation{
			Objectives:  make([]float64, len(evals[0].Objectives)),
			Constraints: make([]float64, len(evals[0].Constraints)),
		}
		for k, e := range evals {
			if len(e.Objectives) != len(mean.Objectives) || len(e.Constraints) != len(mean.Constraints) {
				return Evaluation{}, fmt.Errorf("replication %d: %d objectives and %d constraints, replication 0 had %d and %d",
					k, len(e.Objectives), len(e.Constraints), len(mean.Objectives), len(mean.Constraints))
			}
			for j, v := range e.Objectives {
				mean.Objectives[j] += v
			}
			for j, v := range e.Constraints {
				mean.Constraints[j] += v
			}
		}
		for j := range mean.Objectives {
			mean.Objectives[j] /= float64(n)
		}
		for j := range mean.Constraints {
			mean.Constraints[j] /= float64(n)
		}
		if len(mean.Constraints) == 0 {
			mean.Constraints = nil
		}
		return mean, nil
	}, nil
}
