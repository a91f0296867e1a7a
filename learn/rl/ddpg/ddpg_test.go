package ddpg

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/pendulum"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/space"
)

func vec(t testing.TB, k, workers int) *env.Vec {
	t.Helper()
	envs := make([]env.Env, k)
	for i := range envs {
		envs[i] = pendulum.New()
	}
	v, err := env.NewVec(envs, workers)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func small(seed uint64) Config {
	return Config{Seed: seed, Hidden: []int{32, 32}, BatchSize: 32, NoiseStd: 0.1, LogEvery: 100}
}

func train(t testing.TB, a rl.Agent, steps int64) {
	t.Helper()
	for a.Steps() < steps {
		if err := a.Iterate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func paramBytes(d *DDPG) []byte {
	var b []byte
	for _, p := range [][]float32{d.Actor.Params, d.Critic.Params, d.ActorTarg.Params, d.CriticTarg.Params} {
		for _, v := range p {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

func TestSmoke(t *testing.T) {
	d, err := New(vec(t, 2, 1), small(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, d, 200)
	first := d.Stats()
	train(t, d, 800)
	last := d.Stats()
	if last.Updates != (800-100)/2 {
		t.Errorf("updates = %d, want %d", last.Updates, (800-100)/2)
	}
	if !(last.CriticLoss < first.CriticLoss) || math.IsNaN(last.ActorLoss) {
		t.Errorf("critic loss %g → %g (want a decrease), actor loss %g", first.CriticLoss, last.CriticLoss, last.ActorLoss)
	}
	p, err := d.Policy(policy.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	a := p.ActInto([]float32{1, 0, 0})
	if a[0] < -2 || a[0] > 2 {
		t.Errorf("policy action %g outside the torque bounds", a[0])
	}
}

func TestDeterministicAndResume(t *testing.T) {
	straight, _ := New(vec(t, 2, 1), small(4), nil)
	train(t, straight, 500)
	par, _ := New(vec(t, 2, 2), small(4), nil)
	train(t, par, 500)
	if !bytes.Equal(paramBytes(straight), paramBytes(par)) {
		t.Fatalf("same seed with parallel stepping gave different parameters")
	}
	first, _ := New(vec(t, 2, 1), small(4), nil)
	train(t, first, 260)
	path := filepath.Join(t.TempDir(), "ddpg.ckpt")
	if err := rl.SaveCheckpoint(path, first, 0); err != nil {
		t.Fatal(err)
	}
	resumed, _ := New(vec(t, 2, 1), small(4), nil)
	if _, err := rl.LoadCheckpoint(path, resumed); err != nil {
		t.Fatal(err)
	}
	train(t, resumed, 500)
	if !bytes.Equal(paramBytes(straight), paramBytes(resumed)) {
		t.Errorf("resumed run differs from the uninterrupted run")
	}
}

// goalEnv is a goal-conditioned task in DeepCC's style: the observation
// carries a goal weight w ∈ {0, 1} and the reward is the w-weighted
// objective computed by the environment (w=1: action near +1 is good;
// w=0: near −1). One-step episodes that terminate.
type goalEnv struct {
	w   float32
	obs [2]float32
}

func (g *goalEnv) ObservationSpace() space.Space { return space.Uniform(0, 1, 2) }
func (g *goalEnv) ActionSpace() space.Space      { return space.Uniform(-1, 1, 1) }
func (g *goalEnv) Reset(seed uint64) ([]float32, env.Info) {
	g.w = float32(seed % 2)
	g.obs = [2]float32{g.w, 1 - g.w}
	return g.obs[:], nil
}
func (g *goalEnv) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	r := float64(g.w*a[0] - (1-g.w)*a[0])
	return g.obs[:], r, true, false, nil
}

// TestGoalConditioned: DDPG must learn to follow the goal in the
// observation (DeepCC's usage) with no special support.
func TestGoalConditioned(t *testing.T) {
	envs := []env.Env{&goalEnv{}, &goalEnv{}}
	v, _ := env.NewVec(envs, 1)
	d, err := New(v, Config{Seed: 1, Hidden: []int{16}, BatchSize: 32, NoiseStd: 0.3, LearningRate: 3e-3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	train(t, d, 1500)
	p, _ := d.Policy(policy.Meta{})
	up := p.ActInto([]float32{1, 0})[0]
	down := p.ActInto([]float32{0, 1})[0]
	if up < 0.5 || down > -0.5 {
		t.Errorf("goal 1 → action %g (want > 0.5), goal 0 → %g (want < −0.5)", up, down)
	}
}
