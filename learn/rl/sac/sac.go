// Package sac implements Soft Actor-Critic (Haarnoja et al. 2018, "Soft
// Actor-Critic Algorithms and Applications", arXiv:1812.05905) as
// Stable-Baselines3's SAC does: twin Q critics with Polyak-averaged
// targets, a tanh-squashed Gaussian actor trained by reparameterisation,
// automatic entropy tuning towards −dim(A), a uniform replay buffer,
// uniformly random actions before LearningStarts, and TrainFreq /
// GradientSteps scheduling. Terminations stop bootstrapping; truncations
// do not.
//
// Defaults are SB3's (stable_baselines3/sac/sac.py, SB3 2.x): learning
// rate 3e-4, buffer 1e6, learning_starts 100, batch 256, τ 0.005, γ 0.99,
// train_freq 1, gradient_steps 1, ent_coef "auto" starting at 1,
// target_entropy −dim(A), target_update_interval 1, networks [256, 256]
// with ReLU, Adam (ε 1e-8), PyTorch's default layer initialisation.
package sac

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

// Config holds SAC's hyper-parameters. Zero fields take SB3's defaults; a
// float set to rl.Zero is an explicit 0 (e.g. Gamma: rl.Zero), see rl.Default.
type Config struct {
	// LearningRate for actor, critics and entropy coefficient (default 3e-4).
	LearningRate float64
	// BufferSize is the replay capacity in transitions (default 1e6).
	BufferSize int
	// LearningStarts is the number of steps of uniformly random actions
	// before training begins (default 100; set NoLearningStarts for 0).
	LearningStarts   int
	NoLearningStarts bool
	// BatchSize is the minibatch size (default 256).
	BatchSize int
	// Tau is the Polyak coefficient of the target critics (default 0.005).
	Tau float64
	// Gamma is the discount (default 0.99).
	Gamma float64
	// TrainFreq is the number of vectorised steps between updates
	// (default 1); each vectorised step adds NumEnvs transitions.
	TrainFreq int
	// GradientSteps per update (default 1; −1: as many as vectorised steps
	// collected, SB3's gradient_steps=-1).
	GradientSteps int
	// EntCoef fixes the entropy coefficient α if > 0; otherwise α is
	// learned ("auto") starting from EntCoefInit (default 1).
	EntCoef, EntCoefInit float64
	// TargetEntropy for automatic tuning; 0 means −dim(A), rl.Zero an
	// explicit 0.
	TargetEntropy float64
	// TargetUpdateInterval is the number of gradient steps between target
	// updates (default 1).
	TargetUpdateInterval int
	// Hidden lists hidden-layer widths for actor and critics (default
	// [256, 256]).
	Hidden []int
	// NStep is the number of rewards in a critic target (default 1, SB3's
	// SAC): with n > 1 the target of the transition leaving s_t is
	// Σ_{j<n} γ^j r_{t+j} + γ^n (min_i Q̄_i(s_{t+n}, a') − α log π(a'|s_{t+n})),
	// with fewer steps when the episode ends first (nstepQueue).
	NStep int
	// Seed drives initialisation, exploration, sampling and episodes.
	Seed uint64
	// LogEvery is the number of environment steps between log rows
	// (default 1000).
	LogEvery int64
	// Demonstrator, with DemoSteps > 0, chooses the actions of the first
	// DemoSteps environment steps (counted as LearningStarts is) in place
	// of uniform noise and of the policy: learning from demonstrations
	// (Vecerik et al.'s DDPGfD, Nair et al.), so that the replay buffer
	// holds transitions of a sender that completes its task before the
	// policy acts. Training proceeds as usual meanwhile. DemoNoise is the
	// standard deviation of Gaussian noise added to each demonstrated
	// action (scaled space, clipped to [−1, 1]) so that the critics see
	// actions around the demonstration's, not only on it.
	Demonstrator Demonstrator
	DemoSteps    int64
	DemoNoise    float64
	// BCWeight, with a Demonstrator, adds a behaviour-cloning term to the
	// actor's loss for the whole of training (TD3+BC, Fujimoto and Gu
	// 2021): BCWeight · mean|Q| · mean (tanh μ(s) − g)², where g is the
	// demonstrator's action at s, recorded with every transition, and
	// mean|Q| (the batch's, not differentiated) puts the term on the
	// critic's scale whatever the rewards' (TD3+BC's α = 2.5 is BCWeight
	// 0.4). The critics are unchanged, so the policy may leave the
	// demonstration where they value that more than the weight costs.
	BCWeight float64
}

