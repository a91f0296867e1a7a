package moo

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestReplicateMeans(t *testing.T) {
	// Replication k reports (x + k, 10 k) and constraint k - 1: the means
	// over k = 0..3 are (x + 1.5, 15) and 0.5.
	f, err := Replicate(4, NewLimiter(2), func(_ context.Context, c Candidate, k int) (Evaluation, error) {
		time.Sleep(time.Duration(3-k) * 100 * time.Microsecond) // finish out of order
		return Evaluation{Objectives: []float64{c.X[0] + float64(k), 10 * float64(k)}, Constraints: []float64{float64(k) - 1}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := f(context.Background(), Candidate{X: []float64{2}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Objectives[0] != 3.5 || e.Objectives[1] != 15 || e.Constraints[0] != 0.5 {
		t.Errorf("got %+v, want objectives [3.5 15] and constraint 0.5", e)
	}
}

// TestReplicateDeterministicSum: floating-point sums depend on order, so the
// mean of values of very different magnitudes must be the same bits however
// the replications are scheduled.
func TestReplicateDeterministicSum(t *testing.T) {
	vals := []float64{1e16, 1, -1e16, 3.3, 1e-3, 7e15, 2.2}
	var first uint64
	for trial := range 20 {
		r := rand.New(rand.NewPCG(uint64(trial), 1))
		delays := make([]time.Duration, len(vals))
		for k := range delays {
			delays[k] = time.Duration(r.IntN(200)) * time.Microsecond
		}
		f, _ := Replicate(len(vals), NewLimiter(len(vals)), func(_ context.Context, _ Candidate, k int) (Evaluation, error) {
			time.Sleep(delays[k])
			return Evaluation{Objectives: []float64{vals[k]}}, nil
		})
		e, err := f(context.Background(), Candidate{})
		if err != nil {
			t.Fatal(err)
		}
		bits := math.Float64bits(e.Objectives[0])
		if trial == 0 {
			first = bits
		} else if bits != first {
			t.Fatalf("trial %d: mean %v, trial 0 gave %v", trial, e.Objectives[0], math.Float64frombits(first))
		}
	}
}

// TestReplicateLimiter: three candidates of five replications share a
// limiter of 2; concurrency never exceeds 2 and reaches it.
func TestReplicateLimiter(t *testing.T) {
	var running, peak atomic.Int64
	f, _ := Replicate(5, NewLimiter(2), func(_ context.Context, _ Candidate, _ int) (Evaluation, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(200 * time.Microsecond)
		running.Add(-1)
		return Evaluation{Objectives: []float64{1}}, nil
	})
	m := &randomSearch{p: Problem{Variables: []Variable{{Name: "x", Upper: 1}}, Objectives: []Objective{{Name: "f"}}}, r: rand.New(rand.NewPCG(1, 1)), n: 3}
	if _, err := Run(context.Background(), m, f, Settings{Generations: 1, Workers: 3}); err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrency %d, want 2", p)
	}
}

func TestReplicateErrors(t *testing.T) {
	if _, err := Replicate(0, NewLimiter(1), nil); err == nil || !strings.Contains(err.Error(), "0 replications") {
		t.Errorf("n = 0: got %v", err)
	}
	if _, err := Replicate(1, make(Limiter), func(context.Context, Candidate, int) (Evaluation, error) { return Evaluation{}, nil }); err == nil {
		t.Error("unbuffered limiter: want an error")
	}
	boom := errors.New("trace missing")
	f, _ := Replicate(6, NewLimiter(2), func(ctx context.Context, _ Candidate, k int) (Evaluation, error) {
		if k == 3 {
			return Evaluation{}, boom
		}
		if k > 3 {
			<-ctx.Done() // a long simulation that honours cancellation
			return Evaluation{}, ctx.Err()
		}
		return Evaluation{Objectives: []float64{1}}, nil
	})
	if _, err := f(context.Background(), Candidate{}); !errors.Is(err, boom) || !strings.Contains(err.Error(), "replication 3") {
		t.Errorf("got %v, want replication 3's error", err)
	}
	f, _ = Replicate(2, NewLimiter(1), func(_ context.Context, _ Candidate, k int) (Evaluation, error) {
		if k == 1 {
			panic("nil map")
		}
		return Evaluation{Objectives: []float64{1}}, nil
	})
	if _, err := f(context.Background(), Candidate{}); err == nil || !strings.Contains(err.Error(), "panic: nil map") {
		t.Errorf("got %v, want the panic reported", err)
	}
	f, _ = Replicate(2, NewLimiter(1), func(_ context.Context, _ Candidate, k int) (Evaluation, error) {
		return Evaluation{Objectives: make([]float64, k+1)}, nil
	})
	if _, err := f(context.Background(), Candidate{}); err == nil || !strings.Contains(err.Error(), "replication 1: 2 objectives") {
		t.Errorf("got %v, want a length mismatch", err)
	}
}
