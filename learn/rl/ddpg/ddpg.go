// Package ddpg implements Deep Deterministic Policy Gradient (Lillicrap et
// al. 2016, arXiv:1509.02971) as Stable-Baselines3's DDPG does (TD3 with
// one critic, policy_delay 1 and no target-policy smoothing): a
// deterministic tanh actor, a Q critic, Polyak-averaged target networks
// for both, Gaussian exploration noise on the scaled action, a uniform
// replay buffer and uniformly random actions before LearningStarts.
// Terminations stop bootstrapping; truncations do not.
//
// Nothing here assumes a fixed objective, so goal-conditioned
// multi-objective variants such as DeepCC's work unchanged: put the goal
// (weight) vector in the observation and let the environment compute the
// goal-weighted reward.
//
// Defaults are SB3's (stable_baselines3/ddpg/ddpg.py, SB3 2.x): learning
// rate 1e-3, buffer 1e6, learning_starts 100, batch 256, τ 0.005, γ 0.99,
// train_freq 1, gradient_steps 1, networks [400, 300] with ReLU, Adam,
// PyTorch's default initialisation, and no action noise (SB3's
// action_noise=None; set NoiseStd, e.g. 0.1 as the RL Zoo does).
package ddpg

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

// Config holds DDPG's hyper-parameters. Zero fields take SB3's defaults; a
// float set to rl.Zero is an explicit 0 (e.g. Gamma: rl.Zero), see rl.Default.
type Config struct {
	LearningRate float64 // default 1e-3
	BufferSize   int     // default 1e6
	// LearningStarts: steps of uniformly random actions before training
	// (default 100; NoLearningStarts for 0).
	LearningStarts   int
	NoLearningStarts bool
	BatchSize        int     // default 256
	Tau              float64 // default 0.005
	Gamma            float64 // default 0.99
	TrainFreq        int     // vectorised steps between updates (default 1)
	GradientSteps    int     // per update (default 1; −1: one per step collected)
	// NoiseStd is the standard deviation of the Gaussian exploration
	// noise added to the action scaled to [−1, 1] (default 0: none).
	NoiseStd float64
	Hidden   []int // default [400, 300]
	Seed     uint64
	LogEvery int64 // environment steps between log rows (default 1000)
}

func (c *Config) defaults() {
	c.LearningRate = rl.Default(c.LearningRate, 1e-3)
	c.BufferSize = cmp.Or(c.BufferSize, 1_000_000)
	if c.LearningStarts == 0 && !c.NoLearningStarts {
		c.LearningStarts = 100
	}
	c.BatchSize = cmp.Or(c.BatchSize, 256)
	c.Tau = rl.Default(c.Tau, 0.005)
	c.Gamma = rl.Default(c.Gamma, 0.99)
	c.TrainFreq = cmp.Or(c.TrainFreq, 1)
	c.GradientSteps = cmp.Or(c.GradientSteps, 1)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{400, 300}
	}
	c.LogEvery = cmp.Or(c.LogEvery, 1000)
}

func (c *Config) validate() error {
	switch {
	case !(c.LearningRate > 0):
		return fmt.Errorf("ddpg: LearningRate %g must be positive", c.LearningRate)
	case c.BufferSize < 1 || c.BatchSize < 1 || c.TrainFreq < 1 || c.LearningStarts < 0:
		return fmt.Errorf("ddpg: BufferSize %d, BatchSize %d, TrainFreq %d must be >= 1 and LearningStarts %d >= 0", c.BufferSize, c.BatchSize, c.TrainFreq, c.LearningStarts)
	case c.GradientSteps < -1:
		return fmt.Errorf("ddpg: GradientSteps %d must be >= 1 or -1", c.GradientSteps)
	case c.Tau <= 0 || c.Tau > 1:
		return fmt.Errorf("ddpg: Tau %g must be in (0, 1]", c.Tau)
	case c.Gamma < 0 || c.Gamma > 1:
		return fmt.Errorf("ddpg: Gamma %g must be in [0, 1]", c.Gamma)
	case c.NoiseStd < 0:
		return fmt.Errorf("ddpg: NoiseStd %g must be >= 0", c.NoiseStd)
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("ddpg: hidden width %d must be >= 1", h)
		}
	}
	return nil
}