// Demonstrator chooses demonstration actions (Config.Demonstrator).
type Demonstrator interface {
	// Demonstrate writes environment env's next action, scaled to
	// [−1, 1] per dimension, into act. It is called between vectorised
	// steps, when no environment is running.
	Demonstrate(env int, act []float32)
}

func (c *Config) defaults() {
	c.LearningRate = rl.Default(c.LearningRate, 3e-4)
	c.BufferSize = cmp.Or(c.BufferSize, 1_000_000)
	if c.LearningStarts == 0 && !c.NoLearningStarts {
		c.LearningStarts = 100
	}
	c.BatchSize = cmp.Or(c.BatchSize, 256)
	c.Tau = rl.Default(c.Tau, 0.005)
	c.Gamma = rl.Default(c.Gamma, 0.99)
	c.TrainFreq = cmp.Or(c.TrainFreq, 1)
	c.GradientSteps = cmp.Or(c.GradientSteps, 1)
	c.EntCoefInit = rl.Default(c.EntCoefInit, 1)
	c.TargetUpdateInterval = cmp.Or(c.TargetUpdateInterval, 1)
	c.NStep = cmp.Or(c.NStep, 1)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{256, 256}
	}
	c.LogEvery = cmp.Or(c.LogEvery, 1000)
}

func (c *Config) validate() error {
	switch {
	case c.LearningRate < 0 || math.IsNaN(c.LearningRate):
		return fmt.Errorf("sac: LearningRate %g must be positive", c.LearningRate)
	case c.BufferSize < 1:
		return fmt.Errorf("sac: BufferSize %d must be >= 1", c.BufferSize)
	case c.LearningStarts < 0:
		return fmt.Errorf("sac: LearningStarts %d must be >= 0", c.LearningStarts)
	case c.BatchSize < 1:
		return fmt.Errorf("sac: BatchSize %d must be >= 1", c.BatchSize)
	case c.Tau <= 0 || c.Tau > 1:
		return fmt.Errorf("sac: Tau %g must be in (0, 1]", c.Tau)
	case c.Gamma < 0 || c.Gamma > 1:
		return fmt.Errorf("sac: Gamma %g must be in [0, 1]", c.Gamma)
	case c.TrainFreq < 1:
		return fmt.Errorf("sac: TrainFreq %d must be >= 1", c.TrainFreq)
	case c.GradientSteps < -1:
		return fmt.Errorf("sac: GradientSteps %d must be >= 1 or -1", c.GradientSteps)
	case c.EntCoef < 0 || c.EntCoefInit <= 0:
		return fmt.Errorf("sac: EntCoef %g and EntCoefInit %g must be positive", c.EntCoef, c.EntCoefInit)
	case c.TargetUpdateInterval < 1:
		return fmt.Errorf("sac: TargetUpdateInterval %d must be >= 1", c.TargetUpdateInterval)
	case c.NStep < 1:
		return fmt.Errorf("sac: NStep %d must be >= 1", c.NStep)
	case c.DemoSteps < 0 || c.DemoSteps > 0 && c.Demonstrator == nil:
		return fmt.Errorf("sac: DemoSteps %d must be >= 0, and > 0 only with a Demonstrator", c.DemoSteps)
	case c.DemoNoise < 0 || math.IsNaN(c.DemoNoise):
		return fmt.Errorf("sac: DemoNoise %g must be >= 0", c.DemoNoise)
	case !(c.BCWeight >= 0) || math.IsInf(c.BCWeight, 1) || c.BCWeight > 0 && c.Demonstrator == nil:
		return fmt.Errorf("sac: BCWeight %g must be finite and >= 0, and > 0 only with a Demonstrator", c.BCWeight)
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("sac: hidden width %d must be >= 1", h)
		}
	}
	return nil
}

