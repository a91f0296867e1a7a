// Package a2c implements Advantage Actor-Critic (Mnih et al. 2016,
// synchronous variant) as Stable-Baselines3's A2C does: short rollouts
// from K vectorised environments, GAE(λ) advantages (λ = 1 gives the
// classic n-step returns), one gradient step per rollout on
// −mean(A·log π) + vf_coef·mse(R, V) − ent_coef·mean(H) with RMSprop and
// gradient-norm clipping. Truncated episodes are bootstrapped. It is the
// data-centre study's policy-gradient baseline.
//
// Defaults are SB3's (stable_baselines3/a2c/a2c.py, SB3 2.x): learning
// rate 7e-4, n_steps 5, γ 0.99, λ 1, ent_coef 0, vf_coef 0.5,
// max_grad_norm 0.5, RMSprop (α 0.99, ε 1e-5), no advantage
// normalisation, the same actor-critic networks as PPO ([64, 64] tanh,
// orthogonal initialisation, log-std 0).
package a2c

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
	"github.com/cclab/cclab/learn/rl/internal/onpolicy"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// Config holds A2C's hyper-parameters. Zero fields take SB3's defaults; a
// float set to rl.Zero is an explicit 0 (e.g. Gamma: rl.Zero), see rl.Default.
type Config struct {
	LearningRate float64 // default 7e-4
	NSteps       int     // per environment per update (default 5)
	Gamma        float64 // default 0.99
	GAELambda    float64 // default 1
	EntCoef      float64 // default 0
	VFCoef       float64 // default 0.5
	MaxGradNorm  float64 // default 0.5
	// NormalizeAdvantage standardises advantages per update (default off).
	NormalizeAdvantage bool
	// UseAdam replaces RMSprop with Adam (ε 1e-5), SB3's use_rms_prop=False.
	UseAdam    bool
	Hidden     []int // default [64, 64]
	Activation nn.Activation
	LogStdInit float64
	Seed       uint64
}

func (c *Config) defaults() {
	c.LearningRate = rl.Default(c.LearningRate, 7e-4)
	c.NSteps = cmp.Or(c.NSteps, 5)
	c.Gamma = rl.Default(c.Gamma, 0.99)
	c.GAELambda = rl.Default(c.GAELambda, 1)
	c.VFCoef = rl.Default(c.VFCoef, 0.5)
	c.MaxGradNorm = rl.Default(c.MaxGradNorm, 0.5)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{64, 64}
	}
	if c.Activation == nn.Identity {
		c.Activation = nn.Tanh
	}
}

// Stats are the last update's diagnostics.
type Stats struct {
	PolicyLoss, ValueLoss, EntropyLoss, Std float64
}

// A2C is an A2C learner bound to a vectorised environment.
type A2C struct {
	cfg    Config
	venv   env.VecEnv
	k      int
	AC     *onpolicy.ActorCritic
	rms    []*nn.RMSprop
	adam   []*nn.Adam
	coll   *onpolicy.Collector
	roll   *buffer.Rollout
	rng    *agentutil.RNG
	logger *trainlog.Logger
	steps  int64
	stats  Stats
	dlogp  []float32
	dent   []float32
	dv     []float32
	adv    []float32
}

// New builds an A2C learner for venv. logger may be nil.
func New(venv env.VecEnv, cfg Config, logger *trainlog.Logger) (*A2C, error) {
	cfg.defaults()
	switch {
	case !(cfg.LearningRate > 0) || cfg.NSteps < 1:
		return nil, fmt.Errorf("a2c: LearningRate %g and NSteps %d must be positive", cfg.LearningRate, cfg.NSteps)
	case cfg.Gamma < 0 || cfg.Gamma > 1 || cfg.GAELambda < 0 || cfg.GAELambda > 1:
		return nil, fmt.Errorf("a2c: Gamma %g and GAELambda %g must be in [0, 1]", cfg.Gamma, cfg.GAELambda)
	case cfg.EntCoef < 0 || cfg.VFCoef < 0 || cfg.MaxGradNorm <= 0:
		return nil, fmt.Errorf("a2c: EntCoef %g, VFCoef %g must be >= 0 and MaxGradNorm %g > 0", cfg.EntCoef, cfg.VFCoef, cfg.MaxGradNorm)
	}
	obs, act := venv.ObservationSpace(), venv.ActionSpace()
	ac, err := onpolicy.NewActorCritic(obs, act, cfg.Hidden, cfg.Activation, true, cfg.LogStdInit, false, agentutil.NewRNG(cfg.Seed, 0))
	if err != nil {
		return nil, fmt.Errorf("a2c: %w", err)
	}
	if logger == nil {
		logger = &trainlog.Logger{}
	}
	k := venv.NumEnvs()
	a := &A2C{cfg: cfg, venv: venv, k: k, AC: ac, rng: agentutil.NewRNG(cfg.Seed, 1), logger: logger}
	for _, ps := range ac.Params() {
		if cfg.UseAdam {
			o := nn.NewAdam(len(ps), cfg.LearningRate)
			o.Eps = 1e-5
			a.adam = append(a.adam, o)
		} else {
			a.rms = append(a.rms, nn.NewRMSprop(len(ps), cfg.LearningRate))
		}
	}
	a.roll = buffer.NewRollout(cfg.NSteps, k, obs.Dim(), act.Dim())
	a.coll = onpolicy.NewCollector(venv, ac, cfg.Gamma, cfg.Seed)
	n := cfg.NSteps * k
	a.dlogp, a.dent, a.dv, a.adv = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	return a, nil
}

