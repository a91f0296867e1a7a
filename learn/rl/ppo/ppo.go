// Package ppo implements Proximal Policy Optimization (Schulman et al.
// 2017, arXiv:1707.06347) as Stable-Baselines3's PPO does: rollouts of
// NSteps from K vectorised environments, GAE(λ) advantages, the clipped
// surrogate objective, a (optionally clipped) value loss, an entropy bonus,
// NEpochs passes of shuffled minibatches, per-minibatch advantage
// normalisation, joint gradient-norm clipping and an optional KL early
// stop. Truncated episodes are bootstrapped with γ·V(final observation).
//
// Defaults are SB3's (stable_baselines3/ppo/ppo.py, SB3 2.x): learning
// rate 3e-4, n_steps 2048, batch 64, n_epochs 10, γ 0.99, λ 0.95, clip
// 0.2, no value clipping, advantage normalisation on, ent_coef 0, vf_coef
// 0.5, max_grad_norm 0.5, no target_kl, separate policy and value MLPs
// [64, 64] with tanh, orthogonal initialisation, log-std initialised to 0,
// Adam with ε 1e-5, no gSDE (UseSDE enables it).
package ppo

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

// Config holds PPO's hyper-parameters. Zero fields take SB3's defaults; a
// float set to rl.Zero is an explicit 0 (e.g. Gamma: rl.Zero), see rl.Default.
type Config struct {
	LearningRate float64 // default 3e-4
	// NSteps per environment per rollout (default 2048).
	NSteps    int
	BatchSize int // minibatch size (default 64)
	NEpochs   int // default 10
	Gamma     float64
	GAELambda float64
	// ClipRange ε of the surrogate (default 0.2).
	ClipRange float64
	// ClipRangeVF clips the value prediction around the old value if > 0
	// (default: off).
	ClipRangeVF float64
	// NoAdvantageNorm disables per-minibatch advantage normalisation.
	NoAdvantageNorm bool
	EntCoef         float64 // default 0
	VFCoef          float64 // default 0.5
	MaxGradNorm     float64 // default 0.5
	// TargetKL stops the epochs of an update early when the approximate KL
	// of a minibatch exceeds 1.5·TargetKL (default: off).
	TargetKL float64
	// Hidden widths (default [64, 64]) and activation (default tanh).
	Hidden     []int
	Activation nn.Activation
	// LogStdInit is the initial log standard deviation (default 0).
	LogStdInit float64
	// NoOrthoInit uses PyTorch's default initialisation instead of SB3's
	// orthogonal one.
	NoOrthoInit bool
	// UseSDE enables generalised state-dependent exploration (SB3's
	// use_sde; Box actions only): exploration noise is a linear function
	// of the policy's last hidden features with random weights, redrawn
	// at each rollout start and every SDESampleFreq steps if > 0 (SB3's
	// sde_sample_freq, default −1: rollout start only).
	UseSDE        bool
	SDESampleFreq int
	Seed          uint64
	// Penalty, if set, is an extra term of the loss, added to every
	// minibatch's (see Penalty). It is not saved in checkpoints: a resumed
	// learner needs the same Penalty in its Config.
	Penalty Penalty
}

// Penalty is an extra term of the loss PPO minimises per minibatch,
//
//	L = L_clip + vf_coef·L_VF − ent_coef·H + penalty,
//
// expressed on the learner's outputs for the minibatch's samples: it reads
// mb and adds its gradient with respect to V_θ(s_b) and log π_θ(a_b|s_b)
// to mb.DValues and mb.DLogP, which already hold the rest of the loss's.
// Its gradient therefore takes the same backward pass, joint gradient-norm
// clipping and Adam step as the rest. It returns its value, reported as
// Stats.Penalty (and logged as "penalty"). A nil Penalty costs one
// comparison per minibatch and changes nothing.
//
// A multi-agent learner uses it for terms involving other learners, such
// as a consensus penalty on the difference between its value estimates
// and its neighbours' (papers/datacenter); Rows index the rollout, so
// learners stepping the same environments in lockstep can match samples.
type Penalty func(mb *Minibatch) float64

