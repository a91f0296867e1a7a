// Package dqn implements Deep Q-Networks (Mnih et al. 2015) as
// Stable-Baselines3's DQN does: an MLP Q-network over a Discrete action
// space, ε-greedy exploration with ε decayed linearly over the first
// ExplorationFraction of training, a uniform replay buffer, a target
// network copied (τ = 1) every TargetUpdateInterval environment steps, the
// Huber (smooth L1) loss and gradient-norm clipping. It is the
// data-centre study's value-based baseline.
//
// Defaults are SB3's (stable_baselines3/dqn/dqn.py, SB3 2.x): learning
// rate 1e-4, buffer 1e6, learning_starts 100, batch 32, τ 1, γ 0.99,
// train_freq 4, gradient_steps 1, target_update_interval 10000,
// exploration_fraction 0.1, ε from 1 to 0.05, max_grad_norm 10, network
// [64, 64] with ReLU, Adam. One difference: ε is drawn per environment,
// where SB3 flips one coin for the whole vector of environments.
package dqn

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl"

	"github.com/cclab/cclab/learn/rl/buffer"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/internal/agentutil"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// Config holds DQN's hyper-parameters. Zero fields take SB3's defaults; a
// float set to rl.Zero is an explicit 0 (e.g. Gamma: rl.Zero), see rl.Default.
type Config struct {
	LearningRate float64 // default 1e-4
	BufferSize   int     // default 1e6
	// LearningStarts (default 100; NoLearningStarts for 0).
	LearningStarts   int
	NoLearningStarts bool
	BatchSize        int     // default 32
	Tau              float64 // default 1 (hard copy)
	Gamma            float64 // default 0.99
	TrainFreq        int     // vectorised steps between updates (default 4)
	GradientSteps    int     // default 1
	// TargetUpdateInterval in environment steps (default 10000).
	TargetUpdateInterval int
	// ExplorationFraction of TotalSteps over which ε decays from
	// InitialEps to FinalEps (defaults 0.1, 1, 0.05).
	ExplorationFraction, InitialEps, FinalEps float64
	// TotalSteps is the planned training length, which sets the ε
	// schedule (SB3 takes it from learn(total_timesteps)). Required.
	TotalSteps  int64
	MaxGradNorm float64 // default 10
	Hidden      []int   // default [64, 64]
	Seed        uint64
	LogEvery    int64 // default 1000
}

func (c *Config) defaults() {
	c.LearningRate = rl.Default(c.LearningRate, 1e-4)
	c.BufferSize = cmp.Or(c.BufferSize, 1_000_000)
	if c.LearningStarts == 0 && !c.NoLearningStarts {
		c.LearningStarts = 100
	}
	c.BatchSize = cmp.Or(c.BatchSize, 32)
	c.Tau = rl.Default(c.Tau, 1)
	c.Gamma = rl.Default(c.Gamma, 0.99)
	c.TrainFreq = cmp.Or(c.TrainFreq, 4)
	c.GradientSteps = cmp.Or(c.GradientSteps, 1)
	c.TargetUpdateInterval = cmp.Or(c.TargetUpdateInterval, 10000)
	c.ExplorationFraction = rl.Default(c.ExplorationFraction, 0.1)
	c.InitialEps = rl.Default(c.InitialEps, 1)
	c.FinalEps = rl.Default(c.FinalEps, 0.05)
	c.MaxGradNorm = rl.Default(c.MaxGradNorm, 10)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{64, 64}
	}
	c.LogEvery = cmp.Or(c.LogEvery, 1000)
}