// Stats are the most recent update's diagnostics.
type Stats struct {
	ActorLoss, CriticLoss, EntCoef, EntCoefLoss float64
	// Entropy is −mean log π(a|s) of the last batch (nats).
	Entropy float64
	// MeanQ is the mean of the first critic over the last batch.
	MeanQ float64
	// BCLoss is the behaviour-cloning term of ActorLoss (Config.BCWeight).
	BCLoss float64
	// Updates counts gradient steps so far.
	Updates int64
}

// SAC is a Soft Actor-Critic learner bound to a vectorised environment.
type SAC struct {
	cfg    Config
	venv   env.VecEnv
	obsSp  space.Space
	actSp  space.Space
	od, ad int
	k      int

	Actor          *nn.MLP // obs → [mean | log σ] (2·ad outputs)
	Q1, Q2         *nn.MLP // [obs | a] → Q
	Q1Targ, Q2Targ *nn.MLP
	actorOpt       *nn.Adam
	q1Opt, q2Opt   *nn.Adam
	logAlpha       []float32
	logAlphaGrad   []float32
	alphaOpt       *nn.Adam
	targetEntropy  float64
	replay         *buffer.Replay
	nstep          []*nstepQueue  // per environment, with NStep > 1
	rng            *agentutil.RNG // exploration and sampling
	window         *agentutil.Window
	logger         *trainlog.Logger
	steps, updates int64
	nextLog        int64
	obs            []float32 // current observations, K×od
	stats          Stats

	// Scratch, sized for the batch.
	batch                               *buffer.Batch
	wsA, wsAN, wsQ1, wsQ2, wsT1, wsT2   *nn.Workspace
	mean, logStd, noise, aPi, logp      []float32
	meanN, logStdN, noiseN, aN, logpN   []float32
	qin, y, dq, dOut, da, dmean, dlogSd []float32
	dlogp                               []float32
	actScaled, actEnv                   []float32
	actGuide                            []float32 // K×ad, with BCWeight
	actMean, actLogStd, actNoise, actLp []float32
	wsAct                               *nn.Workspace
}

// New builds a SAC learner for venv (Box actions with finite bounds; Box
// observations). logger may be nil.
func New(venv env.VecEnv, cfg Config, logger *trainlog.Logger) (*SAC, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	obsSp, actSp := venv.ObservationSpace(), venv.ActionSpace()
	if actSp.Kind != space.KindBox || !actSp.Bounded() {
		return nil, fmt.Errorf("sac: needs a bounded Box action space, got %v", actSp)
	}
	if obsSp.Kind != space.KindBox {
		return nil, fmt.Errorf("sac: needs a Box observation space, got %v", obsSp)
	}
	if logger == nil {
		logger = &trainlog.Logger{}
	}
	od, ad, k := obsSp.Dim(), actSp.Dim(), venv.NumEnvs()
	s := &SAC{cfg: cfg, venv: venv, obsSp: obsSp, actSp: actSp, od: od, ad: ad, k: k, logger: logger,
		rng: agentutil.NewRNG(cfg.Seed, 1), window: agentutil.NewWindow(100), nextLog: cfg.LogEvery}
	initRNG := agentutil.NewRNG(cfg.Seed, 0)
	s.Actor = nn.NewMLP(sizes(od, cfg.Hidden, 2*ad), nn.ReLU, nn.Identity)
	s.Actor.InitTorchDefault(initRNG.Rand)
	s.Q1 = nn.NewMLP(sizes(od+ad, cfg.Hidden, 1), nn.ReLU, nn.Identity)
	s.Q1.InitTorchDefault(initRNG.Rand)
	s.Q2 = nn.NewMLP(sizes(od+ad, cfg.Hidden, 1), nn.ReLU, nn.Identity)
	s.Q2.InitTorchDefault(initRNG.Rand)
	s.Q1Targ, s.Q2Targ = s.Q1.Clone(), s.Q2.Clone()
	s.actorOpt = nn.NewAdam(len(s.Actor.Params), cfg.LearningRate)
	s.q1Opt = nn.NewAdam(len(s.Q1.Params), cfg.LearningRate)
	s.q2Opt = nn.NewAdam(len(s.Q2.Params), cfg.LearningRate)
	s.logAlpha = []float32{float32(math.Log(cfg.EntCoefInit))}
	s.logAlphaGrad = []float32{0}
	s.alphaOpt = nn.NewAdam(1, cfg.LearningRate)
	s.targetEntropy = rl.Default(cfg.TargetEntropy, -float64(ad)) // SB3: -prod(action_space.shape)
	s.replay = buffer.NewReplay(cfg.BufferSize, od, ad)
	if cfg.BCWeight > 0 {
		s.replay.EnableGuide()
	}
	if cfg.NStep > 1 {
		for range k {
			s.nstep = append(s.nstep, newNStepQueue(cfg.NStep, od, ad, cfg.Gamma, cfg.BCWeight > 0))
		}
	}
	s.alloc()
	b := venv.Reset(cfg.Seed)
	s.obs = append([]float32(nil), b.Obs...)
	return s, nil
}

