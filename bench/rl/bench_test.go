package rlbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/learn/rl/ddpg"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
	"github.com/cclab/cclab/learn/rl/sac"
	"github.com/cclab/cclab/learn/rl/space"
)

// synthetic has a real task's observation and action sizes and
// pseudo-random contents; only the update cost matters here.
type synthetic struct {
	obs, act space.Space
	buf      []float32
	r        *rand.Rand
}

func newSynthetic(obsDim, actDim int) *synthetic {
	return &synthetic{obs: space.Uniform(-1, 1, obsDim), act: space.Uniform(-1, 1, actDim), buf: make([]float32, obsDim)}
}

func (e *synthetic) ObservationSpace() space.Space { return e.obs }
func (e *synthetic) ActionSpace() space.Space      { return e.act }
func (e *synthetic) Reset(seed uint64) ([]float32, env.Info) {
	e.r = rand.New(rand.NewPCG(seed, 0))
	return e.fill(), nil
}
func (e *synthetic) Step([]float32) ([]float32, float64, bool, bool, env.Info) {
	return e.fill(), e.r.NormFloat64(), false, e.r.IntN(200) == 0, nil
}
func (e *synthetic) fill() []float32 {
	for i := range e.buf {
		e.buf[i] = float32(2*e.r.Float64() - 1)
	}
	return e.buf
}

func vec(b *testing.B, obsDim, actDim int) *env.Vec {
	v, err := env.NewVec([]env.Env{newSynthetic(obsDim, actDim)}, 1)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

var sizes = []struct {
	obs    int
	hidden []int
	batch  int
}{
	{980, []int{400, 300}, 512}, // MARLIN
	{980, []int{400, 300}, 256},
	{980, []int{256, 256}, 256}, // the reference MLP
	{3, []int{256, 256}, 256},   // Pendulum with SB3's SAC defaults
}

// BenchmarkSACUpdate times one SAC gradient step (both critics, actor,
// entropy coefficient, target update). updates/s = 1e9/(ns/op).
func BenchmarkSACUpdate(b *testing.B) {
	for _, s := range sizes {
		b.Run(fmt.Sprintf("obs%d-%v-b%d", s.obs, s.hidden, s.batch), func(b *testing.B) {
			a, err := sac.New(vec(b, s.obs, 1), sac.Config{Hidden: s.hidden, BatchSize: s.batch, BufferSize: 4096, LearningStarts: s.batch, GradientSteps: 1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for a.Steps() < int64(s.batch) {
				a.Iterate(context.Background())
			}
			b.ReportAllocs()
			for b.Loop() {
				a.GradientStep()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkDDPGUpdate times one DDPG gradient step.
func BenchmarkDDPGUpdate(b *testing.B) {
	s := sizes[0]
	a, err := ddpg.New(vec(b, s.obs, 1), ddpg.Config{Hidden: s.hidden, BatchSize: s.batch, BufferSize: 4096, LearningStarts: s.batch}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for a.Steps() < int64(s.batch) {
		a.Iterate(context.Background())
	}
	b.ReportAllocs()
	for b.Loop() {
		a.GradientStep()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}

// BenchmarkPPOMinibatch times PPO minibatch gradient steps (evaluate,
// clipped loss, backward, clipping, Adam); each op is 4 minibatches.
func BenchmarkPPOMinibatch(b *testing.B) {
	for _, s := range []struct {
		obs    int
		hidden []int
		batch  int
	}{{980, []int{64, 64}, 64}, {980, []int{256, 256}, 256}, {3, []int{64, 64}, 64}} {
		b.Run(fmt.Sprintf("obs%d-%v-b%d", s.obs, s.hidden, s.batch), func(b *testing.B) {
			p, err := ppo.New(vec(b, s.obs, 1), ppo.Config{Hidden: s.hidden, BatchSize: s.batch, NSteps: 4 * s.batch, NEpochs: 1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			p.Iterate(ctx)
			b.ReportAllocs()
			for b.Loop() {
				p.Reoptimize(ctx)
			}
			b.ReportMetric(4*float64(b.N)/b.Elapsed().Seconds(), "minibatches/s")
		})
	}
}

// BenchmarkInference times one deterministic action for one observation
// (what a controller pays per decision).
func BenchmarkInference(b *testing.B) {
	for _, hidden := range [][]int{{400, 300}, {256, 256}} {
		b.Run(fmt.Sprintf("obs980-%v", hidden), func(b *testing.B) {
			net := nn.NewMLP(append(append([]int{980}, hidden...), 2), nn.ReLU, nn.Identity)
			net.InitTorchDefault(rand.New(rand.NewPCG(1, 1)))
			p, err := policy.New(space.Uniform(-1, 1, 980), space.Uniform(-1, 1, 1), policy.Squash, net, nil, policy.Meta{})
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float32, 980)
			b.ReportAllocs()
			for b.Loop() {
				p.ActInto(x)
			}
		})
	}
}