// Kind implements rl.Agent.
func (a *A2C) Kind() string { return "a2c" }

// Steps implements rl.Agent.
func (a *A2C) Steps() int64 { return a.steps }

// Stats returns the last update's diagnostics.
func (a *A2C) Stats() Stats { return a.stats }

// EpisodeWindow returns the mean return and length of the last 100
// training episodes.
func (a *A2C) EpisodeWindow() (meanReturn, meanLength float64) {
	return a.coll.Window.MeanReturn(), a.coll.Window.MeanLength()
}

// Iterate implements rl.Agent: one rollout and one gradient step (SB3's
// A2C.train).
func (a *A2C) Iterate(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.steps += a.coll.Collect(a.rng, a.roll, a.cfg.GAELambda, 0)
	r := a.roll
	n := r.Len()
	copy(a.adv, r.Adv[:n])
	if a.cfg.NormalizeAdvantage && n > 1 {
		var m, ss float64
		for _, v := range a.adv {
			m += float64(v) / float64(n)
		}
		for _, v := range a.adv {
			ss += (float64(v) - m) * (float64(v) - m)
		}
		sd := math.Sqrt(ss / float64(n-1))
		for i, v := range a.adv {
			a.adv[i] = float32((float64(v) - m) / (sd + 1e-8))
		}
	}
	ev := a.AC.Evaluate(r.Obs[:n*r.ObsDim], r.Act[:n*r.ActDim], n)
	var pg, ent float64
	for i := 0; i < n; i++ {
		// policy_loss = −mean(A·log π).
		pg -= float64(a.adv[i]) * float64(ev.LogP[i]) / float64(n)
		a.dlogp[i] = -a.adv[i] / float32(n)
		ent += float64(ev.Entropy[i]) / float64(n)
		a.dent[i] = float32(-a.cfg.EntCoef / float64(n))
	}
	clear(a.dv)
	vl := nn.ValueLoss(ev.Values, nil, r.Ret[:n], 0, a.cfg.VFCoef, a.dv)
	a.AC.ZeroGrad()
	a.AC.Backward(r.Act[:n*r.ActDim], n, a.dlogp, a.dent, a.dv)
	nn.ClipGradNorm(a.cfg.MaxGradNorm, a.AC.Grads()...)
	grads := a.AC.Grads()
	for j, ps := range a.AC.Params() {
		if a.cfg.UseAdam {
			a.adam[j].Step(ps, grads[j])
		} else {
			a.rms[j].Step(ps, grads[j])
		}
		if !agentutil.AllFinite(ps) {
			return fmt.Errorf("a2c: non-finite parameters at step %d", a.steps)
		}
	}
	a.stats = Stats{PolicyLoss: pg, ValueLoss: vl, EntropyLoss: -ent}
	if !a.AC.Discrete {
		for _, ls := range a.AC.LogStd {
			a.stats.Std += math.Exp(float64(ls)) / float64(len(a.AC.LogStd))
		}
	}
	a.logger.Log(a.steps,
		trainlog.F("ep_rew_mean", a.coll.Window.MeanReturn()),
		trainlog.F("ep_len_mean", a.coll.Window.MeanLength()),
		trainlog.F("policy_loss", pg),
		trainlog.F("value_loss", vl),
		trainlog.F("entropy_loss", -ent),
		trainlog.F("std", a.stats.Std))
	return nil
}

// Policy implements rl.Agent.
func (a *A2C) Policy(meta policy.Meta) (*policy.Policy, error) {
	if meta.Algo == "" {
		meta.Algo = "a2c"
	}
	meta.Steps = a.steps
	return a.AC.Policy(a.venv, meta)
}

// Save implements rl.Agent.
func (a *A2C) Save(e *checkpoint.Encoder) error {
	agentutil.SaveDims(e, "a2c", a.roll.ObsDim, a.roll.ActDim, a.k)
	e.Int64("a2c.steps", a.steps)
	a.AC.Save(e)
	for j, o := range a.rms {
		e.Float32s(fmt.Sprintf("rms%d.v", j), o.V)
	}
	for j, o := range a.adam {
		agentutil.SaveAdam(e, fmt.Sprintf("adam%d", j), o)
	}
	a.rng.Save(e, "rng")
	return a.coll.Save(e)
}

// Load implements rl.Agent.
func (a *A2C) Load(d *checkpoint.Decoder) error {
	agentutil.CheckDims(d, "a2c", a.roll.ObsDim, a.roll.ActDim, a.k)
	a.steps = d.Int64("a2c.steps")
	a.AC.Load(d)
	for j, o := range a.rms {
		d.Float32sInto(fmt.Sprintf("rms%d.v", j), o.V)
	}
	for j, o := range a.adam {
		agentutil.LoadAdam(d, fmt.Sprintf("adam%d", j), o)
	}
	a.rng.Load(d, "rng")
	a.coll.Load(d, a.cfg.Seed^uint64(a.steps))
	return d.Err()
}