// Minibatch is one gradient step's samples as a Penalty sees them. The
// slices belong to the learner and are valid only during the call; a
// penalty writes only to DValues and DLogP.
type Minibatch struct {
	// Rows are the samples' rows in the rollout: step·NumEnvs + env,
	// NumEnvs being the vectorised environment's.
	Rows []int
	// Obs are the B observations (row-major, as the learner sees them,
	// i.e. normalised when the environment normalises), Act the actions.
	Obs, Act []float32
	// Values are V_θ(s_b) and LogP log π_θ(a_b|s_b) under the current
	// parameters; OldValues are the values recorded in the rollout.
	Values, LogP, OldValues []float32
	// DValues and DLogP are ∂L/∂V_θ(s_b) and ∂L/∂log π_θ(a_b|s_b).
	DValues, DLogP []float32
}

func (c *Config) defaults() {
	c.LearningRate = rl.Default(c.LearningRate, 3e-4)
	c.NSteps = cmp.Or(c.NSteps, 2048)
	c.BatchSize = cmp.Or(c.BatchSize, 64)
	c.NEpochs = cmp.Or(c.NEpochs, 10)
	c.Gamma = rl.Default(c.Gamma, 0.99)
	c.GAELambda = rl.Default(c.GAELambda, 0.95)
	c.ClipRange = rl.Default(c.ClipRange, 0.2)
	c.VFCoef = rl.Default(c.VFCoef, 0.5)
	c.MaxGradNorm = rl.Default(c.MaxGradNorm, 0.5)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{64, 64}
	}
	if c.Activation == nn.Identity {
		c.Activation = nn.Tanh
	}
}

func (c *Config) validate(k int) error {
	switch {
	case !(c.LearningRate > 0):
		return fmt.Errorf("ppo: LearningRate %g must be positive", c.LearningRate)
	case c.NSteps < 1 || c.BatchSize < 1 || c.NEpochs < 1:
		return fmt.Errorf("ppo: NSteps %d, BatchSize %d, NEpochs %d must be >= 1", c.NSteps, c.BatchSize, c.NEpochs)
	case c.NSteps*k < 2:
		return fmt.Errorf("ppo: rollout of %d×%d steps is too small; SB3 requires n_steps·n_envs > 1", c.NSteps, k)
	case c.Gamma < 0 || c.Gamma > 1 || c.GAELambda < 0 || c.GAELambda > 1:
		return fmt.Errorf("ppo: Gamma %g and GAELambda %g must be in [0, 1]", c.Gamma, c.GAELambda)
	case c.ClipRange <= 0 || c.ClipRangeVF < 0 || c.EntCoef < 0 || c.VFCoef < 0 || c.MaxGradNorm <= 0 || c.TargetKL < 0:
		return fmt.Errorf("ppo: ClipRange %g, ClipRangeVF %g, EntCoef %g, VFCoef %g, MaxGradNorm %g, TargetKL %g out of range",
			c.ClipRange, c.ClipRangeVF, c.EntCoef, c.VFCoef, c.MaxGradNorm, c.TargetKL)
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("ppo: hidden width %d must be >= 1", h)
		}
	}
	return nil
}

// Stats are the last update's diagnostics (means over its minibatches,
// as SB3 logs them).
type Stats struct {
	PolicyLoss, ValueLoss, EntropyLoss, ApproxKL, ClipFraction float64
	// ExplainedVariance of the value function over the rollout.
	ExplainedVariance float64
	// Std is the mean policy standard deviation (Box actions).
	Std float64
	// Epochs actually run (fewer when the KL early stop fired).
	Epochs int
	// Penalty is the mean of Config.Penalty's values (0 without one).
	Penalty float64
}

// PPO is a PPO learner bound to a vectorised environment.
type PPO struct {
	cfg    Config
	venv   env.VecEnv
	k      int
	AC     *onpolicy.ActorCritic
	opt    []*nn.Adam // one per parameter slice (Adam is elementwise)
	coll   *onpolicy.Collector
	roll   *buffer.Rollout
	rng    *agentutil.RNG
	logger *trainlog.Logger
	steps  int64
	iters  int64
	stats  Stats
	idx    []int
	// minibatches counts gradient steps in the last update.
	minibatches int
	mbObs       []float32
	mbAct       []float32
	mbOld       []float32
	mbAdv       []float32
	mbRet       []float32
	mbOldV      []float32
	dlogp       []float32
	dent        []float32
	dv          []float32
	mbRows      []int
	mb          Minibatch
}