// Stats are the last update's diagnostics.
type Stats struct {
	ActorLoss, CriticLoss, MeanQ float64
	Updates                      int64
}

// DDPG is a DDPG learner bound to a vectorised environment.
type DDPG struct {
	cfg            Config
	venv           env.VecEnv
	obsSp, actSp   space.Space
	od, ad, k      int
	Actor, Critic  *nn.MLP
	ActorTarg      *nn.MLP
	CriticTarg     *nn.MLP
	actorOpt       *nn.Adam
	criticOpt      *nn.Adam
	replay         *buffer.Replay
	rng            *agentutil.RNG
	window         *agentutil.Window
	logger         *trainlog.Logger
	steps, updates int64
	nextLog        int64
	obs            []float32
	stats          Stats

	batch                       *buffer.Batch
	wsA, wsAT, wsC, wsCT, wsAct *nn.Workspace
	qin, y, dq, da, act, actEnv []float32
}

// New builds a DDPG learner for venv (bounded Box actions, Box
// observations). logger may be nil.
func New(venv env.VecEnv, cfg Config, logger *trainlog.Logger) (*DDPG, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	obsSp, actSp := venv.ObservationSpace(), venv.ActionSpace()
	if actSp.Kind != space.KindBox || !actSp.Bounded() {
		return nil, fmt.Errorf("ddpg: needs a bounded Box action space, got %v", actSp)
	}
	if obsSp.Kind != space.KindBox {
		return nil, fmt.Errorf("ddpg: needs a Box observation space, got %v", obsSp)
	}
	if logger == nil {
		logger = &trainlog.Logger{}
	}
	od, ad, k := obsSp.Dim(), actSp.Dim(), venv.NumEnvs()
	d := &DDPG{cfg: cfg, venv: venv, obsSp: obsSp, actSp: actSp, od: od, ad: ad, k: k, logger: logger,
		rng: agentutil.NewRNG(cfg.Seed, 1), window: agentutil.NewWindow(100), nextLog: cfg.LogEvery}
	init := agentutil.NewRNG(cfg.Seed, 0)
	// SB3's TD3 actor: MLP ending in tanh (squash_output=True).
	d.Actor = nn.NewMLP(append(append([]int{od}, cfg.Hidden...), ad), nn.ReLU, nn.Tanh)
	d.Actor.InitTorchDefault(init.Rand)
	d.Critic = nn.NewMLP(append(append([]int{od + ad}, cfg.Hidden...), 1), nn.ReLU, nn.Identity)
	d.Critic.InitTorchDefault(init.Rand)
	d.ActorTarg, d.CriticTarg = d.Actor.Clone(), d.Critic.Clone()
	d.actorOpt = nn.NewAdam(len(d.Actor.Params), cfg.LearningRate)
	d.criticOpt = nn.NewAdam(len(d.Critic.Params), cfg.LearningRate)
	d.replay = buffer.NewReplay(cfg.BufferSize, od, ad)
	B := cfg.BatchSize
	d.batch = d.replay.NewBatch(B)
	d.wsA, d.wsAT, d.wsAct = d.Actor.NewWorkspace(), d.Actor.NewWorkspace(), d.Actor.NewWorkspace()
	d.wsC, d.wsCT = d.Critic.NewWorkspace(), d.Critic.NewWorkspace()
	d.qin, d.y, d.dq, d.da = make([]float32, B*(od+ad)), make([]float32, B), make([]float32, B), make([]float32, B*ad)
	d.act, d.actEnv = make([]float32, k*ad), make([]float32, k*ad)
	b := venv.Reset(cfg.Seed)
	d.obs = append([]float32(nil), b.Obs...)
	return d, nil
}

// Kind implements rl.Agent.
func (d *DDPG) Kind() string { return "ddpg" }

// Steps implements rl.Agent.
func (d *DDPG) Steps() int64 { return d.steps }

// Stats returns the last update's diagnostics.
func (d *DDPG) Stats() Stats { return d.stats }

