package datacenter

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/a2c"
	"github.com/cclab/cclab/learn/rl/dqn"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/ppo"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// Algorithms lists the learners Train accepts (the paper's PPO and its two
// comparisons).
var Algorithms = []string{"ppo", "a2c", "dqn"}

// Multi-agent modes.
const (
	// Shared: one learner, one policy for all K agents (parameter
	// sharing; every agent contributes its own transitions).
	Shared = "shared"
	// Independent: K learners with their own networks, stepping the same
	// simulations in lockstep and all receiving the team-average reward.
	Independent = "independent"
)

// TrainConfig configures Train. Zero values take the defaults in brackets.
type TrainConfig struct {
	// Env is the environment configuration (scenario, agents, action
	// space, randomisation, reward).
	Env Config
	// ShareEvery, in independent mode, replaces every agent's actor and
	// critic with their average every ShareEvery joint iterations (the
	// paper's "after a time interval [T1] the information are shared
	// among different agents": shared learned policies) [0: never].
	ShareEvery int
	// Consensus, in independent mode, pulls each agent's critic towards
	// the agents' mean after every iteration: θ_i += Consensus·(θ̄ − θ_i),
	// a gradient step on the penalty (Consensus/2)·||θ_i − θ̄||². It stands
	// in for the paper's penalty on the difference between an agent's
	// value estimate and its neighbours' in the value update (that
	// penalty needs a hook inside the learners' value loss) [0: off; at
	// most 1, which makes the critics equal].
	Consensus float64
	// Algo is ppo, a2c or dqn [ppo].
	Algo string
	// Mode is Shared or Independent for more than one agent [Shared].
	Mode string
	// Steps is the training budget in simulated intervals, summed over the
	// parallel simulations: the same amount of simulated data centre
	// whatever the number of agents [60000].
	Steps int64
	// Envs is the number of parallel simulations [4]; Workers the
	// goroutines stepping them [Envs].
	Envs, Workers int
	// Seed seeds networks, exploration and episodes.
	Seed uint64
	// LearningRate overrides the algorithm's rate [ppo 1e-3, a2c 7e-4,
	// dqn 5e-4]; Gamma the discount [0.8: an action's effect is over
	// within a few intervals]; Lambda GAE's λ for PPO and A2C [0.9].
	LearningRate, Gamma, Lambda float64
	// Hidden are the hidden-layer widths [64, 64].
	Hidden []int
	// Checkpoint, if set, is where checkpoints go every CheckpointEvery
	// [5m] (single learner only); Resume continues from it.
	Checkpoint      string
	CheckpointEvery time.Duration
	Resume          bool
	// CSV receives learner i's learning curve (nil: none); Progress the
	// progress bar of learner 0.
	CSV      func(i int) io.Writer
	Progress io.Writer
	// Command is recorded in the policy files.
	Command string
	// Now reads the wall clock, only to measure training wall time
	// [time.Now].
	Now func() time.Time
}

func (c *TrainConfig) defaults() {
	c.Algo = cmp.Or(c.Algo, "ppo")
	c.Mode = cmp.Or(c.Mode, Shared)
	c.Steps = cmp.Or(c.Steps, 60_000)
	c.Envs = cmp.Or(c.Envs, 4)
	c.Gamma = cmp.Or(c.Gamma, 0.8)
	c.Lambda = cmp.Or(c.Lambda, 0.9)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{64, 64}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.LearningRate = cmp.Or(c.LearningRate, map[string]float64{"ppo": 1e-3, "a2c": 7e-4, "dqn": 5e-4}[c.Algo])
}

