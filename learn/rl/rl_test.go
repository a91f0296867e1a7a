package rl_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/sac"
)

func newSAC(t *testing.T, seed uint64) *sac.SAC {
	t.Helper()
	v, err := env.NewVec([]env.Env{pendulum.New()}, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sac.New(v, sac.Config{Seed: seed, Hidden: []int{16}, BatchSize: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeClock advances by step on every reading, so the checkpoint schedule
// is exercised without waiting.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time { c.t = c.t.Add(c.step); return c.t }

// countingAgent wraps an agent to count checkpoint writes.
type countingAgent struct {
	rl.Agent
	saves int
}

func (c *countingAgent) Save(e *checkpoint.Encoder) error { c.saves++; return c.Agent.Save(e) }

func TestTrainCheckpointsOnSchedule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck")
	a := &countingAgent{Agent: newSAC(t, 1)}
	clock := &fakeClock{t: time.Unix(0, 0), step: 10 * time.Second}
	// Each iteration reads the clock about twice (20 s); with a 60 s
	// interval that is a checkpoint every ≈ 3 iterations, plus the final.
	run, err := rl.Train(context.Background(), a, rl.TrainConfig{Steps: 30, CheckpointPath: path, CheckpointEvery: time.Minute, Now: clock.Now}, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.saves < 5 || a.saves > 15 {
		t.Errorf("%d checkpoints in 30 iterations of ≈ 20 s with a 60 s interval, want ≈ 10", a.saves)
	}
	if run.WallSeconds <= 0 {
		t.Errorf("wall seconds %g, want > 0 from the injected clock", run.WallSeconds)
	}
}

// TestCancelThenResume: cancelling training writes a checkpoint; a new
// learner resumes from it and ends where an uninterrupted run ends.
func TestCancelThenResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck")
	ctx, cancel := context.WithCancel(context.Background())
	first := newSAC(t, 2)
	_, err := rl.Train(ctx, first, rl.TrainConfig{Steps: 400, CheckpointPath: path,
		AfterIteration: func(a rl.Agent) error {
			if a.Steps() == 250 {
				cancel()
			}
			return nil
		}}, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Train returned %v, want context.Canceled", err)
	}
	resumed := newSAC(t, 2)
	run, err := rl.Train(context.Background(), resumed, rl.TrainConfig{Steps: 400, CheckpointPath: path}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Resumed {
		t.Errorf("run did not resume")
	}
	straight := newSAC(t, 2)
	if _, err := rl.Train(context.Background(), straight, rl.TrainConfig{Steps: 400}, false); err != nil {
		t.Fatal(err)
	}
	for i, v := range straight.Actor.Params {
		if resumed.Actor.Params[i] != v {
			t.Fatalf("actor param %d: resumed %g, uninterrupted %g", i, resumed.Actor.Params[i], v)
		}
	}
}

func TestEvaluate(t *testing.T) {
	s := newSAC(t, 3)
	p, err := s.Policy(policy.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := rl.Evaluate(p, pendulum.New(), 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Returns) != 4 || ev.Lengths[0] != 200 {
		t.Fatalf("evaluation %+v, want 4 episodes of 200 steps", ev)
	}
	var m float64
	for _, r := range ev.Returns {
		m += r / 4
		if r > 0 || r < -200*16.28 {
			t.Errorf("return %g outside Pendulum's range [-3255, 0]", r)
		}
	}
	if math.Abs(m-ev.Mean) > 1e-9 {
		t.Errorf("mean %g, want %g", ev.Mean, m)
	}
	// Same seeds, same returns.
	ev2, _ := rl.Evaluate(p, pendulum.New(), 4, 10)
	for i := range ev.Returns {
		if ev.Returns[i] != ev2.Returns[i] {
			t.Errorf("episode %d: %g then %g with the same seed", i, ev.Returns[i], ev2.Returns[i])
		}
	}
}