// EpisodeWindow returns the mean return and length of the last 100
// training episodes.
func (d *DDPG) EpisodeWindow() (meanReturn, meanLength float64) {
	return d.window.MeanReturn(), d.window.MeanLength()
}

// Iterate implements rl.Agent.
func (d *DDPG) Iterate(ctx context.Context) error {
	// Cancellation is honoured only between iterations, so a checkpoint
	// written after it holds a consistent state.
	if err := ctx.Err(); err != nil {
		return err
	}
	collected := 0
	for range d.cfg.TrainFreq {
		if d.steps < int64(d.cfg.LearningStarts) {
			for i := range d.act {
				d.act[i] = float32(2*d.rng.Float64() - 1)
			}
		} else {
			copy(d.act, d.Actor.Forward(d.wsAct, d.obs, d.k))
			if d.cfg.NoiseStd > 0 {
				for i := range d.act {
					d.act[i] = min(max(d.act[i]+float32(d.cfg.NoiseStd*d.rng.NormFloat64()), -1), 1)
				}
			}
		}
		agentutil.Unscale(d.actSp, d.act, d.actEnv)
		b := d.venv.Step(d.actEnv)
		for i := 0; i < d.k; i++ {
			next := b.Obs[i*d.od : (i+1)*d.od]
			if b.Done(i) {
				next = b.FinalObs[i*d.od : (i+1)*d.od]
			}
			d.replay.Add(d.obs[i*d.od:(i+1)*d.od], d.act[i*d.ad:(i+1)*d.ad], b.Reward[i], next, b.Terminated[i])
		}
		copy(d.obs, b.Obs)
		d.steps += int64(d.k)
		collected++
		d.window.Drain(d.venv)
	}
	if d.steps > int64(d.cfg.LearningStarts) {
		g := d.cfg.GradientSteps
		if g < 0 {
			g = collected
		}
		for range g {
			d.update()
		}
		if !agentutil.AllFinite(d.Actor.Params) || !agentutil.AllFinite(d.Critic.Params) {
			return fmt.Errorf("ddpg: non-finite parameters after %d updates (step %d)", d.updates, d.steps)
		}
	}
	if d.steps >= d.nextLog {
		d.logger.Log(d.steps,
			trainlog.F("ep_rew_mean", d.window.MeanReturn()),
			trainlog.F("ep_len_mean", d.window.MeanLength()),
			trainlog.F("actor_loss", d.stats.ActorLoss),
			trainlog.F("critic_loss", d.stats.CriticLoss),
			trainlog.F("mean_q", d.stats.MeanQ),
			trainlog.F("updates", float64(d.updates)))
		if r := d.window.MeanReturn(); !math.IsNaN(r) {
			d.logger.Describe(fmt.Sprintf("ddpg ep_rew_mean %.1f", r))
		}
		for d.nextLog <= d.steps {
			d.nextLog += d.cfg.LogEvery
		}
	}
	return nil
}

// GradientStep performs one gradient step outside the Iterate schedule
// (the replay buffer must not be empty); benchmarks use it.
func (d *DDPG) GradientStep() { d.update() }