func (c *Config) validate() error {
	switch {
	case !(c.LearningRate > 0) || c.BufferSize < 1 || c.BatchSize < 1 || c.TrainFreq < 1 || c.GradientSteps < 1 || c.TargetUpdateInterval < 1:
		return fmt.Errorf("dqn: LearningRate %g, BufferSize %d, BatchSize %d, TrainFreq %d, GradientSteps %d, TargetUpdateInterval %d must be positive",
			c.LearningRate, c.BufferSize, c.BatchSize, c.TrainFreq, c.GradientSteps, c.TargetUpdateInterval)
	case c.TotalSteps < 1:
		return fmt.Errorf("dqn: TotalSteps %d must be set (it defines the ε schedule)", c.TotalSteps)
	case c.Tau <= 0 || c.Tau > 1 || c.Gamma < 0 || c.Gamma > 1:
		return fmt.Errorf("dqn: Tau %g must be in (0, 1] and Gamma %g in [0, 1]", c.Tau, c.Gamma)
	case c.ExplorationFraction < 0 || c.ExplorationFraction > 1 || c.InitialEps < 0 || c.InitialEps > 1 || c.FinalEps < 0 || c.FinalEps > 1:
		return fmt.Errorf("dqn: ExplorationFraction %g, InitialEps %g, FinalEps %g must be in [0, 1]", c.ExplorationFraction, c.InitialEps, c.FinalEps)
	case c.LearningStarts < 0 || c.MaxGradNorm <= 0:
		return fmt.Errorf("dqn: LearningStarts %d must be >= 0 and MaxGradNorm %g > 0", c.LearningStarts, c.MaxGradNorm)
	}
	return nil
}

// Stats are the latest diagnostics.
type Stats struct {
	Loss, MeanQ, Epsilon float64
	Updates              int64
}

// DQN is a DQN learner bound to a vectorised environment.
type DQN struct {
	cfg          Config
	venv         env.VecEnv
	obsSp, actSp space.Space
	od, n, k     int
	Q, QTarg     *nn.MLP
	opt          *nn.Adam
	replay       *buffer.Replay
	rng          *agentutil.RNG
	window       *agentutil.Window
	logger       *trainlog.Logger
	steps        int64
	calls        int64 // vectorised steps (SB3 _n_calls)
	updates      int64
	nextLog      int64
	obs          []float32
	stats        Stats

	batch                *buffer.Batch
	ws, wsT, wsAct       *nn.Workspace
	act, pred, y, dq, dy []float32
}

// New builds a DQN learner for venv (Discrete actions, Box observations).
func New(venv env.VecEnv, cfg Config, logger *trainlog.Logger) (*DQN, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	obsSp, actSp := venv.ObservationSpace(), venv.ActionSpace()
	if actSp.Kind != space.KindDiscrete {
		return nil, fmt.Errorf("dqn: needs a Discrete action space, got %v", actSp)
	}
	if obsSp.Kind != space.KindBox {
		return nil, fmt.Errorf("dqn: needs a Box observation space, got %v", obsSp)
	}
	if logger == nil {
		logger = &trainlog.Logger{}
	}
	od, n, k := obsSp.Dim(), actSp.N, venv.NumEnvs()
	q := &DQN{cfg: cfg, venv: venv, obsSp: obsSp, actSp: actSp, od: od, n: n, k: k, logger: logger,
		rng: agentutil.NewRNG(cfg.Seed, 1), window: agentutil.NewWindow(100), nextLog: cfg.LogEvery}
	q.Q = nn.NewMLP(append(append([]int{od}, cfg.Hidden...), n), nn.ReLU, nn.Identity)
	q.Q.InitTorchDefault(agentutil.NewRNG(cfg.Seed, 0).Rand)
	q.QTarg = q.Q.Clone()
	q.opt = nn.NewAdam(len(q.Q.Params), cfg.LearningRate)
	q.replay = buffer.NewReplay(cfg.BufferSize, od, 1)
	B := cfg.BatchSize
	q.batch = q.replay.NewBatch(B)
	q.ws, q.wsT, q.wsAct = q.Q.NewWorkspace(), q.Q.NewWorkspace(), q.Q.NewWorkspace()
	q.act, q.pred, q.y, q.dq, q.dy = make([]float32, k), make([]float32, B), make([]float32, B), make([]float32, B), make([]float32, B*n)
	b := venv.Reset(cfg.Seed)
	q.obs = append([]float32(nil), b.Obs...)
	return q, nil
}