func sizes(in int, hidden []int, out int) []int {
	s := append([]int{in}, hidden...)
	return append(s, out)
}

func (s *SAC) alloc() {
	B, od, ad, k := s.cfg.BatchSize, s.od, s.ad, s.k
	s.batch = s.replay.NewBatch(B)
	s.wsA, s.wsAN = s.Actor.NewWorkspace(), s.Actor.NewWorkspace()
	s.wsQ1, s.wsQ2 = s.Q1.NewWorkspace(), s.Q2.NewWorkspace()
	s.wsT1, s.wsT2 = s.Q1Targ.NewWorkspace(), s.Q2Targ.NewWorkspace()
	s.wsAct = s.Actor.NewWorkspace()
	f := func(n int) []float32 { return make([]float32, n) }
	s.mean, s.logStd, s.noise, s.aPi, s.logp = f(B*ad), f(B*ad), f(B*ad), f(B*ad), f(B)
	s.meanN, s.logStdN, s.noiseN, s.aN, s.logpN = f(B*ad), f(B*ad), f(B*ad), f(B*ad), f(B)
	s.qin, s.y, s.dq = f(B*(od+ad)), f(B), f(B)
	s.dOut, s.da, s.dmean, s.dlogSd, s.dlogp = f(B*2*ad), f(B*ad), f(B*ad), f(B*ad), f(B)
	s.actScaled, s.actEnv = f(k*ad), f(k*ad)
	if s.cfg.BCWeight > 0 {
		s.actGuide = f(k * ad)
	}
	s.actMean, s.actLogStd, s.actNoise, s.actLp = f(k*ad), f(k*ad), f(k*ad), f(k)
}

// Kind implements rl.Agent.
func (s *SAC) Kind() string { return "sac" }

// Steps implements rl.Agent.
func (s *SAC) Steps() int64 { return s.steps }

// Stats returns the latest diagnostics.
func (s *SAC) Stats() Stats { return s.stats }

// EpisodeWindow returns the mean return and length of the last 100
// training episodes (NaN before the first ends).
func (s *SAC) EpisodeWindow() (meanReturn, meanLength float64) {
	return s.window.MeanReturn(), s.window.MeanLength()
}

// Alpha returns the current entropy coefficient.
func (s *SAC) Alpha() float64 {
	if s.cfg.EntCoef > 0 {
		return s.cfg.EntCoef
	}
	return math.Exp(float64(s.logAlpha[0]))
}

// splitActorOut copies the actor's [mean | log σ] rows into mean and logStd.
func splitActorOut(out []float32, ad int, mean, logStd []float32) {
	n := len(mean) / ad
	for i := 0; i < n; i++ {
		copy(mean[i*ad:(i+1)*ad], out[i*2*ad:i*2*ad+ad])
		copy(logStd[i*ad:(i+1)*ad], out[i*2*ad+ad:(i+1)*2*ad])
	}
}

