package gym

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/rpc/gym/gympb"
)

// slow is an environment whose steps take a millisecond, recording how
// many of its kind step at once.
type slow struct {
	env.Env
	active, peak *atomic.Int32
}

func (e slow) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	n := e.active.Add(1)
	for {
		p := e.peak.Load()
		if n <= p || e.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(time.Millisecond)
	e.active.Add(-1)
	return e.Env.Step(a)
}

// TestParallelOnlyWhenWorthIt checks that a vector whose environments'
// steps are expensive steps them on several goroutines although the
// server starts every vector serially (cheap ones, MARLIN's, stay so).
func TestParallelOnlyWhenWorthIt(t *testing.T) {
	s := NewServer(Config{Workers: 2})
	ctx := context.Background()
	var h [2]uint64
	for j := range h {
		h[j] = mustMake(t, s, "cclab/Marlin-v0", 4, nil).Handle
		if _, err := s.Reset(ctx, &gympb.ResetRequest{Handle: h[j]}); err != nil {
			t.Fatal(err)
		}
	}
	var active, peak atomic.Int32
	slowVec := s.vecs[h[1]]
	for i, e := range slowVec.envs {
		slowVec.envs[i] = slow{e, &active, &peak}
	}
	for range 3 {
		for _, hh := range h {
			if _, err := s.Step(ctx, &gympb.StepRequest{Handle: hh, Actions: make([]byte, 16), Autoreset: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// (Not asserted: on a loaded machine a preempted call can take longer
	// than serialBelow, and then the next one runs in parallel, rightly.)
	t.Logf("4 MARLIN steps cost %v (serial below %v)", s.vecs[h[0]].cost, serialBelow)
	if peak.Load() < 2 {
		t.Errorf("4 environments of 1 ms steps never stepped in parallel (peak %d at once)", peak.Load())
	}
}
