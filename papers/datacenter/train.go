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
	// Consensus is the coefficient c_cons of the paper's consensus penalty
	// on the difference between an agent's value estimates and its
	// neighbours' (see consensus.go for the term and its symbols), added
	// to every PPO minibatch's loss, in either multi-agent mode. The paper
	// includes the penalty in its multi-agent design but gives no
	// coefficient and reports no multi-agent result, so it is off by
	// default [0: off; PPO and at least two agents].
	Consensus float64
	// forceConsensus installs the penalty even at coefficient 0 (tests:
	// the hook alone must change nothing).
	forceConsensus bool
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
	case c.ShareEvery < 0 || !(c.Consensus >= 0 && c.Consensus <= 1e6):
		return fmt.Errorf("datacenter: share interval %d must be >= 0 and the consensus coefficient %g in [0, 1e6]", c.ShareEvery, c.Consensus)
	case c.ShareEvery > 0 && c.Algo == "dqn":
		return fmt.Errorf("datacenter: policy sharing needs an actor-critic learner (ppo or a2c)")
	case c.Consensus > 0 && c.Algo != "ppo":
		return fmt.Errorf("datacenter: the consensus penalty is built for PPO (learn/rl/ppo's Penalty hook), not %s", c.Algo)
	case c.Consensus > 0 && c.Env.Agents < 2:
		return fmt.Errorf("datacenter: the consensus penalty needs at least two agents (--agents), got %d", c.Env.Agents)
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
	// ValueDisagreement, for independent PPO learners, is after every
	// joint iteration the mean over the rollout's steps and over ordered
	// pairs of agents of (V_i − V_j)², the agents' value estimates of the
	// same step as collected: what the consensus penalty shrinks.
	ValueDisagreement []float64
}

// newLearner builds algorithm cfg.Algo on venv with the data-centre settings: the
// Stable-Baselines3 defaults the paper used, except the discount (0.8),
// PPO's learning rate (1e-3; the paper trained with 3e-3),
// rollouts sized to the short episodes, an entropy bonus for the discrete
// policies and a smaller replay buffer with a faster target update for
// DQN. pen, if set, is PPO's extra loss term (the consensus penalty).
func newLearner(cfg *TrainConfig, venv env.VecEnv, seed uint64, steps int64, logger *trainlog.Logger, pen ppo.Penalty) (Learner, error) {
	ent := 0.0
	if cfg.Env.Action == Discrete {
		ent = 0.01
	}
	switch cfg.Algo {
	case "ppo":
		// 128 steps per row: about four episodes per simulation between
		// updates.
		return ppo.New(venv, ppo.Config{Seed: seed, LearningRate: cfg.LearningRate, NSteps: 128, BatchSize: 64, NEpochs: 10,
			Gamma: cfg.Gamma, GAELambda: cfg.Lambda, EntCoef: ent, Hidden: cfg.Hidden, Penalty: pen}, logger)
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
		if f := mv.sims[0].cfg.Reward.Fairness; f != 0 {
			// Only when set, so files trained with the paper's reward
			// stay as they were.
			m.Extra["fairness"] = fmt.Sprint(f)
		}
		if cfg.Consensus > 0 {
			m.Extra["consensus"] = fmt.Sprint(cfg.Consensus)
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
		var cons *consensus
		var pen ppo.Penalty
		if cfg.Consensus > 0 || cfg.forceConsensus {
			cons = &consensus{coef: cfg.Consensus, k: k}
			pen = cons.penalty(-1)
		}
		l, err := newLearner(&cfg, nv, cfg.Seed, steps, logger, pen)
		if err != nil {
			return nil, err
		}
		if cons != nil {
			cons.own = l.(*ppo.PPO) // validate admits the penalty with PPO only
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
	var cons *consensus
	if cfg.Consensus > 0 || cfg.forceConsensus {
		cons = &consensus{coef: cfg.Consensus, k: k}
	}
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
		var pen ppo.Penalty
		if cons != nil {
			pen = cons.penalty(i)
		}
		l, err := newLearner(cfg, nv, cfg.Seed+uint64(i)*1_000_003, cfg.Steps, logger, pen)
		if err != nil {
			return nil, err
		}
		tr.Learners = append(tr.Learners, l)
		tr.Loggers = append(tr.Loggers, logger)
	}
	start := cfg.Now()
	errs := make([]error, k)
	nets, err := actorCritics(tr.Learners)
	if err != nil && cfg.ShareEvery > 0 {
		return nil, err
	}
	// PPO learners (the consensus penalty's, and the disagreement
	// diagnostic's); nil for A2C and DQN.
	var ppos []*ppo.PPO
	for _, l := range tr.Learners {
		if p, ok := l.(*ppo.PPO); ok {
			ppos = append(ppos, p)
		}
	}
	if len(ppos) != len(tr.Learners) {
		ppos = nil
	}
	iter := 0
	for tr.Learners[0].Steps() < cfg.Steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("datacenter: independent training interrupted after %d intervals (no checkpoints in this mode): %w", tr.Learners[0].Steps(), err)
		}
		if cons == nil {
			if err := joint(errs, func(i int) error { return tr.Learners[i].Iterate(context.Background()) }); err != nil {
				return nil, err
			}
		} else {
			// Every rollout must be complete before any update reads the
			// neighbours' values: all collect (in lockstep), the values
			// are shared, then all update.
			if err := joint(errs, func(i int) error { return ppos[i].Collect(context.Background()) }); err != nil {
				return nil, err
			}
			cons.share(ppos)
			if err := joint(errs, func(i int) error { return ppos[i].Update(context.Background()) }); err != nil {
				return nil, err
			}
		}
		if ppos != nil {
			tr.ValueDisagreement = append(tr.ValueDisagreement, valueDisagreement(ppos))
		}
		iter++
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

// valueDisagreement is the mean over rollout rows and ordered pairs i ≠ j
// of (V_i − V_j)² for learners that collected the same steps.
func valueDisagreement(ls []*ppo.PPO) float64 {
	k := len(ls)
	if k < 2 {
		return 0
	}
	n := len(ls[0].RolloutValues())
	var sum float64
	for i := range k {
		vi := ls[i].RolloutValues()
		for j := range k {
			if j == i {
				continue
			}
			vj := ls[j].RolloutValues()
			for r := range n {
				d := float64(vi[r]) - float64(vj[r])
				sum += d * d
			}
		}
	}
	return sum / float64(n*k*(k-1))
}

// joint runs f for every agent concurrently (the views' lockstep needs
// one goroutine per agent) and returns the first agent's error.
func joint(errs []error, f func(i int) error) error {
	par.Do(context.Background(), len(errs), len(errs), nil, func(_, i int) { errs[i] = f(i) })
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("datacenter: agent %d: %w", i, err)
		}
	}
	return nil
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
