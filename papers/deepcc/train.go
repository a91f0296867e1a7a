package deepcc

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/ddpg"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// The split of the repository's cellular traces (traces/, Mahimahi
// downlinks): DeepCC trains on two long driving traces and is evaluated on
// three traces it never sees.
var (
	// TrainTraces are the training traces' file names.
	TrainTraces = []string{"ATT-LTE-driving.down.gz", "TMobile-LTE-driving.down.gz"}
	// EvalTraces are the held-out traces' file names.
	EvalTraces = []string{"TMobile-LTE-short.down.gz", "Verizon-LTE-short.down.gz", "ATT-LTE-driving-2016.down.gz"}
)

// TracePaths joins names to dir.
func TracePaths(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// TrainConfig configures training. Zero values take the defaults in
// brackets. The paper trains DDPG for about two million iterations (15
// hours); the defaults fit a ~25 minute run on two shared cores.
type TrainConfig struct {
	// Sampler draws the training episodes (its Traces are required unless
	// TraceFraction is 0).
	Sampler Sampler
	// Steps is the number of environment steps (decision intervals)
	// [2000000].
	Steps int64
	// Envs is the number of parallel environments [8]; Workers the
	// goroutines stepping them [GOMAXPROCS].
	Envs, Workers int
	// Seed seeds networks, exploration and episodes.
	Seed uint64
	// Hidden are the hidden-layer widths of actor and critic [128, 128];
	// BatchSize [128]; Buffer [300000]; LearningRate [5e-4]; Gamma [0.95:
	// a horizon of about 20 RTTs, enough for the delayed effect of a
	// window change]; NoiseStd, the Gaussian exploration noise on the
	// action [0.2]; GradientSteps per vectorised step [2: one update per
	// four transitions with 8 environments]; LearningStarts,
	// steps of random actions first [5000].
	Hidden         []int
	BatchSize      int
	Buffer         int
	LearningRate   float64
	Gamma          float64
	NoiseStd       float64
	GradientSteps  int
	LearningStarts int
	// LogEvery is the number of environment steps between learning-curve
	// rows [8000].
	LogEvery int64
	// Checkpoint is where checkpoints go, every CheckpointEvery [5m].
	Checkpoint      string
	CheckpointEvery time.Duration
	// Resume continues from Checkpoint if it exists.
	Resume bool
	// CSV receives the learning curve; Progress the progress bar.
	CSV, Progress io.Writer
	// Command is recorded in the policy file.
	Command string
	// DecisionRTTs is the environments' decision interval, minimum RTTs
	// [1]; the paper's is 0.5 (EnvConfig.DecisionRTTs).
	DecisionRTTs float64
}

func (c *TrainConfig) defaults() {
	c.Steps = cmp.Or(c.Steps, 2_000_000)
	c.Envs = cmp.Or(c.Envs, 8)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{128, 128}
	}
	c.BatchSize = cmp.Or(c.BatchSize, 128)
	c.Buffer = cmp.Or(c.Buffer, 300_000)
	c.LearningRate = cmp.Or(c.LearningRate, 5e-4)
	c.Gamma = cmp.Or(c.Gamma, 0.95)
	c.NoiseStd = cmp.Or(c.NoiseStd, 0.2)
	c.GradientSteps = cmp.Or(c.GradientSteps, 2)
	c.LearningStarts = cmp.Or(c.LearningStarts, 5000)
	c.LogEvery = cmp.Or(c.LogEvery, 8000)
}

// Trained is the outcome of Train.
type Trained struct {
	Policy *policy.Policy
	Run    rl.Run
	Steps  int64
}

// Train trains a goal-conditioned DeepCC agent with DDPG (rl/ddpg, which
// needs no change: the goal is part of the observation and the environment
// computes the goal-weighted reward). Observations are normalised with
// running statistics, saved in the policy.
func Train(ctx context.Context, cfg TrainConfig) (*Trained, error) {
	cfg.defaults()
	if cfg.Steps < 1 || cfg.Envs < 1 {
		return nil, fmt.Errorf("deepcc: steps %d and environments %d must be positive", cfg.Steps, cfg.Envs)
	}
	if err := cfg.Sampler.Validate(); err != nil {
		return nil, err
	}
	envs := make([]env.Env, cfg.Envs)
	for i := range envs {
		s := cfg.Sampler // each environment draws from its own copy; traces are shared
		e, err := NewEnv(EnvConfig{Sampler: &s, DecisionRTTs: cfg.DecisionRTTs})
		if err != nil {
			return nil, err
		}
		envs[i] = e
	}
	v, err := env.NewVec(envs, cfg.Workers)
	if err != nil {
		return nil, err
	}
	nv, err := env.NewVecNormalize(v, true, false, cfg.Gamma)
	if err != nil {
		return nil, err
	}
	logger := trainlog.New(cfg.CSV, cfg.Progress, cfg.Steps, fmt.Sprintf("deepcc ddpg seed %d", cfg.Seed))
	defer logger.Close()
	agent, err := ddpg.New(nv, ddpg.Config{
		Seed:           cfg.Seed,
		Hidden:         cfg.Hidden,
		BatchSize:      cfg.BatchSize,
		BufferSize:     cfg.Buffer,
		LearningRate:   cfg.LearningRate,
		Gamma:          cfg.Gamma,
		NoiseStd:       cfg.NoiseStd,
		GradientSteps:  cfg.GradientSteps,
		LearningStarts: cfg.LearningStarts,
		LogEvery:       cfg.LogEvery,
	}, logger)
	if err != nil {
		return nil, err
	}
	run, err := rl.Train(ctx, agent, rl.TrainConfig{
		Steps:           cfg.Steps,
		CheckpointPath:  cfg.Checkpoint,
		CheckpointEvery: cfg.CheckpointEvery,
	}, cfg.Resume)
	if err != nil {
		return nil, err
	}
	p, err := agent.Policy(policy.Meta{
		Algo: "ddpg", Env: "deepcc", Command: cfg.Command, Seed: cfg.Seed,
		Steps: agent.Steps(), TrainingWallS: run.WallSeconds,
		Extra: map[string]string{
			"envs":          fmt.Sprint(cfg.Envs),
			"hidden":        fmt.Sprint(cfg.Hidden),
			"gamma":         fmt.Sprint(cfg.Gamma),
			"noise":         fmt.Sprint(cfg.NoiseStd),
			"traces":        fmt.Sprint(cfg.Sampler.Traces),
			"features":      fmt.Sprint(FeatureNames),
			"history":       fmt.Sprint(History),
			"gain_exponent": fmt.Sprint(GainExponent),
		},
	})
	if err != nil {
		return nil, err
	}
	return &Trained{Policy: p, Run: run, Steps: agent.Steps()}, nil
}