func (c *TrainConfig) validate() error {
	switch {
	case c.Algo != "ppo" && c.Algo != "a2c" && c.Algo != "dqn":
		return fmt.Errorf("datacenter: unknown algorithm %q (want ppo, a2c or dqn)", c.Algo)
	case c.Mode != Shared && c.Mode != Independent:
		return fmt.Errorf("datacenter: unknown multi-agent mode %q (want %s or %s)", c.Mode, Shared, Independent)
	case c.Algo == "dqn" && c.Env.Action == Continuous:
		return fmt.Errorf("datacenter: DQN needs the discrete action space")
	case c.Steps < 1 || c.Envs < 1 || c.Workers < 0:
		return fmt.Errorf("datacenter: steps %d and envs %d must be positive", c.Steps, c.Envs)
	case !(c.LearningRate > 0) || !(c.Gamma > 0 && c.Gamma <= 1) || !(c.Lambda > 0 && c.Lambda <= 1):
		return fmt.Errorf("datacenter: learning rate %g must be positive, gamma %g and lambda %g in (0, 1]", c.LearningRate, c.Gamma, c.Lambda)
	case c.Checkpoint != "" && c.Mode == Independent && c.Env.Agents > 1:
		return fmt.Errorf("datacenter: checkpoints need a single learner (use --mode shared or one agent)")
	case c.ShareEvery < 0 || !(c.Consensus >= 0 && c.Consensus <= 1):
		return fmt.Errorf("datacenter: share interval %d must be >= 0 and consensus %g in [0, 1]", c.ShareEvery, c.Consensus)
	case (c.ShareEvery > 0 || c.Consensus > 0) && c.Algo == "dqn":
		return fmt.Errorf("datacenter: policy sharing and the consensus penalty need an actor-critic learner (ppo or a2c)")
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("datacenter: hidden width %d must be positive", h)
		}
	}
	return nil
}

// Learner is an rl.Agent that reports its recent training episodes.
type Learner interface {
	rl.Agent
	EpisodeWindow() (meanReturn, meanLength float64)
}

// Trained is the outcome of Train.
type Trained struct {
	// Policies holds one policy (single agent or parameter sharing) or K
	// (independent learners, agent order).
	Policies []*policy.Policy
	// Learners are the trained learners (same order).
	Learners []Learner
	// Loggers hold each learner's last logged statistics.
	Loggers []*trainlog.Logger
	// Run is the training wall time.
	Run rl.Run
	// Intervals is the number of simulated intervals trained on.
	Intervals int64
}

// newLearner builds algorithm cfg.Algo on venv with the data-centre settings: the
// Stable-Baselines3 defaults the paper used, except the discount (0.8),
// PPO's learning rate (1e-3; the paper trained with 3e-3),
// rollouts sized to the short episodes, an entropy bonus for the discrete
// policies and a smaller replay buffer with a faster target update for
// DQN.
func newLearner(cfg *TrainConfig, venv env.VecEnv, seed uint64, steps int64, logger *trainlog.Logger) (Learner, error) {
	ent := 0.0
	if cfg.Env.Action == Discrete {
		ent = 0.01
	}
	switch cfg.Algo {
	case "ppo":
		// 128 steps per row: about four episodes per simulation between
		// updates.
		return ppo.New(venv, ppo.Config{Seed: seed, LearningRate: cfg.LearningRate, NSteps: 128, BatchSize: 64, NEpochs: 10,
			Gamma: cfg.Gamma, GAELambda: cfg.Lambda, EntCoef: ent, Hidden: cfg.Hidden}, logger)
	case "a2c":
		return a2c.New(venv, a2c.Config{Seed: seed, LearningRate: cfg.LearningRate, NSteps: 8, Gamma: cfg.Gamma,
			GAELambda: cfg.Lambda, EntCoef: ent, Hidden: cfg.Hidden}, logger)
	case "dqn":
		// Learning starts after 1000 transitions, or a quarter of a
		// shorter run.
		return dqn.New(venv, dqn.Config{Seed: seed, LearningRate: cfg.LearningRate, BufferSize: 50_000, LearningStarts: int(min(1000, steps/4)),
			BatchSize: 64, Gamma: cfg.Gamma, TrainFreq: 1, GradientSteps: 1, TargetUpdateInterval: 1000,
			ExplorationFraction: 0.3, FinalEps: 0.05, Hidden: cfg.Hidden, TotalSteps: steps,
			LogEvery: int64(cfg.Env.Steps * venv.NumEnvs())}, logger)
	}
	return nil, fmt.Errorf("datacenter: unknown algorithm %q", cfg.Algo)
}

