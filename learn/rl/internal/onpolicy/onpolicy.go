// Package onpolicy holds what PPO and A2C share: SB3's ActorCriticPolicy
// (separate policy and value MLPs, a diagonal Gaussian with a
// state-independent log-std for Box actions or a categorical for Discrete
// ones, orthogonal initialisation) and rollout collection with
// bootstrapping on truncation.
package onpolicy

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl/buffer"
	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/internal/agentutil"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/space"
)

// ActorCritic is SB3's MlpPolicy for on-policy algorithms.
type ActorCritic struct {
	Obs, Act space.Space
	Discrete bool
	od, ad   int // ad: action vector length (1 for Discrete)
	nOut     int // policy outputs: Box dim or number of actions
	Pi, Vf   *nn.MLP
	// LogStd is the state-independent log standard deviation (Box only),
	// one per action dimension; with gSDE it is the h×d matrix of log
	// standard deviations of the exploration weights (h: last hidden
	// width).
	LogStd, LogStdGrad []float32
	// SDE selects generalised state-dependent exploration (Raffin et al.
	// 2022, "Smooth exploration for robotic reinforcement learning"), as
	// SB3's use_sde: the action noise is z(s)ᵀ·E with z the policy's last
	// hidden features and E ~ N(0, exp(LogStd)²) held for several steps.
	SDE  bool
	h    int
	expl []float32 // per-environment exploration matrices, K×h×d
	varB []float32

	wsPi, wsVf          *nn.Workspace
	logStdB             []float32 // LogStd broadcast to the batch
	dPi, dLogStdB       []float32
	meanScratch, lp, en []float32
	lastOut             []float32
}

