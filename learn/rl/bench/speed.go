package bench

import (
	"context"
	"fmt"
	"github.com/cclab/cclab/internal/cputime"
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/ddpg"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
	"github.com/cclab/cclab/learn/rl/sac"
	"github.com/cclab/cclab/learn/rl/space"
)

// randomEnv is a synthetic environment with the observation and action
// sizes of a real task (e.g. MARLIN's 980 inputs), for speed measurements.
type randomEnv struct {
	obs, act space.Space
	buf      []float32
	n        uint64
}

func (e *randomEnv) ObservationSpace() space.Space { return e.obs }
func (e *randomEnv) ActionSpace() space.Space      { return e.act }
func (e *randomEnv) Reset(seed uint64) ([]float32, env.Info) {
	e.n = seed
	return e.next(), nil
}
func (e *randomEnv) Step([]float32) ([]float32, float64, bool, bool, env.Info) {
	return e.next(), float64(e.n%7) / 7, false, e.n%200 == 0, nil
}
func (e *randomEnv) next() []float32 {
	for i := range e.buf {
		e.n = e.n*6364136223846793005 + 1442695040888963407
		e.buf[i] = float32(e.n>>40)/float32(1<<24) - 0.5
	}
	return e.buf
}

// SpeedAlgos are the measurements Speed knows.
var SpeedAlgos = []string{"sac", "ddpg", "ppo", "mlp", "infer"}

// SpeedConfig is an update-speed or inference-latency measurement on a
// synthetic task with the given sizes.
type SpeedConfig struct {
	// Algo is sac, ddpg (one gradient step), ppo (one minibatch step),
	// mlp (one MLP update) or infer (batch-1 policy inference).
	Algo     string
	Obs, Act int
	Hidden   []int
	Batch    int
	Seconds  float64
}

// Speed runs cfg.Algo's update (or inference) repeatedly for cfg.Seconds
// of wall time and returns how many ran, in how long, and the process CPU
// time they took.
func Speed(ctx context.Context, cfg SpeedConfig) (n int, elapsed, cpuSeconds float64, err error) {
	hs := cfg.Hidden
	e := &randomEnv{obs: space.Uniform(-1, 1, cfg.Obs), act: space.Uniform(-1, 1, cfg.Act), buf: make([]float32, cfg.Obs)}
	v, err := env.NewVec([]env.Env{e}, 1)
	if err != nil {
		return 0, 0, 0, err
	}
	var step func()
	var fill rl.Agent
	perStep := 1 // gradient steps per call of step
	switch cfg.Algo {
	case "mlp":
		m := nn.NewMLP(append(append([]int{cfg.Obs}, hs...), cfg.Act), nn.ReLU, nn.Identity)
		m.InitTorchDefault(rand.New(rand.NewPCG(1, 1)))
		opt := nn.NewAdam(len(m.Params), 3e-4)
		ws := m.NewWorkspace()
		x := make([]float32, cfg.Batch*cfg.Obs)
		dy := make([]float32, cfg.Batch*cfg.Act)
		for i := range x {
			x[i] = float32(i%13) / 13
		}
		for i := range dy {
			dy[i] = 1 / float32(cfg.Batch)
		}
		step = func() {
			m.ZeroGrad()
			m.Forward(ws, x, cfg.Batch)
			m.Backward(ws, dy, false)
			opt.Step(m.Params, m.Grads)
		}
	case "infer":
		m := nn.NewMLP(append(append([]int{cfg.Obs}, hs...), 2*cfg.Act), nn.ReLU, nn.Identity)
		m.InitTorchDefault(rand.New(rand.NewPCG(1, 1)))
		p, err := policy.New(e.obs, e.act, policy.Squash, m, nil, policy.Meta{})
		if err != nil {
			return 0, 0, 0, err
		}
		x := make([]float32, cfg.Obs)
		step = func() { p.ActInto(x) }
	case "ppo":
		p, err := ppo.New(v, ppo.Config{Hidden: hs, BatchSize: cfg.Batch, NSteps: 4 * cfg.Batch, NEpochs: 1}, nil)
		if err != nil {
			return 0, 0, 0, err
		}
		if err := p.Iterate(ctx); err != nil {
			return 0, 0, 0, err
		}
		perStep = 4
		step = func() { p.Reoptimize(ctx) }
	case "sac":
		// LearningStarts = batch: the buffer fills with random actions and
		// no updates, which are then timed one by one.
		s, err := sac.New(v, sac.Config{Hidden: hs, BatchSize: cfg.Batch, BufferSize: 10000, LearningStarts: cfg.Batch, GradientSteps: 1}, nil)
		if err != nil {
			return 0, 0, 0, err
		}
		step, fill = s.GradientStep, s
	case "ddpg":
		d, err := ddpg.New(v, ddpg.Config{Hidden: hs, BatchSize: cfg.Batch, BufferSize: 10000, LearningStarts: cfg.Batch}, nil)
		if err != nil {
			return 0, 0, 0, err
		}
		step, fill = d.GradientStep, d
	default:
		return 0, 0, 0, fmt.Errorf("algorithm must be sac, ddpg, ppo, mlp or infer, got %q", cfg.Algo)
	}
	for fill != nil && fill.Steps() < int64(cfg.Batch) {
		if err := fill.Iterate(ctx); err != nil {
			return 0, 0, 0, err
		}
	}
	step() // warm-up: buffers sized
	n = 0
	start := time.Now()
	cpu0, _ := cputime.Process()
	// At least one timed step, so that a process descheduled for longer
	// than cfg.Seconds (a loaded machine) still measures something.
	for n == 0 || time.Since(start).Seconds() < cfg.Seconds && ctx.Err() == nil {
		step()
		n++
	}
	elapsed = time.Since(start).Seconds()
	cpu1, _ := cputime.Process()
	// The whole process's CPU time, so garbage collection counts too.
	cpuSeconds = (cpu1 - cpu0).Seconds()
	n *= perStep
	return n, elapsed, cpuSeconds, nil
}