// New builds a PPO learner for venv. logger may be nil.
func New(venv env.VecEnv, cfg Config, logger *trainlog.Logger) (*PPO, error) {
	cfg.defaults()
	k := venv.NumEnvs()
	if err := cfg.validate(k); err != nil {
		return nil, err
	}
	obs, act := venv.ObservationSpace(), venv.ActionSpace()
	ac, err := onpolicy.NewActorCritic(obs, act, cfg.Hidden, cfg.Activation, !cfg.NoOrthoInit, cfg.LogStdInit, cfg.UseSDE, agentutil.NewRNG(cfg.Seed, 0))
	if err != nil {
		return nil, fmt.Errorf("ppo: %w", err)
	}
	if logger == nil {
		logger = &trainlog.Logger{}
	}
	p := &PPO{cfg: cfg, venv: venv, k: k, AC: ac, rng: agentutil.NewRNG(cfg.Seed, 1), logger: logger}
	for _, ps := range ac.Params() {
		a := nn.NewAdam(len(ps), cfg.LearningRate)
		a.Eps = 1e-5 // SB3 ActorCriticPolicy: Adam eps 1e-5
		p.opt = append(p.opt, a)
	}
	p.roll = buffer.NewRollout(cfg.NSteps, k, obs.Dim(), act.Dim())
	p.coll = onpolicy.NewCollector(venv, ac, cfg.Gamma, cfg.Seed)
	B, od, ad := cfg.BatchSize, obs.Dim(), act.Dim()
	f := func(n int) []float32 { return make([]float32, n) }
	p.mbObs, p.mbAct, p.mbOld, p.mbAdv, p.mbRet, p.mbOldV = f(B*od), f(B*ad), f(B), f(B), f(B), f(B)
	p.dlogp, p.dent, p.dv = f(B), f(B), f(B)
	if cfg.Penalty != nil {
		p.mbRows = make([]int, B)
	}
	return p, nil
}

// Kind implements rl.Agent.
func (p *PPO) Kind() string { return "ppo" }

// Steps implements rl.Agent.
func (p *PPO) Steps() int64 { return p.steps }

// Stats returns the last update's diagnostics.
func (p *PPO) Stats() Stats { return p.stats }

// EpisodeWindow returns the mean return and length of the last 100
// training episodes.
func (p *PPO) EpisodeWindow() (meanReturn, meanLength float64) {
	return p.coll.Window.MeanReturn(), p.coll.Window.MeanLength()
}

// Iterate implements rl.Agent: one rollout and its update (Collect, then
// Update).
func (p *PPO) Iterate(ctx context.Context) error {
	if err := p.Collect(ctx); err != nil {
		return err
	}
	return p.Update(ctx)
}

// Collect gathers one rollout, the first half of Iterate. Learners whose
// Penalty reads other learners' rollouts (RolloutValues) call Collect on
// all of them, then Update on all, so every rollout is complete and no
// longer written when the updates read it.
func (p *PPO) Collect(ctx context.Context) error {
	// Cancellation is honoured only between iterations, so a checkpoint
	// written after it holds a consistent state.
	if err := ctx.Err(); err != nil {
		return err
	}
	p.steps += p.coll.Collect(p.rng, p.roll, p.cfg.GAELambda, p.cfg.SDESampleFreq)
	return nil
}

// RolloutValues returns V(s) as recorded for every row of the last
// rollout (row step·NumEnvs + env), by the parameters that collected it.
// The slice belongs to the learner: read it between Collect and the next
// Collect, and do not modify it.
func (p *PPO) RolloutValues() []float32 { return p.roll.Val[:p.roll.Len()] }

