package a2c

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

func vec(t testing.TB, mk func() env.Env, k int) *env.Vec {
	t.Helper()
	envs := make([]env.Env, k)
	for i := range envs {
		envs[i] = mk()
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

// TestCartPoleImproves: with the RL Zoo's CartPole-v1 A2C setting
// (8 environments, ent_coef 0) the greedy policy must beat random play
// (≈ 20 steps) clearly within 25k steps.
func TestCartPoleImproves(t *testing.T) {
	a, err := New(vec(t, cartpole.New, 8), Config{Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, a, 25000)
	p, _ := a.Policy(policy.Meta{})
	ev, _ := rl.Evaluate(p, cartpole.New(), 5, 11)
	if ev.Mean < 60 {
		t.Errorf("mean return %g after 25k steps, want >= 60 (random ≈ 20)", ev.Mean)
	}
}

func TestContinuousSmokeAndResume(t *testing.T) {
	cfg := Config{Seed: 2}
	straight, err := New(vec(t, pendulum.New, 4), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, straight, 2000)
	st := straight.Stats()
	if math.IsNaN(st.PolicyLoss) || math.IsNaN(st.ValueLoss) || !(st.Std > 0) {
		t.Errorf("stats %+v contain NaN or a non-positive std", st)
	}
	first, _ := New(vec(t, pendulum.New, 4), cfg, nil)
	train(t, first, 1000)
	path := filepath.Join(t.TempDir(), "a2c.ckpt")
	if err := rl.SaveCheckpoint(path, first, 0); err != nil {
		t.Fatal(err)
	}
	resumed, _ := New(vec(t, pendulum.New, 4), cfg, nil)
	if _, err := rl.LoadCheckpoint(path, resumed); err != nil {
		t.Fatal(err)
	}
	train(t, resumed, 2000)
	enc := func(a *A2C) []byte {
		var b []byte
		for _, ps := range a.AC.Params() {
			for _, v := range ps {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
		return b
	}
	if !bytes.Equal(enc(straight), enc(resumed)) {
		t.Errorf("resumed run differs from the uninterrupted run")
	}
}