// act samples exploration actions (scaled to [−1, 1]) for the current
// observations: the demonstrator's during the first DemoSteps, uniform
// before LearningStarts (SB3 samples the action space), else from the
// squashed Gaussian. With BCWeight it also records the demonstrator's
// actions as the transitions' guides.
func (s *SAC) act() {
	k, ad := s.k, s.ad
	demoPhase := s.steps < s.cfg.DemoSteps
	if demoPhase || s.actGuide != nil {
		// One question to the demonstrator per state: its raw answer is
		// the demonstration (noised, then clipped) and, clipped, the guide.
		dst := s.actGuide
		if demoPhase {
			dst = s.actScaled
		}
		for i := range k {
			s.cfg.Demonstrator.Demonstrate(i, dst[i*ad:(i+1)*ad])
		}
		if s.actGuide != nil {
			if demoPhase {
				copy(s.actGuide, s.actScaled)
			}
			for i, a := range s.actGuide {
				s.actGuide[i] = clipScaled(a)
			}
		}
	}
	if demoPhase {
		if s.cfg.DemoNoise > 0 {
			s.rng.Normal(s.actNoise)
		}
		for i, a := range s.actScaled {
			if s.cfg.DemoNoise > 0 {
				a += float32(s.cfg.DemoNoise) * s.actNoise[i]
			}
			s.actScaled[i] = clipScaled(a)
		}
		return
	}
	if s.steps < int64(s.cfg.LearningStarts) {
		for i := range s.actScaled {
			s.actScaled[i] = float32(2*s.rng.Float64() - 1)
		}
		return
	}
	out := s.Actor.Forward(s.wsAct, s.obs, k)
	splitActorOut(out, ad, s.actMean, s.actLogStd)
	s.rng.Normal(s.actNoise)
	nn.SquashedGaussian(s.actMean, s.actLogStd, s.actNoise, ad, s.actScaled, s.actLp)
}

// clipScaled bounds a demonstrated action to the scaled space [−1, 1],
// NaN (no opinion) taken as 0.
func clipScaled(a float32) float32 {
	if a != a {
		return 0
	}
	return max(-1, min(1, a))
}

// Iterate implements rl.Agent: TrainFreq vectorised steps, then the
// gradient steps, as SB3's collect_rollouts/train cycle.
func (s *SAC) Iterate(ctx context.Context) error {
	// Cancellation is honoured only between iterations, so a checkpoint
	// written after it holds a consistent state.
	if err := ctx.Err(); err != nil {
		return err
	}
	collected := 0
	for range s.cfg.TrainFreq {
		s.act()
		agentutil.Unscale(s.actSp, s.actScaled, s.actEnv)
		b := s.venv.Step(s.actEnv)
		for i := 0; i < s.k; i++ {
			next := b.Obs[i*s.od : (i+1)*s.od]
			if b.Done(i) {
				next = b.FinalObs[i*s.od : (i+1)*s.od]
			}
			o, a := s.obs[i*s.od:(i+1)*s.od], s.actScaled[i*s.ad:(i+1)*s.ad]
			var g []float32
			if s.actGuide != nil {
				g = s.actGuide[i*s.ad : (i+1)*s.ad]
			}
			if s.nstep != nil {
				s.nstep[i].push(s.replay, o, a, g, b.Reward[i], next, b.Terminated[i], b.Done(i))
				continue
			}
			s.replay.AddGuided(o, a, g, b.Reward[i], next, buffer.DoneFlag(b.Terminated[i]))
		}
		copy(s.obs, b.Obs)
		s.steps += int64(s.k)
		collected++
		s.window.Drain(s.venv)
	}
	// SB3 trains once num_timesteps > learning_starts.
	if s.steps > int64(s.cfg.LearningStarts) {
		g := s.cfg.GradientSteps
		if g < 0 {
			g = collected
		}
		for range g {
			s.update()
		}
		if !agentutil.AllFinite(s.Actor.Params) || !agentutil.AllFinite(s.Q1.Params) || !agentutil.AllFinite(s.Q2.Params) {
			return fmt.Errorf("sac: non-finite parameters after %d updates (step %d); lower the learning rate or check rewards", s.updates, s.steps)
		}
	}
	if s.steps >= s.nextLog {
		s.log()
		for s.nextLog <= s.steps {
			s.nextLog += s.cfg.LogEvery
		}
	}
	return nil
}