// Update runs the update epochs on the rollout of the last Collect and
// logs the iteration, the second half of Iterate.
func (p *PPO) Update(ctx context.Context) error {
	if err := p.update(ctx); err != nil {
		return err
	}
	p.iters++
	st := p.stats
	fields := []trainlog.Field{
		trainlog.F("ep_rew_mean", p.coll.Window.MeanReturn()),
		trainlog.F("ep_len_mean", p.coll.Window.MeanLength()),
		trainlog.F("policy_loss", st.PolicyLoss),
		trainlog.F("value_loss", st.ValueLoss),
		trainlog.F("entropy_loss", st.EntropyLoss),
		trainlog.F("approx_kl", st.ApproxKL),
		trainlog.F("clip_fraction", st.ClipFraction),
		trainlog.F("explained_variance", st.ExplainedVariance),
		trainlog.F("std", st.Std),
		trainlog.F("epochs", float64(st.Epochs)),
	}
	if p.cfg.Penalty != nil {
		// Only with a penalty, so that logs without one are unchanged.
		fields = append(fields, trainlog.F("penalty", st.Penalty))
	}
	p.logger.Log(p.steps, fields...)
	if r := p.coll.Window.MeanReturn(); !math.IsNaN(r) {
		p.logger.Describe(fmt.Sprintf("ppo ep_rew_mean %.1f", r))
	}
	return nil
}

// Reoptimize runs the update epochs on the current rollout again and
// returns the number of minibatch gradient steps taken; benchmarks use it
// to time updates without collecting experience.
func (p *PPO) Reoptimize(ctx context.Context) (int, error) {
	err := p.update(ctx)
	return p.minibatches, err
}

// update runs SB3's PPO.train over the stored rollout.
func (p *PPO) update(ctx context.Context) error {
	p.minibatches = 0
	r := p.roll
	n := r.Len()
	od, ad := r.ObsDim, r.ActDim
	var sums struct{ pg, vf, ent, kl, clip, pen float64 }
	var count int
	epochs := 0
	cont := true
	for epoch := 0; epoch < p.cfg.NEpochs && cont; epoch++ {
		epochs++
		p.idx = r.Permutation(p.rng.Rand, p.idx)
		for start := 0; start < n; start += p.cfg.BatchSize {
			end := min(start+p.cfg.BatchSize, n)
			B := end - start
			for j, i := range p.idx[start:end] {
				copy(p.mbObs[j*od:(j+1)*od], r.Obs[i*od:(i+1)*od])
				copy(p.mbAct[j*ad:(j+1)*ad], r.Act[i*ad:(i+1)*ad])
				p.mbOld[j], p.mbAdv[j], p.mbRet[j], p.mbOldV[j] = r.LogP[i], r.Adv[i], r.Ret[i], r.Val[i]
			}
			obs, act := p.mbObs[:B*od], p.mbAct[:B*ad]
			adv := p.mbAdv[:B]
			if !p.cfg.NoAdvantageNorm && B > 1 {
				normalise(adv)
			}
			ev := p.AC.Evaluate(obs, act, B)
			dlogp, dent, dv := p.dlogp[:B], p.dent[:B], p.dv[:B]
			clear(dlogp)
			clear(dv)
			st := nn.PPOClip(ev.LogP, p.mbOld[:B], adv, p.cfg.ClipRange, 1, dlogp)
			vl := nn.ValueLoss(ev.Values, p.mbOldV[:B], p.mbRet[:B], p.cfg.ClipRangeVF, p.cfg.VFCoef, dv)
			var entMean float64
			for j, h := range ev.Entropy {
				entMean += float64(h) / float64(B)
				// entropy_loss = −mean(H), weighted by ent_coef.
				dent[j] = float32(-p.cfg.EntCoef / float64(B))
			}
			if p.cfg.Penalty != nil {
				rows := p.mbRows[:B]
				copy(rows, p.idx[start:end])
				p.mb = Minibatch{Rows: rows, Obs: obs, Act: act, Values: ev.Values[:B], LogP: ev.LogP[:B], OldValues: p.mbOldV[:B],
					DValues: dv, DLogP: dlogp}
				sums.pen += p.cfg.Penalty(&p.mb)
				p.mb = Minibatch{} // the slices are the learner's
			}
			sums.pg += st.Loss
			sums.vf += vl
			sums.ent += -entMean
			sums.clip += st.ClipFraction
			sums.kl += st.ApproxKL
			count++
			if p.cfg.TargetKL > 0 && st.ApproxKL > 1.5*p.cfg.TargetKL {
				cont = false
				break
			}
			p.AC.ZeroGrad()
			p.AC.Backward(act, B, dlogp, dent, dv)
			p.minibatches++
			nn.ClipGradNorm(p.cfg.MaxGradNorm, p.AC.Grads()...)
			for j, ps := range p.AC.Params() {
				p.opt[j].Step(ps, p.AC.Grads()[j])
			}
		}
	}
	for _, ps := range p.AC.Params() {
		if !agentutil.AllFinite(ps) {
			return fmt.Errorf("ppo: non-finite parameters at step %d; lower the learning rate or check rewards", p.steps)
		}
	}
	c := float64(max(count, 1))
	p.stats = Stats{PolicyLoss: sums.pg / c, ValueLoss: sums.vf / c, EntropyLoss: sums.ent / c, ApproxKL: sums.kl / c,
		ClipFraction: sums.clip / c, ExplainedVariance: explainedVariance(r.Val[:n], r.Ret[:n]), Epochs: epochs, Penalty: sums.pen / c}
	if !p.AC.Discrete {
		for _, ls := range p.AC.LogStd {
			p.stats.Std += math.Exp(float64(ls)) / float64(len(p.AC.LogStd))
		}
	}
	return nil
}