// Kind implements rl.Agent.
func (q *DQN) Kind() string { return "dqn" }

// Steps implements rl.Agent.
func (q *DQN) Steps() int64 { return q.steps }

// Stats returns the latest diagnostics.
func (q *DQN) Stats() Stats { return q.stats }

// EpisodeWindow returns the mean return and length of the last 100
// training episodes.
func (q *DQN) EpisodeWindow() (meanReturn, meanLength float64) {
	return q.window.MeanReturn(), q.window.MeanLength()
}

// Epsilon returns the exploration rate at the current step (SB3's
// get_linear_fn over progress = steps/TotalSteps).
func (q *DQN) Epsilon() float64 {
	progress := float64(q.steps) / float64(q.cfg.TotalSteps)
	if q.cfg.ExplorationFraction == 0 || progress > q.cfg.ExplorationFraction {
		return q.cfg.FinalEps
	}
	return q.cfg.InitialEps + progress*(q.cfg.FinalEps-q.cfg.InitialEps)/q.cfg.ExplorationFraction
}

// Iterate implements rl.Agent.
func (q *DQN) Iterate(ctx context.Context) error {
	// Cancellation is honoured only between iterations, so a checkpoint
	// written after it holds a consistent state.
	if err := ctx.Err(); err != nil {
		return err
	}
	for range q.cfg.TrainFreq {
		eps := q.Epsilon()
		var qv []float32
		if q.steps >= int64(q.cfg.LearningStarts) {
			qv = q.Q.Forward(q.wsAct, q.obs, q.k)
		}
		for i := 0; i < q.k; i++ {
			if qv == nil || q.rng.Float64() < eps {
				q.act[i] = float32(q.rng.IntN(q.n))
			} else {
				q.act[i] = float32(nn.Argmax(qv[i*q.n : (i+1)*q.n]))
			}
		}
		b := q.venv.Step(q.act)
		for i := 0; i < q.k; i++ {
			next := b.Obs[i*q.od : (i+1)*q.od]
			if b.Done(i) {
				next = b.FinalObs[i*q.od : (i+1)*q.od]
			}
			q.replay.Add(q.obs[i*q.od:(i+1)*q.od], q.act[i:i+1], b.Reward[i], next, b.Terminated[i])
		}
		copy(q.obs, b.Obs)
		q.steps += int64(q.k)
		q.calls++
		q.window.Drain(q.venv)
		// SB3 _on_step: target update every target_update_interval/n_envs
		// vectorised steps.
		if q.calls%max(int64(q.cfg.TargetUpdateInterval/q.k), 1) == 0 {
			nn.Polyak(q.QTarg.Params, q.Q.Params, q.cfg.Tau)
		}
	}
	if q.steps > int64(q.cfg.LearningStarts) {
		for range q.cfg.GradientSteps {
			q.update()
		}
		if !agentutil.AllFinite(q.Q.Params) {
			return fmt.Errorf("dqn: non-finite parameters after %d updates (step %d)", q.updates, q.steps)
		}
	}
	q.stats.Epsilon = q.Epsilon()
	if q.steps >= q.nextLog {
		q.logger.Log(q.steps,
			trainlog.F("ep_rew_mean", q.window.MeanReturn()),
			trainlog.F("ep_len_mean", q.window.MeanLength()),
			trainlog.F("loss", q.stats.Loss),
			trainlog.F("mean_q", q.stats.MeanQ),
			trainlog.F("exploration_rate", q.stats.Epsilon),
			trainlog.F("updates", float64(q.updates)))
		if r := q.window.MeanReturn(); !math.IsNaN(r) {
			q.logger.Describe(fmt.Sprintf("dqn ep_rew_mean %.1f", r))
		}
		for q.nextLog <= q.steps {
			q.nextLog += q.cfg.LogEvery
		}
	}
	return nil
}

