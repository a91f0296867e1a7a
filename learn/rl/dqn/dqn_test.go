package dqn

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/cartpole"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/policy"
)

func vec(t testing.TB, k int) *env.Vec {
	t.Helper()
	envs := make([]env.Env, k)
	for i := range envs {
		envs[i] = cartpole.New()
	}
	v, err := env.NewVec(envs, 1)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func train(t testing.TB, a rl.Agent, steps int64) {
	t.Helper()
	for a.Steps() < steps {
		if err := a.Iterate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEpsilonSchedule(t *testing.T) {
	q, err := New(vec(t, 1), Config{TotalSteps: 1000, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		steps int64
		want  float64
	}{{0, 1}, {50, 1 - 0.5*0.95}, {100, 0.05}, {900, 0.05}} {
		q.steps = tc.steps
		if got := q.Epsilon(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ε at step %d = %g, want %g", tc.steps, got, tc.want)
		}
	}
}

// TestCartPoleImproves uses the RL Zoo's CartPole-v1 DQN settings
// (lr 2.3e-3, batch 64, buffer 1e5, learning_starts 1000, γ 0.99,
// target update 10, train_freq 256, gradient_steps 128, exploration 0.16
// to 0.04, [256, 256]) shortened: the greedy policy must beat random play
// (≈ 20 steps) clearly after 15k steps.
func TestCartPoleImproves(t *testing.T) {
	cfg := Config{Seed: 2, LearningRate: 2.3e-3, BatchSize: 64, BufferSize: 100000, LearningStarts: 1000,
		TargetUpdateInterval: 10, TrainFreq: 256, GradientSteps: 128, ExplorationFraction: 0.16, FinalEps: 0.04,
		Hidden: []int{64, 64}, TotalSteps: 15000}
	q, err := New(vec(t, 1), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, q, 15000)
	p, _ := q.Policy(policy.Meta{})
	ev, _ := rl.Evaluate(p, cartpole.New(), 5, 7)
	if ev.Mean < 60 || math.IsNaN(q.Stats().Loss) {
		t.Errorf("mean return %g after 15k steps (want >= 60; random ≈ 20), loss %g", ev.Mean, q.Stats().Loss)
	}
}

func TestResumeReproduces(t *testing.T) {
	cfg := Config{Seed: 3, TotalSteps: 2000, LearningStarts: 50, TargetUpdateInterval: 100}
	straight, _ := New(vec(t, 2), cfg, nil)
	train(t, straight, 1200)
	first, _ := New(vec(t, 2), cfg, nil)
	train(t, first, 600)
	path := filepath.Join(t.TempDir(), "dqn.ckpt")
	if err := rl.SaveCheckpoint(path, first, 0); err != nil {
		t.Fatal(err)
	}
	resumed, _ := New(vec(t, 2), cfg, nil)
	if _, err := rl.LoadCheckpoint(path, resumed); err != nil {
		t.Fatal(err)
	}
	train(t, resumed, 1200)
	enc := func(q *DQN) []byte {
		var b []byte
		for _, v := range q.Q.Params {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	if !bytes.Equal(enc(straight), enc(resumed)) {
		t.Errorf("resumed run differs from the uninterrupted run")
	}
}

func TestRejectsContinuousActions(t *testing.T) {
	v, _ := env.NewVec([]env.Env{pendulum.New()}, 1)
	if _, err := New(v, Config{TotalSteps: 10}, nil); err == nil {
		t.Errorf("DQN accepted a Box action space")
	}
}