// Train trains the agents. Single agent and Shared mode run one learner
// through rl.Train (checkpoints, resume); Independent mode runs K learners
// whose iterations proceed together, each in its own goroutine, the views
// stepping the shared simulations in lockstep.
func Train(ctx context.Context, cfg TrainConfig) (*Trained, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	mv, err := NewMultiVec(cfg.Env, cfg.Envs, cfg.Workers)
	if err != nil {
		return nil, err
	}
	k := mv.Agents()
	csv := func(i int) io.Writer {
		if cfg.CSV == nil {
			return nil
		}
		return cfg.CSV(i)
	}
	meta := func(steps int64, wall float64, agent int) policy.Meta {
		m := policy.Meta{Algo: cfg.Algo, Env: "dcrl-" + cfg.Env.Base.Name, Command: cfg.Command, Seed: cfg.Seed, Steps: steps,
			TrainingWallS: wall, Extra: map[string]string{
				"agents":   fmt.Sprint(k),
				"mode":     cfg.Mode,
				"action":   mv.kind.String(),
				"interval": mv.sims[0].cfg.Interval.String(),
				"steps":    fmt.Sprint(mv.sims[0].cfg.Steps),
				"history":  fmt.Sprint(mv.sims[0].cfg.History),
				"alpha":    fmt.Sprint(mv.sims[0].cfg.Reward.Alpha),
				"tau":      mv.sims[0].cfg.Reward.Tau.String(),
				"envs":     fmt.Sprint(cfg.Envs),
				"gamma":    fmt.Sprint(cfg.Gamma),
				"lr":       fmt.Sprint(cfg.LearningRate),
				"workload": cmp.Or(mv.sims[0].cfg.Workload, "datacenter"),
			}}
		if cfg.Mode == Independent && k > 1 {
			m.Extra["agent"] = fmt.Sprint(agent)
		}
		return m
	}
	if k == 1 || cfg.Mode == Shared {
		// One learner over all E·K rows: its step count is K per interval.
		steps := cfg.Steps * int64(k)
		nv, err := env.NewVecNormalize(mv, true, false, cfg.Gamma)
		if err != nil {
			return nil, err
		}
		logger := trainlog.New(csv(0), cfg.Progress, steps, fmt.Sprintf("dc %s seed %d", cfg.Algo, cfg.Seed))
		defer logger.Close()
		l, err := newLearner(&cfg, nv, cfg.Seed, steps, logger)
		if err != nil {
			return nil, err
		}
		run, err := rl.Train(ctx, l, rl.TrainConfig{Steps: steps, CheckpointPath: cfg.Checkpoint, CheckpointEvery: cfg.CheckpointEvery, Now: cfg.Now}, cfg.Resume)
		if err != nil {
			return nil, err
		}
		p, err := l.Policy(meta(l.Steps(), run.WallSeconds, 0))
		if err != nil {
			return nil, err
		}
		return &Trained{Policies: []*policy.Policy{p}, Learners: []Learner{l}, Loggers: []*trainlog.Logger{logger}, Run: run,
			Intervals: l.Steps() / int64(k)}, nil
	}
	return trainIndependent(ctx, &cfg, mv, meta, csv)
}