// NewActorCritic builds the networks: hidden layers with activation act,
// orthogonal initialisation with SB3's gains (sqrt 2 hidden, 0.01 policy
// output, 1 value output) unless ortho is false (then PyTorch's default),
// log-std initialised to logStdInit.
func NewActorCritic(obs, act space.Space, hidden []int, activation nn.Activation, ortho bool, logStdInit float64, sde bool, rng *agentutil.RNG) (*ActorCritic, error) {
	if obs.Kind != space.KindBox {
		return nil, fmt.Errorf("needs a Box observation space, got %v", obs)
	}
	ac := &ActorCritic{Obs: obs, Act: act, od: obs.Dim(), ad: act.Dim()}
	switch act.Kind {
	case space.KindBox:
		ac.nOut = act.Dim()
	case space.KindDiscrete:
		ac.Discrete, ac.nOut = true, act.N
	}
	piSizes := append(append([]int{ac.od}, hidden...), ac.nOut)
	vfSizes := append(append([]int{ac.od}, hidden...), 1)
	ac.Pi = nn.NewMLP(piSizes, activation, nn.Identity)
	ac.Vf = nn.NewMLP(vfSizes, activation, nn.Identity)
	if ortho {
		gains := func(last float64) []float64 {
			g := make([]float64, len(hidden)+1)
			for i := range hidden {
				g[i] = math.Sqrt2
			}
			g[len(hidden)] = last
			return g
		}
		// SB3 initialises the policy net first, then the value net.
		ac.Pi.InitOrthogonal(rng.Rand, gains(0.01))
		ac.Vf.InitOrthogonal(rng.Rand, gains(1))
	} else {
		ac.Pi.InitTorchDefault(rng.Rand)
		ac.Vf.InitTorchDefault(rng.Rand)
	}
	if sde && (ac.Discrete || len(hidden) == 0) {
		return nil, fmt.Errorf("gSDE needs a Box action space and at least one hidden layer")
	}
	if !ac.Discrete {
		n := ac.ad
		if sde {
			ac.SDE, ac.h = true, hidden[len(hidden)-1]
			n = ac.h * ac.ad
		}
		ac.LogStd = make([]float32, n)
		ac.LogStdGrad = make([]float32, n)
		for i := range ac.LogStd {
			ac.LogStd[i] = float32(logStdInit)
		}
	}
	ac.wsPi, ac.wsVf = ac.Pi.NewWorkspace(), ac.Vf.NewWorkspace()
	return ac, nil
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// Values returns V(obs) for n rows (a slice owned by ac, valid until its
// next use).
func (ac *ActorCritic) Values(obs []float32, n int) []float32 {
	return ac.Vf.Forward(ac.wsVf, obs, n)
}

// sdeEps is SB3's epsilon added to the gSDE variance
// (StateDependentNoiseDistribution.epsilon).
const sdeEps = 1e-6

// ResetNoise draws new exploration matrices for k environments (gSDE
// only): E_k[j, d] ~ N(0, exp(LogStd[j, d])²), SB3's sample_weights.
func (ac *ActorCritic) ResetNoise(rng *agentutil.RNG, k int) {
	if !ac.SDE {
		return
	}
	n := ac.h * ac.ad
	ac.expl = grow(ac.expl, k*n)
	for e := 0; e < k; e++ {
		for i := 0; i < n; i++ {
			ac.expl[e*n+i] = float32(math.Exp(float64(ac.LogStd[i])) * rng.NormFloat64())
		}
	}
}

// sdeStd writes the per-row log standard deviation implied by the
// features z (n×h): var_bd = Σ_j z_bj²·exp(2·LogStd_jd) + 1e-6.
func (ac *ActorCritic) sdeStd(z []float32, n int) {
	h, d := ac.h, ac.ad
	ac.varB = grow(ac.varB, n*d)
	ac.logStdB = grow(ac.logStdB, n*d)
	for b := 0; b < n; b++ {
		for k := 0; k < d; k++ {
			v := sdeEps
			for j := 0; j < h; j++ {
				zj := float64(z[b*h+j])
				v += zj * zj * math.Exp(2*float64(ac.LogStd[j*d+k]))
			}
			ac.varB[b*d+k] = float32(v)
			ac.logStdB[b*d+k] = float32(0.5 * math.Log(v))
		}
	}
}

// Sample draws actions for n observations, writing the raw actions (the
// Gaussian sample, or the index) to actions and their log-probabilities to
// logp.
func (ac *ActorCritic) Sample(rng *agentutil.RNG, obs []float32, n int, actions, logp []float32) {
	out := ac.Pi.Forward(ac.wsPi, obs, n)
	if ac.Discrete {
		probs := grow(ac.meanScratch, n*ac.nOut)
		ac.meanScratch = probs
		nn.Softmax(out, ac.nOut, probs)
		for b := 0; b < n; b++ {
			u := rng.Float64()
			k := ac.nOut - 1
			var c float64
			for j := 0; j < ac.nOut; j++ {
				c += float64(probs[b*ac.nOut+j])
				if u < c {
					k = j
					break
				}
			}
			actions[b] = float32(k)
		}
		nn.Categorical(out, ac.nOut, actions[:n], logp[:n], nil)
		return
	}
	if ac.SDE {
		// Noise z(s)ᵀ·E_b with environment b's exploration matrix (SB3's
		// get_noise with per-environment exploration_matrices).
		z := ac.Pi.Activations(ac.wsPi, ac.Pi.Layers()-2)
		h, d := ac.h, ac.ad
		if len(ac.expl) < n*h*d {
			ac.ResetNoise(rng, n)
		}
		for b := 0; b < n; b++ {
			for k := 0; k < d; k++ {
				var s float64
				for j := 0; j < h; j++ {
					s += float64(z[b*h+j]) * float64(ac.expl[b*h*d+j*d+k])
				}
				actions[b*d+k] = out[b*d+k] + float32(s)
			}
		}
		ac.sdeStd(z, n)
		nn.GaussianLogProb(out, ac.logStdB[:n*d], actions[:n*d], d, logp[:n])
		return
	}
	ac.logStdB = grow(ac.logStdB, n*ac.ad)
	for b := 0; b < n; b++ {
		copy(ac.logStdB[b*ac.ad:(b+1)*ac.ad], ac.LogStd)
	}
	for i := 0; i < n*ac.ad; i++ {
		actions[i] = out[i] + float32(math.Exp(float64(ac.logStdB[i]))*rng.NormFloat64())
	}
	nn.GaussianLogProb(out, ac.logStdB, actions[:n*ac.ad], ac.ad, logp[:n])
}

// Evaluation holds the per-sample quantities of Evaluate.
type Evaluation struct {
	LogP, Entropy, Values []float32
}

// Evaluate computes log π(a|s), the entropy and V(s) for n rows, keeping
// what Backward needs. The result belongs to ac. obs is referenced, not
// copied: it must not change before Backward.
func (ac *ActorCritic) Evaluate(obs, actions []float32, n int) Evaluation {
	out := ac.Pi.ForwardShared(ac.wsPi, obs, n)
	ac.lastOut = out
	ac.lp = grow(ac.lp, n)
	ac.en = grow(ac.en, n)
	if ac.Discrete {
		nn.Categorical(out, ac.nOut, actions, ac.lp, ac.en)
	} else {
		if ac.SDE {
			ac.sdeStd(ac.Pi.Activations(ac.wsPi, ac.Pi.Layers()-2), n)
		} else {
			ac.logStdB = grow(ac.logStdB, n*ac.ad)
			for b := 0; b < n; b++ {
				copy(ac.logStdB[b*ac.ad:(b+1)*ac.ad], ac.LogStd)
			}
		}
		nn.GaussianLogProb(out, ac.logStdB[:n*ac.ad], actions, ac.ad, ac.lp)
		nn.GaussianEntropy(ac.logStdB[:n*ac.ad], ac.ad, ac.en)
	}
	v := ac.Vf.ForwardShared(ac.wsVf, obs, n)
	return Evaluation{LogP: ac.lp, Entropy: ac.en, Values: v}
}

// ZeroGrad clears all gradients.
func (ac *ActorCritic) ZeroGrad() {
	ac.Pi.ZeroGrad()
	ac.Vf.ZeroGrad()
	clear(ac.LogStdGrad)
}

// Backward accumulates parameter gradients for upstream gradients with
// respect to the last Evaluate's log-probabilities, entropies and values.
// It must directly follow that Evaluate (same actions, no other call on ac
// in between), whose activations it reuses.
func (ac *ActorCritic) Backward(actions []float32, n int, dlogp, dent, dv []float32) {
	out := ac.lastOut
	ac.dPi = grow(ac.dPi, n*ac.nOut)
	clear(ac.dPi)
	if ac.Discrete {
		nn.CategoricalBackward(out, ac.nOut, actions, dlogp, dent, ac.dPi)
	} else {
		ac.dLogStdB = grow(ac.dLogStdB, n*ac.ad)
		clear(ac.dLogStdB)
		nn.GaussianLogProbBackward(out, ac.logStdB[:n*ac.ad], actions, ac.ad, dlogp, ac.dPi, ac.dLogStdB)
		if ac.SDE {
			// log σ_bd = ½·log var_bd, so ∂log σ_bd/∂LogStd_jd =
			// z_bj²·exp(2·LogStd_jd)/var_bd; z is detached (SB3's
			// learn_features=False).
			z := ac.Pi.Activations(ac.wsPi, ac.Pi.Layers()-2)
			h, d := ac.h, ac.ad
			for b := 0; b < n; b++ {
				for k := 0; k < d; k++ {
					g := float64(ac.dLogStdB[b*d+k]+dent[b]) / float64(ac.varB[b*d+k])
					for j := 0; j < h; j++ {
						zj := float64(z[b*h+j])
						ac.LogStdGrad[j*d+k] += float32(g * zj * zj * math.Exp(2*float64(ac.LogStd[j*d+k])))
					}
				}
			}
		} else {
			for b := 0; b < n; b++ {
				for i := 0; i < ac.ad; i++ {
					// ∂H/∂log σ_i = 1 for every row.
					ac.LogStdGrad[i] += ac.dLogStdB[b*ac.ad+i] + dent[b]
				}
			}
		}
	}
	ac.Pi.Backward(ac.wsPi, ac.dPi, false)
	ac.Vf.Backward(ac.wsVf, dv, false)
}

// Grads returns the gradient slices for joint clipping.
func (ac *ActorCritic) Grads() [][]float32 {
	if ac.Discrete {
		return [][]float32{ac.Pi.Grads, ac.Vf.Grads}
	}
	return [][]float32{ac.Pi.Grads, ac.Vf.Grads, ac.LogStdGrad}
}

// Params returns the parameter slices matching Grads.
func (ac *ActorCritic) Params() [][]float32 {
	if ac.Discrete {
		return [][]float32{ac.Pi.Params, ac.Vf.Params}
	}
	return [][]float32{ac.Pi.Params, ac.Vf.Params, ac.LogStd}
}

// Policy snapshots the deterministic actor: the Gaussian mean clipped to
// the bounds, or the most probable action.
func (ac *ActorCritic) Policy(venv env.VecEnv, meta policy.Meta) (*policy.Policy, error) {
	head := policy.Clip
	if ac.Discrete {
		head = policy.Argmax
	}
	return policy.New(ac.Obs, ac.Act, head, ac.Pi.Clone(), agentutil.ObsNormalizer(venv), meta)
}

// Save writes the parameters.
func (ac *ActorCritic) Save(e *checkpoint.Encoder) {
	e.Float32s("pi", ac.Pi.Params)
	e.Float32s("vf", ac.Vf.Params)
	e.Float32s("log_std", ac.LogStd)
}

// Load restores parameters written by Save.
func (ac *ActorCritic) Load(d *checkpoint.Decoder) {
	d.Float32sInto("pi", ac.Pi.Params)
	d.Float32sInto("vf", ac.Vf.Params)
	d.Float32sInto("log_std", ac.LogStd)
}

// Collector gathers rollouts from a vectorised environment.
type Collector struct {
	Venv     env.VecEnv
	AC       *ActorCritic
	Gamma    float64
	Obs      []float32 // current observations
	EpStart  []bool    // whether Obs rows start an episode
	LastDone []bool
	actions  []float32
	envAct   []float32
	logp     []float32
	final    []float32
	Window   *agentutil.Window
}

// NewCollector resets venv with seed and prepares collection.
func NewCollector(venv env.VecEnv, ac *ActorCritic, gamma float64, seed uint64) *Collector {
	k := venv.NumEnvs()
	c := &Collector{Venv: venv, AC: ac, Gamma: gamma, EpStart: make([]bool, k), LastDone: make([]bool, k),
		actions: make([]float32, k*ac.ad), envAct: make([]float32, k*ac.ad), logp: make([]float32, k),
		final: make([]float32, ac.od), Window: agentutil.NewWindow(100)}
	b := venv.Reset(seed)
	c.Obs = append([]float32(nil), b.Obs...)
	for i := range c.EpStart {
		c.EpStart[i] = true // SB3: _last_episode_starts = ones
	}
	return c
}

// Collect fills r with r.T steps (SB3's OnPolicyAlgorithm.collect_rollouts)
// and computes GAE. It returns the number of environment steps taken. With
// gSDE the exploration matrices are redrawn at the start and, if
// sdeSampleFreq > 0, every sdeSampleFreq steps.
func (c *Collector) Collect(rng *agentutil.RNG, r *buffer.Rollout, lambda float64, sdeSampleFreq int) int64 {
	k, od, ad := c.Venv.NumEnvs(), c.AC.od, c.AC.ad
	r.Reset()
	c.AC.ResetNoise(rng, k)
	for !r.Full() {
		t := r.Step()
		if sdeSampleFreq > 0 && t > 0 && t%sdeSampleFreq == 0 {
			c.AC.ResetNoise(rng, k)
		}
		rows := r.Obs[t*k*od : (t+1)*k*od]
		copy(rows, c.Obs)
		vals := c.AC.Values(c.Obs, k)
		copy(r.Val[t*k:(t+1)*k], vals)
		c.AC.Sample(rng, c.Obs, k, c.actions, c.logp)
		copy(r.Act[t*k*ad:(t+1)*k*ad], c.actions)
		copy(r.LogP[t*k:(t+1)*k], c.logp)
		copy(r.EpStart[t*k:(t+1)*k], c.EpStart)
		// Box actions are clipped to the bounds for the environment only;
		// the buffer keeps the sample (SB3).
		copy(c.envAct, c.actions)
		if !c.AC.Discrete {
			for i := range c.envAct {
				d := i % ad
				c.envAct[i] = min(max(c.envAct[i], c.AC.Act.Low[d]), c.AC.Act.High[d])
			}
		}
		b := c.Venv.Step(c.envAct)
		for i := 0; i < k; i++ {
			rew := b.Reward[i]
			// Bootstrap on truncation (SB3: rewards += γ·V(terminal_obs)
			// when TimeLimit.truncated).
			if b.Truncated[i] && !b.Terminated[i] {
				copy(c.final, b.FinalObs[i*od:(i+1)*od])
				rew += c.Gamma * float64(c.AC.Values(c.final, 1)[0])
			}
			r.Rew[t*k+i] = float32(rew)
			c.EpStart[i] = b.Done(i)
			c.LastDone[i] = b.Done(i)
		}
		copy(c.Obs, b.Obs)
		c.Window.Drain(c.Venv)
	}
	last := c.AC.Values(c.Obs, k)
	r.ComputeGAE(last, c.LastDone, c.Gamma, lambda)
	return int64(r.T * k)
}

// Save writes the collector state (observations, flags, window, env).
func (c *Collector) Save(e *checkpoint.Encoder) error {
	e.Float32s("collector.obs", c.Obs)
	e.Bools("collector.ep_start", c.EpStart)
	e.Bools("collector.last_done", c.LastDone)
	c.Window.Save(e)
	return agentutil.SaveEnv(e, c.Venv)
}

// Load restores the collector state; if the environments could not be
// saved they are reset with seed.
func (c *Collector) Load(d *checkpoint.Decoder, seed uint64) {
	d.Float32sInto("collector.obs", c.Obs)
	d.BoolsInto("collector.ep_start", c.EpStart)
	d.BoolsInto("collector.last_done", c.LastDone)
	c.Window.Load(d)
	if d.Err() != nil {
		return
	}
	if !agentutil.LoadEnv(d, c.Venv) && d.Err() == nil {
		b := c.Venv.Reset(seed)
		copy(c.Obs, b.Obs)
		for i := range c.EpStart {
			c.EpStart[i] = true
		}
	}
}