func (s *SAC) log() {
	st := s.stats
	fields := []trainlog.Field{
		trainlog.F("ep_rew_mean", s.window.MeanReturn()),
		trainlog.F("ep_len_mean", s.window.MeanLength()),
		trainlog.F("actor_loss", st.ActorLoss),
		trainlog.F("critic_loss", st.CriticLoss),
		trainlog.F("ent_coef", st.EntCoef),
		trainlog.F("ent_coef_loss", st.EntCoefLoss),
		trainlog.F("entropy", st.Entropy),
		trainlog.F("mean_q", st.MeanQ),
		trainlog.F("updates", float64(st.Updates)),
	}
	// Only with the term, so that runs without it log the columns they
	// always had (one row per call: the learning curve's header is fixed
	// by its first row).
	if s.cfg.BCWeight > 0 {
		fields = append(fields, trainlog.F("bc_loss", st.BCLoss))
	}
	s.logger.Log(s.steps, fields...)
	if r := s.window.MeanReturn(); !math.IsNaN(r) {
		s.logger.Describe(fmt.Sprintf("sac ep_rew_mean %.1f", r))
	}
}

// GradientStep performs one gradient step on a batch sampled from the
// replay buffer (which must not be empty), outside the Iterate schedule;
// benchmarks use it to measure update speed.
func (s *SAC) GradientStep() { s.update() }

// update performs one gradient step, in the order of SB3's SAC.train.
func (s *SAC) update() {
	B, od, ad := s.cfg.BatchSize, s.od, s.ad
	s.replay.Sample(s.rng.Rand, s.batch)
	bt := s.batch

	// Actions and log-probabilities of the current policy at s.
	out := s.Actor.Forward(s.wsA, bt.Obs, B)
	splitActorOut(out, ad, s.mean, s.logStd)
	s.rng.Normal(s.noise)
	nn.SquashedGaussian(s.mean, s.logStd, s.noise, ad, s.aPi, s.logp)
	var meanLogp float64
	for _, v := range s.logp {
		meanLogp += float64(v) / float64(B)
	}

	// Entropy coefficient: α is read before its update and used for this
	// step's losses (SB3 detaches exp(log_ent_coef) first). Loss
	// −log α·(log π + H̄), gradient −mean(log π + H̄).
	alpha := s.Alpha()
	var entLoss float64
	if s.cfg.EntCoef == 0 {
		g := -(meanLogp + s.targetEntropy)
		entLoss = float64(s.logAlpha[0]) * g
		s.logAlphaGrad[0] = float32(g)
		s.alphaOpt.Step(s.logAlpha, s.logAlphaGrad)
	}

	// Soft Bellman target (SAC paper eq. 3, with clipped double Q):
	// y = r + γ(1−d)(min_i Q̄_i(s', a') − α log π(a'|s')), a' ~ π(·|s').
	outN := s.Actor.Forward(s.wsAN, bt.Next, B)
	splitActorOut(outN, ad, s.meanN, s.logStdN)
	s.rng.Normal(s.noiseN)
	nn.SquashedGaussian(s.meanN, s.logStdN, s.noiseN, ad, s.aN, s.logpN)
	agentutil.Concat(s.qin, bt.Next, od, s.aN, ad)
	t1 := s.Q1Targ.Forward(s.wsT1, s.qin, B)
	t2 := s.Q2Targ.Forward(s.wsT2, s.qin, B)
	gamma := float32(s.cfg.Gamma)
	fa := float32(alpha)
	for i := 0; i < B; i++ {
		nq := min(t1[i], t2[i]) - fa*s.logpN[i]
		s.y[i] = bt.Rew[i] + (1-bt.Done[i])*gamma*nq
	}

	// Critics: loss ½Σ_i mse(Q_i(s,a), y) (SB3 critic_loss).
	agentutil.Concat(s.qin, bt.Obs, od, bt.Act, ad)
	var criticLoss, meanQ float64
	for qi, q := range []*nn.MLP{s.Q1, s.Q2} {
		ws := s.wsQ1
		opt := s.q1Opt
		if qi == 1 {
			ws, opt = s.wsQ2, s.q2Opt
		}
		pred := q.Forward(ws, s.qin, B)
		if qi == 0 {
			for _, v := range pred {
				meanQ += float64(v) / float64(B)
			}
		}
		clear(s.dq)
		criticLoss += 0.5 * nn.MSE(pred, s.y, 0.5, s.dq)
		q.ZeroGrad()
		q.Backward(ws, s.dq, false)
		opt.Step(q.Params, q.Grads)
	}

	actorLoss, bcLoss := s.actorObjective(bt.Obs, bt.Guide, fa, true)
	s.actorOpt.Step(s.Actor.Params, s.Actor.Grads)

	s.updates++
	if s.updates%int64(s.cfg.TargetUpdateInterval) == 0 {
		nn.Polyak(s.Q1Targ.Params, s.Q1.Params, s.cfg.Tau)
		nn.Polyak(s.Q2Targ.Params, s.Q2.Params, s.cfg.Tau)
	}
	s.stats = Stats{ActorLoss: actorLoss, CriticLoss: criticLoss, EntCoef: alpha, EntCoefLoss: entLoss,
		Entropy: -meanLogp, MeanQ: meanQ, BCLoss: bcLoss, Updates: s.updates}
}