// trainIndependent runs K learners in lockstep. Iterations never see a
// cancelled context (a learner stopping between steps would leave the
// others waiting); cancellation is checked between joint iterations.
func trainIndependent(ctx context.Context, cfg *TrainConfig, mv *MultiVec, meta func(int64, float64, int) policy.Meta, csv func(int) io.Writer) (*Trained, error) {
	k := mv.Agents()
	views := mv.Views()
	tr := &Trained{}
	for i, w := range views {
		nv, err := env.NewVecNormalize(w, true, false, cfg.Gamma)
		if err != nil {
			return nil, err
		}
		var prog io.Writer
		if i == 0 {
			prog = cfg.Progress
		}
		logger := trainlog.New(csv(i), prog, cfg.Steps, fmt.Sprintf("dc %s agent %d seed %d", cfg.Algo, i, cfg.Seed))
		defer logger.Close()
		l, err := newLearner(cfg, nv, cfg.Seed+uint64(i)*1_000_003, cfg.Steps, logger)
		if err != nil {
			return nil, err
		}
		tr.Learners = append(tr.Learners, l)
		tr.Loggers = append(tr.Loggers, logger)
	}
	start := cfg.Now()
	errs := make([]error, k)
	nets, err := actorCritics(tr.Learners)
	if err != nil && (cfg.ShareEvery > 0 || cfg.Consensus > 0) {
		return nil, err
	}
	iter := 0
	for tr.Learners[0].Steps() < cfg.Steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("datacenter: independent training interrupted after %d intervals (no checkpoints in this mode): %w", tr.Learners[0].Steps(), err)
		}
		par.Do(context.Background(), len(tr.Learners), len(tr.Learners), nil, func(_, i int) {
			errs[i] = tr.Learners[i].Iterate(context.Background())
		})
		for i, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("datacenter: agent %d: %w", i, err)
			}
		}
		iter++
		if cfg.Consensus > 0 {
			pullTowardsMean(nets.critics, float32(cfg.Consensus))
		}
		if cfg.ShareEvery > 0 && iter%cfg.ShareEvery == 0 {
			pullTowardsMean(nets.actors, 1)
			pullTowardsMean(nets.critics, 1)
		}
	}
	tr.Run = rl.Run{WallSeconds: cfg.Now().Sub(start).Seconds()}
	tr.Intervals = tr.Learners[0].Steps()
	for i, l := range tr.Learners {
		p, err := l.Policy(meta(l.Steps(), tr.Run.WallSeconds, i))
		if err != nil {
			return nil, err
		}
		tr.Policies = append(tr.Policies, p)
	}
	return tr, nil
}

// agentNets holds each independent agent's actor and critic parameters
// (including a Gaussian policy's log standard deviations with the actor).
type agentNets struct{ actors, critics [][][]float32 }

// actorCritics returns the learners' parameter slices, which PPO and A2C
// expose; DQN has no actor-critic.
func actorCritics(ls []Learner) (agentNets, error) {
	var n agentNets
	for i, l := range ls {
		var pi, vf, logStd []float32
		switch a := l.(type) {
		case *ppo.PPO:
			pi, vf, logStd = a.AC.Pi.Params, a.AC.Vf.Params, a.AC.LogStd
		case *a2c.A2C:
			pi, vf, logStd = a.AC.Pi.Params, a.AC.Vf.Params, a.AC.LogStd
		default:
			return agentNets{}, fmt.Errorf("datacenter: agent %d (%T) has no actor-critic to share", i, l)
		}
		n.actors = append(n.actors, [][]float32{pi, logStd})
		n.critics = append(n.critics, [][]float32{vf})
	}
	return n, nil
}

// pullTowardsMean moves every agent's parameters a fraction w of the way
// to the agents' mean (w = 1: all equal to the mean). The mean is taken
// before any agent moves, so the result does not depend on agent order.
func pullTowardsMean(agents [][][]float32, w float32) {
	if len(agents) < 2 {
		return
	}
	for s := range agents[0] {
		n := len(agents[0][s])
		for j := range n {
			var mean float32
			for _, a := range agents {
				mean += a[s][j]
			}
			mean /= float32(len(agents))
			for _, a := range agents {
				if w >= 1 {
					a[s][j] = mean // exactly equal, whatever the rounding
				} else {
					a[s][j] += w * (mean - a[s][j])
				}
			}
		}
	}
}