// update is one gradient step of SB3's DQN.train.
func (q *DQN) update() {
	B, n := q.cfg.BatchSize, q.n
	q.replay.Sample(q.rng.Rand, q.batch)
	bt := q.batch
	// y = r + γ(1−d)·max_a' Q̄(s', a').
	qn := q.QTarg.Forward(q.wsT, bt.Next, B)
	g := float32(q.cfg.Gamma)
	for i := 0; i < B; i++ {
		row := qn[i*n : (i+1)*n]
		q.y[i] = bt.Rew[i] + (1-bt.Done[i])*g*row[nn.Argmax(row)]
	}
	out := q.Q.Forward(q.ws, bt.Obs, B)
	var meanQ float64
	for i := 0; i < B; i++ {
		q.pred[i] = out[i*n+int(bt.Act[i])]
		meanQ += float64(q.pred[i]) / float64(B)
	}
	clear(q.dq)
	loss := nn.Huber(q.pred, q.y, 1, q.dq)
	clear(q.dy)
	for i := 0; i < B; i++ {
		q.dy[i*n+int(bt.Act[i])] = q.dq[i]
	}
	q.Q.ZeroGrad()
	q.Q.Backward(q.ws, q.dy, false)
	nn.ClipGradNorm(q.cfg.MaxGradNorm, q.Q.Grads)
	q.opt.Step(q.Q.Params, q.Q.Grads)
	q.updates++
	q.stats = Stats{Loss: loss, MeanQ: meanQ, Epsilon: q.Epsilon(), Updates: q.updates}
}

// Policy implements rl.Agent: greedy actions.
func (q *DQN) Policy(meta policy.Meta) (*policy.Policy, error) {
	if meta.Algo == "" {
		meta.Algo = "dqn"
	}
	meta.Steps = q.steps
	return policy.New(q.obsSp, q.actSp, policy.Argmax, q.Q.Clone(), agentutil.ObsNormalizer(q.venv), meta)
}

// Save implements rl.Agent.
func (q *DQN) Save(e *checkpoint.Encoder) error {
	agentutil.SaveDims(e, "dqn", q.od, q.n, q.k)
	e.Int64("dqn.steps", q.steps)
	e.Int64("dqn.calls", q.calls)
	e.Int64("dqn.updates", q.updates)
	e.Int64("dqn.next_log", q.nextLog)
	e.Float32s("q", q.Q.Params)
	e.Float32s("q_targ", q.QTarg.Params)
	agentutil.SaveAdam(e, "opt", q.opt)
	q.rng.Save(e, "rng")
	q.window.Save(e)
	e.Float32s("obs", q.obs)
	q.replay.Save(e)
	return agentutil.SaveEnv(e, q.venv)
}

// Load implements rl.Agent.
func (q *DQN) Load(d *checkpoint.Decoder) error {
	agentutil.CheckDims(d, "dqn", q.od, q.n, q.k)
	q.steps = d.Int64("dqn.steps")
	q.calls = d.Int64("dqn.calls")
	q.updates = d.Int64("dqn.updates")
	q.nextLog = d.Int64("dqn.next_log")
	d.Float32sInto("q", q.Q.Params)
	d.Float32sInto("q_targ", q.QTarg.Params)
	agentutil.LoadAdam(d, "opt", q.opt)
	q.rng.Load(d, "rng")
	q.window.Load(d)
	d.Float32sInto("obs", q.obs)
	q.replay.Load(d)
	if d.Err() != nil {
		return d.Err()
	}
	if !agentutil.LoadEnv(d, q.venv) && d.Err() == nil {
		b := q.venv.Reset(q.cfg.Seed ^ uint64(q.steps))
		copy(q.obs, b.Obs)
	}
	return d.Err()
}