// actorObjective returns SAC's actor loss mean(α log π(ã|s) − min_i
// Q_i(s, ã)) through the reparameterised ã (SAC paper eq. 7), plus with
// guide (the batch's guide actions; nil for none) and BCWeight the
// behaviour-cloning term, which it also returns alone; it leaves the
// loss's gradient in s.Actor.Grads. With reuse, the actor's forward pass
// on obs and the sample (s.mean, s.logStd, s.noise, s.aPi, s.logp) from
// the start of the update are used; otherwise they are recomputed with
// the noise already in s.noise.
func (s *SAC) actorObjective(obs, guide []float32, fa float32, reuse bool) (loss, bc float64) {
	B, od, ad := len(obs)/s.od, s.od, s.ad
	if !reuse {
		out := s.Actor.Forward(s.wsA, obs, B)
		splitActorOut(out, ad, s.mean, s.logStd)
		nn.SquashedGaussian(s.mean, s.logStd, s.noise, ad, s.aPi, s.logp)
	}
	agentutil.Concat(s.qin, obs, od, s.aPi, ad)
	p1 := s.Q1.Forward(s.wsQ1, s.qin, B)
	p2 := s.Q2.Forward(s.wsQ2, s.qin, B)
	var actorLoss, absQ float64
	invB := 1 / float32(B)
	d1, d2 := s.dq, s.y // reuse: gradients w.r.t. Q1 and Q2 outputs
	for i := 0; i < B; i++ {
		// The gradient of min flows to the smaller critic (torch.min).
		m := p1[i]
		d1[i], d2[i] = -invB, 0
		if p2[i] < p1[i] {
			m = p2[i]
			d1[i], d2[i] = 0, -invB
		}
		actorLoss += (float64(fa)*float64(s.logp[i]) - float64(m)) / float64(B)
		absQ += math.Abs(float64(m)) / float64(B)
		s.dlogp[i] = fa * invB
	}
	clear(s.da)
	for qi, g := range [][]float32{d1, d2} {
		q, ws := s.Q1, s.wsQ1
		if qi == 1 {
			q, ws = s.Q2, s.wsQ2
		}
		// Only the action columns of the critic input are needed.
		dIn := q.BackwardInputCols(ws, g, od)
		for i, v := range dIn {
			s.da[i] += v
		}
	}
	clear(s.dmean)
	clear(s.dlogSd)
	nn.SquashedGaussianBackward(s.mean, s.logStd, s.noise, ad, s.da, s.dlogp, s.dmean, s.dlogSd)
	if guide != nil { // a guided buffer: BCWeight > 0
		// w · mean (tanh μ − g)², gradient 2w (tanh μ − g)(1 − tanh² μ)
		// per element over B·ad.
		w := s.cfg.BCWeight * absQ
		inv := 1 / float64(B*ad)
		for i, mu := range s.mean {
			t := math.Tanh(float64(mu))
			e := t - float64(guide[i])
			bc += w * e * e * inv
			s.dmean[i] += float32(2 * w * e * (1 - t*t) * inv)
		}
		actorLoss += bc
	}
	for i := 0; i < B; i++ {
		copy(s.dOut[i*2*ad:i*2*ad+ad], s.dmean[i*ad:(i+1)*ad])
		copy(s.dOut[i*2*ad+ad:(i+1)*2*ad], s.dlogSd[i*ad:(i+1)*ad])
	}
	s.Actor.ZeroGrad()
	s.Actor.Backward(s.wsA, s.dOut, false)
	return actorLoss, bc
}