// normalise standardises x with the unbiased standard deviation and SB3's
// 1e-8, as (adv − mean)/(std + 1e-8) with torch's std.
func normalise(x []float32) {
	var m float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (float64(v) - m) * (float64(v) - m)
	}
	sd := math.Sqrt(ss / float64(len(x)-1))
	for i, v := range x {
		x[i] = float32((float64(v) - m) / (sd + 1e-8))
	}
}

// explainedVariance is 1 − Var(returns − values)/Var(returns) (SB3's
// explained_variance), NaN when the returns are constant.
func explainedVariance(pred, target []float32) float64 {
	var mt, md float64
	n := float64(len(target))
	for i := range target {
		mt += float64(target[i]) / n
		md += float64(target[i]-pred[i]) / n
	}
	var vt, vd float64
	for i := range target {
		vt += (float64(target[i]) - mt) * (float64(target[i]) - mt)
		e := float64(target[i]-pred[i]) - md
		vd += e * e
	}
	if vt == 0 {
		return math.NaN()
	}
	return 1 - vd/vt
}

// Policy implements rl.Agent.
func (p *PPO) Policy(meta policy.Meta) (*policy.Policy, error) {
	if meta.Algo == "" {
		meta.Algo = "ppo"
	}
	meta.Steps = p.steps
	return p.AC.Policy(p.venv, meta)
}

// Save implements rl.Agent.
func (p *PPO) Save(e *checkpoint.Encoder) error {
	agentutil.SaveDims(e, "ppo", p.roll.ObsDim, p.roll.ActDim, p.k)
	e.Int64("ppo.steps", p.steps)
	e.Int64("ppo.iters", p.iters)
	p.AC.Save(e)
	for j, a := range p.opt {
		agentutil.SaveAdam(e, fmt.Sprintf("opt%d", j), a)
	}
	p.rng.Save(e, "rng")
	return p.coll.Save(e)
}

// Load implements rl.Agent.
func (p *PPO) Load(d *checkpoint.Decoder) error {
	agentutil.CheckDims(d, "ppo", p.roll.ObsDim, p.roll.ActDim, p.k)
	p.steps = d.Int64("ppo.steps")
	p.iters = d.Int64("ppo.iters")
	p.AC.Load(d)
	for j, a := range p.opt {
		agentutil.LoadAdam(d, fmt.Sprintf("opt%d", j), a)
	}
	p.rng.Load(d, "rng")
	p.coll.Load(d, p.cfg.Seed^uint64(p.steps))
	return d.Err()
}