// update is one gradient step of SB3's TD3.train with policy_delay 1 and
// target_policy_noise 0.
func (d *DDPG) update() {
	B, od, ad := d.cfg.BatchSize, d.od, d.ad
	d.replay.Sample(d.rng.Rand, d.batch)
	bt := d.batch

	// Target y = r + γ(1−d)·Q'(s', μ'(s')) (DDPG paper, Algorithm 1).
	aN := d.ActorTarg.Forward(d.wsAT, bt.Next, B)
	agentutil.Concat(d.qin, bt.Next, od, aN, ad)
	qN := d.CriticTarg.Forward(d.wsCT, d.qin, B)
	g := float32(d.cfg.Gamma)
	for i := 0; i < B; i++ {
		d.y[i] = bt.Rew[i] + (1-bt.Done[i])*g*qN[i]
	}

	// Critic: mse(Q(s, a), y).
	agentutil.Concat(d.qin, bt.Obs, od, bt.Act, ad)
	q := d.Critic.Forward(d.wsC, d.qin, B)
	var meanQ float64
	for _, v := range q {
		meanQ += float64(v) / float64(B)
	}
	clear(d.dq)
	criticLoss := nn.MSE(q, d.y, 1, d.dq)
	d.Critic.ZeroGrad()
	d.Critic.Backward(d.wsC, d.dq, false)
	d.criticOpt.Step(d.Critic.Params, d.Critic.Grads)

	// Actor: −mean Q(s, μ(s)) with the updated critic; the gradient flows
	// into μ through the critic's action input.
	a := d.Actor.Forward(d.wsA, bt.Obs, B)
	agentutil.Concat(d.qin, bt.Obs, od, a, ad)
	qa := d.Critic.Forward(d.wsC, d.qin, B)
	var actorLoss float64
	for i := 0; i < B; i++ {
		actorLoss -= float64(qa[i]) / float64(B)
		d.dq[i] = -1 / float32(B)
	}
	copy(d.da, d.Critic.BackwardInputCols(d.wsC, d.dq, od))
	d.Actor.ZeroGrad()
	d.Actor.Backward(d.wsA, d.da, false)
	d.actorOpt.Step(d.Actor.Params, d.Actor.Grads)

	nn.Polyak(d.CriticTarg.Params, d.Critic.Params, d.cfg.Tau)
	nn.Polyak(d.ActorTarg.Params, d.Actor.Params, d.cfg.Tau)
	d.updates++
	d.stats = Stats{ActorLoss: actorLoss, CriticLoss: criticLoss, MeanQ: meanQ, Updates: d.updates}
}

// Policy implements rl.Agent: the deterministic actor rescaled to the
// action bounds.
func (d *DDPG) Policy(meta policy.Meta) (*policy.Policy, error) {
	if meta.Algo == "" {
		meta.Algo = "ddpg"
	}
	meta.Steps = d.steps
	return policy.New(d.obsSp, d.actSp, policy.Rescale, d.Actor.Clone(), agentutil.ObsNormalizer(d.venv), meta)
}

// Save implements rl.Agent.
func (d *DDPG) Save(e *checkpoint.Encoder) error {
	agentutil.SaveDims(e, "ddpg", d.od, d.ad, d.k)
	e.Int64("ddpg.steps", d.steps)
	e.Int64("ddpg.updates", d.updates)
	e.Int64("ddpg.next_log", d.nextLog)
	e.Float32s("actor", d.Actor.Params)
	e.Float32s("critic", d.Critic.Params)
	e.Float32s("actor_targ", d.ActorTarg.Params)
	e.Float32s("critic_targ", d.CriticTarg.Params)
	agentutil.SaveAdam(e, "actor_opt", d.actorOpt)
	agentutil.SaveAdam(e, "critic_opt", d.criticOpt)
	d.rng.Save(e, "rng")
	d.window.Save(e)
	e.Float32s("obs", d.obs)
	d.replay.Save(e)
	return agentutil.SaveEnv(e, d.venv)
}

// Load implements rl.Agent.
func (d *DDPG) Load(dec *checkpoint.Decoder) error {
	agentutil.CheckDims(dec, "ddpg", d.od, d.ad, d.k)
	d.steps = dec.Int64("ddpg.steps")
	d.updates = dec.Int64("ddpg.updates")
	d.nextLog = dec.Int64("ddpg.next_log")
	dec.Float32sInto("actor", d.Actor.Params)
	dec.Float32sInto("critic", d.Critic.Params)
	dec.Float32sInto("actor_targ", d.ActorTarg.Params)
	dec.Float32sInto("critic_targ", d.CriticTarg.Params)
	agentutil.LoadAdam(dec, "actor_opt", d.actorOpt)
	agentutil.LoadAdam(dec, "critic_opt", d.criticOpt)
	d.rng.Load(dec, "rng")
	d.window.Load(dec)
	dec.Float32sInto("obs", d.obs)
	d.replay.Load(dec)
	if dec.Err() != nil {
		return dec.Err()
	}
	if !agentutil.LoadEnv(dec, d.venv) && dec.Err() == nil {
		b := d.venv.Reset(d.cfg.Seed ^ uint64(d.steps))
		copy(d.obs, b.Obs)
	}
	return dec.Err()
}