// Policy implements rl.Agent: the deterministic actor tanh(mean), with
// the environment's observation normaliser if it has one.
func (s *SAC) Policy(meta policy.Meta) (*policy.Policy, error) {
	if meta.Algo == "" {
		meta.Algo = "sac"
	}
	meta.Steps = s.steps
	return policy.New(s.obsSp, s.actSp, policy.Squash, s.Actor.Clone(), agentutil.ObsNormalizer(s.venv), meta)
}

// Save implements rl.Agent.
func (s *SAC) Save(e *checkpoint.Encoder) error {
	agentutil.SaveDims(e, "sac", s.od, s.ad, s.k)
	e.Int64("sac.steps", s.steps)
	e.Int64("sac.updates", s.updates)
	e.Int64("sac.next_log", s.nextLog)
	for _, n := range []struct {
		name string
		m    *nn.MLP
	}{{"actor", s.Actor}, {"q1", s.Q1}, {"q2", s.Q2}, {"q1_targ", s.Q1Targ}, {"q2_targ", s.Q2Targ}} {
		e.Float32s(n.name, n.m.Params)
	}
	for _, o := range []struct {
		name string
		a    *nn.Adam
	}{{"actor_opt", s.actorOpt}, {"q1_opt", s.q1Opt}, {"q2_opt", s.q2Opt}, {"alpha_opt", s.alphaOpt}} {
		agentutil.SaveAdam(e, o.name, o.a)
	}
	e.Float32s("log_alpha", s.logAlpha)
	s.rng.Save(e, "rng")
	s.window.Save(e)
	e.Float32s("obs", s.obs)
	s.replay.Save(e)
	for i, q := range s.nstep {
		q.save(e, fmt.Sprintf("nstep.%d", i))
	}
	return agentutil.SaveEnv(e, s.venv)
}

// Load implements rl.Agent. The learner must have been built with the
// same configuration and environment shapes.
func (s *SAC) Load(d *checkpoint.Decoder) error {
	agentutil.CheckDims(d, "sac", s.od, s.ad, s.k)
	s.steps = d.Int64("sac.steps")
	s.updates = d.Int64("sac.updates")
	s.nextLog = d.Int64("sac.next_log")
	for _, n := range []struct {
		name string
		m    *nn.MLP
	}{{"actor", s.Actor}, {"q1", s.Q1}, {"q2", s.Q2}, {"q1_targ", s.Q1Targ}, {"q2_targ", s.Q2Targ}} {
		d.Float32sInto(n.name, n.m.Params)
	}
	for _, o := range []struct {
		name string
		a    *nn.Adam
	}{{"actor_opt", s.actorOpt}, {"q1_opt", s.q1Opt}, {"q2_opt", s.q2Opt}, {"alpha_opt", s.alphaOpt}} {
		agentutil.LoadAdam(d, o.name, o.a)
	}
	d.Float32sInto("log_alpha", s.logAlpha)
	s.rng.Load(d, "rng")
	s.window.Load(d)
	d.Float32sInto("obs", s.obs)
	s.replay.Load(d)
	for i, q := range s.nstep {
		q.load(d, fmt.Sprintf("nstep.%d", i))
	}
	if d.Err() != nil {
		return d.Err()
	}
	if !agentutil.LoadEnv(d, s.venv) && d.Err() == nil {
		// The environments could not be saved: start fresh episodes.
		b := s.venv.Reset(s.cfg.Seed ^ uint64(s.steps))
		copy(s.obs, b.Obs)
		// Pending n-step transitions belong to the abandoned episodes.
		for _, q := range s.nstep {
			q.head, q.len = 0, 0
		}
	}
	return d.Err()
}
