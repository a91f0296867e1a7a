package marlin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/sac"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// TrainConfig configures training. Zero values take the defaults in
// brackets, which follow the MARLIN authors' Stable-Baselines3 setup
// (RaffaeleGalliera/marlin-rlcc: SAC, MLP [400, 300], learning rate 3e-4,
// batch 512, 10-state history) and the paper's run (replay buffer 250K).
type TrainConfig struct {
	// Base is the training scenario (satcom-uhf). Required.
	Base *scenario.Scenario
	// Steps is the number of environment steps [200000].
	Steps int64
	// Envs is the number of parallel environments [8]; Workers the
	// goroutines stepping them [GOMAXPROCS].
	Envs, Workers int
	// Seed seeds everything.
	Seed uint64
	// Loss is the UHF loss during training [0.03, as the paper].
	Loss float64
	// Randomize draws each episode's switch time in [5s, 15s] and its
	// SATCOM background intensity in [0.8, 1.2] (domain randomisation, so
	// the policy does not learn one timeline by heart); false trains on
	// the paper's fixed scenario.
	Randomize bool
	// Bulk trains on a never-ending flow, as the paper's partial episodes
	// do. By default each episode is instead a transfer of 300 KB to
	// 1 MB (log-uniform) that ends when its last byte is acknowledged or is
	// truncated after 200 steps: with equation 1's cumulative ratio, a bulk
	// flow that gets ahead of its target early can coast with a one-segment
	// window for the rest of the episode at little cost, which is exactly
	// wrong for the paper's evaluation task, a 600 KB transfer.
	Bulk bool
	// Gamma is the discount [0.99, SB3's default, as the authors].
	Gamma float64
	// Hidden are the hidden-layer widths [400, 300]; BatchSize [512];
	// Buffer [250000]; LearningRate [3e-4]; GradientSteps per vectorised
	// step [1].
	Hidden        []int
	BatchSize     int
	Buffer        int
	LearningRate  float64
	GradientSteps int
	// Checkpoint is where checkpoints go, every CheckpointEvery [5m].
	Checkpoint      string
	CheckpointEvery time.Duration
	// Resume continues from Checkpoint if it exists.
	Resume bool
	// CSV receives the learning curve; Progress the progress bar.
	CSV, Progress io.Writer
	// Command is recorded in the policy file.
	Command string
	// Action is the action parametrisation (EnvConfig.Action), recorded in
	// the policy file so evaluation applies the same one [ActionLinear;
	// ActionBDP for the compact variant].
	Action string
	// Variant is the formulation (EnvConfig.Variant), recorded in the
	// policy file [VariantPaper]. VariantCompact changes the defaults of
	// Hidden to [64, 64] and of Action to ActionBDP.
	Variant string

	// Training options of the ablation study (docs/marlin.md). Zero values
	// keep the defaults above.

	// FrameSkip repeats each action for this many 100-ms steps, summing
	// their rewards (action repeat; compact variant only: the live serving
	// path of the paper's agent acts every step) [1]. It must divide
	// EpisodeSteps, so an episode still lasts 20 s.
	FrameSkip int
	// NStep is SAC's number of rewards per critic target (sac.Config.NStep)
	// [1].
	NStep int
	// EntCoef fixes SAC's entropy coefficient if positive; EntCoefInit is
	// its initial value under automatic tuning [1]; TargetEntropy the
	// tuning's target [−1, −dim(A)] (sac.Config; rl.Zero for an explicit 0).
	EntCoef, EntCoefInit, TargetEntropy float64
	// NoObsNorm trains on raw observations, without the running
	// observation normalisation.
	NoObsNorm bool
	// Timeline's ranges replace Randomize's, of the switch time [5 s,
	// 15 s] and of the SATCOM background scale [0.8, 1.2], where set
	// (with Randomize only); its exclusions cut an interval out of them,
	// so that a condition of the evaluation (the switch at 5 s, the
	// background x1.5) stays unseen while its neighbourhood is trained on.
	Timeline
	// QueueCost replaces the compact reward's queueing weight [QueueCost].
	QueueCost float64
	// LinkShaping credits delivered bytes at the current link's rate
	// (EnvConfig.LinkShaping) [off].
	LinkShaping bool
	// CapacityWindow and MinRTTWindow are the compact variant's filter
	// windows (EnvConfig), recorded in the policy file when set, since
	// the policy acts on the features they define.
	CapacityWindow, MinRTTWindow time.Duration
	// BDPSpan is ActionBDP's span (EnvConfig.BDPSpan), recorded in the
	// policy file when set, since it defines what the policy's action
	// means.
	BDPSpan float64
	// RTTFeature is EnvConfig.RTTFeature, recorded in the policy file
	// (rtt_feature), which then has CompactFeaturesRTT inputs per step.
	RTTFeature bool
	// WindowCap is EnvConfig.WindowCap (compact variant only; 0: the
	// paper's WindowCap), recorded in the policy file as window_cap, as
	// the paper's cap always was.
	WindowCap units.Bytes
	// Demo names a demonstrator (DemoBDP) whose actions, with Gaussian
	// noise of standard deviation DemoNoise, replace the learner's for the
	// first DemoSteps environment steps (sac.Config.Demonstrator): a
	// training choice of ours, not the paper's.
	Demo      string
	DemoSteps int64
	DemoNoise float64
	// DemoScale multiplies the nominal bandwidth-delay product the
	// demonstrator aims at (EnvConfig.DemoScale), with Demo [1].
	DemoScale float64
	// BCWeight, with Demo, adds a behaviour-cloning term towards the
	// demonstrator's action to the actor's loss for the whole of training
	// (sac.Config.BCWeight; TD3+BC's 0.4): ours, not the paper's. With
	// it DemoSteps may be 0.
	BCWeight float64

	// ValidateEvery, if positive, evaluates the deterministic policy every
	// this many environment steps, and at the end, on ValidateRuns [20]
	// transfers of the evaluation's task (600 KB on the paper's fixed
	// timeline) at Loss, seeds from SnapshotSeed+1, and Train returns the
	// snapshot with the lowest score (ValidateBy [ValidateByTime])
	// instead of the last: model selection on held-out transfers, as
	// Stable-Baselines3's EvalCallback keeps best_model. Ours, not the
	// paper's. ValidateSets are scenario overrides ("dotted.path=value",
	// as --set) applied to the validation transfers only, e.g. a switch
	// time inside the training range that no evaluation condition uses.
	// ValidateOn [ValidateOnPaper] is the validation transfers'
	// timeline: the paper's, or with ValidateOnTraining each transfer's
	// switch time and background scale drawn from the training ranges
	// (Randomize's), so the choice sees the UHF link as training does.
	// ValidationCSV receives a row per validation (ValidationCSVHeader).
	ValidateEvery int64
	ValidateRuns  int
	ValidateBy    string
	ValidateSets  []string
	ValidateOn    string
	ValidationCSV io.Writer
}

// The validation transfers' timelines (TrainConfig.ValidateOn).
const (
	// ValidateOnPaper validates on the base scenario's timeline (the
	// paper's: the switch at 10 s), with ValidateSets applied.
	ValidateOnPaper = "paper"
	// ValidateOnTraining draws each validation transfer's switch time
	// and background scale from the training ranges (EvalConfig.Timeline).
	ValidateOnTraining = "training"
)

func (c *TrainConfig) defaults() {
	c.Steps = cmp.Or(c.Steps, 200_000)
	c.Envs = cmp.Or(c.Envs, 8)
	c.Loss = cmp.Or(c.Loss, 0.03)
	c.Variant = cmp.Or(c.Variant, VariantPaper)
	if len(c.Hidden) == 0 {
		c.Hidden = []int{400, 300}
		if c.Variant == VariantCompact {
			c.Hidden = []int{64, 64}
		}
	}
	if c.Variant == VariantCompact {
		c.Action = cmp.Or(c.Action, ActionBDP)
	}
	c.BatchSize = cmp.Or(c.BatchSize, 512)
	c.Buffer = cmp.Or(c.Buffer, 250_000)
	c.LearningRate = cmp.Or(c.LearningRate, 3e-4)
	c.GradientSteps = cmp.Or(c.GradientSteps, 1)
	c.Gamma = cmp.Or(c.Gamma, 0.99)
	c.Action = cmp.Or(c.Action, ActionLinear)
	c.FrameSkip = cmp.Or(c.FrameSkip, 1)
	c.NStep = cmp.Or(c.NStep, 1)
	c.ValidateRuns = cmp.Or(c.ValidateRuns, 20)
	c.ValidateBy = cmp.Or(c.ValidateBy, ValidateByTime)
	c.ValidateOn = cmp.Or(c.ValidateOn, ValidateOnPaper)
}

func (c *TrainConfig) validate() error {
	if c.Base == nil {
		return fmt.Errorf("marlin: no training scenario")
	}
	if c.FrameSkip < 1 || EpisodeSteps%c.FrameSkip != 0 {
		return fmt.Errorf("marlin: frame skip %d must be a positive divisor of the episode's %d steps", c.FrameSkip, EpisodeSteps)
	}
	if c.FrameSkip > 1 && c.Variant != VariantCompact {
		return fmt.Errorf("marlin: frame skip needs the %q variant (the paper's agent is served live one step at a time)", VariantCompact)
	}
	if (c.QueueCost != 0 || c.LinkShaping) && c.Variant != VariantCompact {
		return fmt.Errorf("marlin: a queueing cost and link shaping need the %q variant's reward", VariantCompact)
	}
	ec := c.EnvConfigFor()
	if err := ec.checkCompactOptions(); err != nil {
		return err
	}
	if _, err := demoFor(c.Demo, nil); err != nil {
		return err
	}
	if !(c.BCWeight >= 0) || math.IsInf(c.BCWeight, 1) || c.BCWeight > 0 && c.Demo == "" {
		return fmt.Errorf("marlin: behaviour-cloning weight %g must be finite and >= 0, and set only with a demonstrator", c.BCWeight)
	}
	if (c.Demo != "") != (c.DemoSteps > 0 || c.BCWeight > 0) || c.DemoSteps < 0 {
		return fmt.Errorf("marlin: a demonstrator (%q) needs a positive number of demonstration steps (%d) or behaviour-cloning weight (%g), and demonstration steps a demonstrator", c.Demo, c.DemoSteps, c.BCWeight)
	}
	if c.DemoNoise < 0 || math.IsNaN(c.DemoNoise) || c.DemoNoise > 0 && c.Demo == "" {
		return fmt.Errorf("marlin: demonstration noise %g must be >= 0, and set only with a demonstrator", c.DemoNoise)
	}
	if c.QueueCost < 0 {
		return fmt.Errorf("marlin: queueing cost %g must be positive", c.QueueCost)
	}
	if c.DemoScale != 0 && (!(c.DemoScale > 0 && c.DemoScale <= MaxDemoScale) || c.Demo == "") {
		return fmt.Errorf("marlin: demonstration scale %g must be in (0, %g], and set only with a demonstrator", c.DemoScale, MaxDemoScale)
	}
	if err := c.Timeline.Check(); err != nil {
		return err
	}
	if c.ValidateEvery < 0 || c.ValidateRuns < 1 {
		return fmt.Errorf("marlin: validation every %d steps on %d transfers: both must be positive (0 steps: no validation)", c.ValidateEvery, c.ValidateRuns)
	}
	if len(c.ValidateSets) > 0 && c.ValidateEvery == 0 {
		return fmt.Errorf("marlin: validation overrides %q without validation (ValidateEvery 0)", c.ValidateSets)
	}
	if c.ValidateBy != ValidateByTime && c.ValidateBy != ValidateByGoals {
		return fmt.Errorf("marlin: validation by %q: want %q or %q", c.ValidateBy, ValidateByTime, ValidateByGoals)
	}
	switch c.ValidateOn {
	case ValidateOnPaper:
	case ValidateOnTraining:
		if c.ValidateEvery == 0 {
			return fmt.Errorf("marlin: validation on %q timelines without validation (ValidateEvery 0)", c.ValidateOn)
		}
		if !c.Randomize {
			return fmt.Errorf("marlin: validation on %q timelines needs Randomize: without it training has one timeline, the paper's", c.ValidateOn)
		}
	default:
		return fmt.Errorf("marlin: validation on %q timelines: want %q or %q", c.ValidateOn, ValidateOnPaper, ValidateOnTraining)
	}
	return nil
}

// EnvConfigFor returns the environment configuration training uses.
func (c TrainConfig) EnvConfigFor() EnvConfig {
	e := EnvConfig{Base: c.Base, Loss: c.Loss, Action: c.Action, Variant: c.Variant, QueueCost: c.QueueCost, LinkShaping: c.LinkShaping,
		CapacityWindow: c.CapacityWindow, MinRTTWindow: c.MinRTTWindow, BDPSpan: c.BDPSpan, RTTFeature: c.RTTFeature, WindowCap: c.WindowCap, DemoScale: c.DemoScale}
	if !c.Bulk {
		e.BytesRange = [2]units.Bytes{300_000, 1_000_000}
	}
	if c.Randomize {
		e.Timeline = c.Timeline
		d := TrainingTimeline()
		if e.SwitchRange[1] == 0 {
			e.SwitchRange = d.SwitchRange
		}
		if e.BackgroundScale[1] == 0 {
			e.BackgroundScale = d.BackgroundScale
		}
	}
	return e
}

// Trained is the outcome of Train.
type Trained struct {
	// Policy is the trained policy: the last snapshot, or with
	// ValidateEvery the one validation chose.
	Policy *policy.Policy
	// Last is the last snapshot when validation chose Policy, else nil.
	Last  *policy.Policy
	Run   rl.Run
	Steps int64
}

// Train trains a MARLIN agent with SAC on normalised observations.
func Train(ctx context.Context, cfg TrainConfig) (*Trained, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	envs := make([]env.Env, cfg.Envs)
	cores := make([]*Env, cfg.Envs)
	for i := range envs {
		e, core, err := newTrainingEnv(cfg.EnvConfigFor(), cfg.FrameSkip)
		if err != nil {
			return nil, err
		}
		envs[i], cores[i] = e, core
	}
	demo, err := demoFor(cfg.Demo, cores)
	if err != nil {
		return nil, err
	}
	v, err := env.NewVec(envs, cfg.Workers)
	if err != nil {
		return nil, err
	}
	// Running observation normalisation (the authors' VecNormalize);
	// equation 1's rewards are already in [-2, 0], the compact reward's
	// are of order 0.1-1.
	var venv env.VecEnv = v
	if !cfg.NoObsNorm {
		nv, err := env.NewVecNormalize(v, true, false, 0.99)
		if err != nil {
			return nil, err
		}
		venv = nv
	}
	logger := trainlog.New(cfg.CSV, cfg.Progress, cfg.Steps, fmt.Sprintf("marlin sac seed %d", cfg.Seed))
	defer logger.Close()
	agent, err := sac.New(venv, sac.Config{
		Seed:          cfg.Seed,
		Hidden:        cfg.Hidden,
		BatchSize:     cfg.BatchSize,
		BufferSize:    cfg.Buffer,
		LearningRate:  cfg.LearningRate,
		GradientSteps: cfg.GradientSteps,
		Gamma:         cfg.Gamma,
		NStep:         cfg.NStep,
		EntCoef:       cfg.EntCoef,
		EntCoefInit:   cfg.EntCoefInit,
		TargetEntropy: cfg.TargetEntropy,
		LogEvery:      int64(EpisodeSteps * cfg.Envs),
		Demonstrator:  demo,
		DemoSteps:     cfg.DemoSteps,
		DemoNoise:     cfg.DemoNoise,
		BCWeight:      cfg.BCWeight,
	}, logger)
	if err != nil {
		return nil, err
	}
	meta := cfg.meta
	tc := rl.TrainConfig{
		Steps:           cfg.Steps,
		CheckpointPath:  cfg.Checkpoint,
		CheckpointEvery: cfg.CheckpointEvery,
	}
	var learner rl.Agent = agent
	var val *validated
	if cfg.ValidateEvery > 0 {
		if cfg.ValidationCSV != nil {
			if _, err := fmt.Fprintln(cfg.ValidationCSV, ValidationCSVHeader); err != nil {
				return nil, fmt.Errorf("marlin: validation CSV: %w", err)
			}
		}
		vbase, err := validationBase(cfg.Base, cfg.ValidateSets)
		if err != nil {
			return nil, err
		}
		vc := EvalConfig{Base: vbase, Runs: cfg.ValidateRuns, Losses: []float64{cfg.Loss}, Schemes: []Scheme{Marlin}, Seed: SnapshotSeed}
		if cfg.ValidateOn == ValidateOnTraining {
			vc.Timeline = cfg.EnvConfigFor().Timeline
		}
		val, err = newValidated(ctx, agent, vc, cfg.ValidateEvery, cfg.ValidateBy, validationScenario(cfg.ValidateSets, vc.Timeline), meta, cfg.ValidationCSV)
		if err != nil {
			return nil, err
		}
		learner = val
		tc.AfterIteration = func(rl.Agent) error { return val.afterIteration(ctx) }
	}
	run, err := rl.Train(ctx, learner, tc, cfg.Resume)
	if err != nil {
		return nil, err
	}
	m := meta()
	m.TrainingWallS = run.WallSeconds
	p, err := agent.Policy(m)
	if err != nil {
		return nil, err
	}
	if val != nil {
		if err := val.finish(ctx); err != nil {
			return nil, err
		}
		return &Trained{Policy: val.selected(run.WallSeconds), Last: p, Run: run, Steps: agent.Steps()}, nil
	}
	return &Trained{Policy: p, Run: run, Steps: agent.Steps()}, nil
}

// meta is the metadata every snapshot of a run carries (agent.Policy
// fills in the steps, Train the wall time).
func (cfg *TrainConfig) meta() policy.Meta {
	extra := map[string]string{
		"loss":       fmt.Sprint(cfg.Loss),
		"randomize":  fmt.Sprint(cfg.Randomize),
		"bulk":       fmt.Sprint(cfg.Bulk),
		"gamma":      fmt.Sprint(cfg.Gamma),
		"action":     cfg.Action,
		"variant":    cfg.Variant,
		"envs":       fmt.Sprint(cfg.Envs),
		"hidden":     fmt.Sprint(cfg.Hidden),
		"window_cap": WindowCap.String(),
		"step":       StepInterval.String(),
	}
	// Recorded only when set, so the default options' policy files are
	// those of the builds before them; frame_skip is applied by Evaluate,
	// the others only document the run.
	if cfg.FrameSkip > 1 {
		extra["frame_skip"] = fmt.Sprint(cfg.FrameSkip)
	}
	if cfg.NStep > 1 {
		extra["n_step"] = fmt.Sprint(cfg.NStep)
	}
	if cfg.NoObsNorm {
		extra["obs_norm"] = "false"
	}
	if cfg.Demo != "" {
		extra["demo"] = cfg.Demo
		extra["demo_steps"] = fmt.Sprint(cfg.DemoSteps)
		extra["demo_noise"] = fmt.Sprint(cfg.DemoNoise)
		if cfg.DemoScale != 0 && cfg.DemoScale != 1 {
			extra["demo_scale"] = fmt.Sprint(cfg.DemoScale)
		}
	}
	if cfg.BCWeight > 0 {
		extra["bc_weight"] = fmt.Sprint(cfg.BCWeight)
	}
	if cfg.CapacityWindow != 0 {
		extra["capacity_window"] = cfg.CapacityWindow.String()
	}
	if cfg.MinRTTWindow != 0 {
		extra["min_rtt_window"] = cfg.MinRTTWindow.String()
	}
	if cfg.BDPSpan != 0 {
		extra["bdp_span"] = fmt.Sprint(cfg.BDPSpan)
	}
	if cfg.RTTFeature {
		extra["rtt_feature"] = "true"
	}
	if cfg.WindowCap != 0 {
		extra["window_cap"] = cfg.WindowCap.String()
	}
	return policy.Meta{Algo: "sac", Env: "marlin-" + cfg.Base.Name, Command: cfg.Command, Seed: cfg.Seed, Extra: extra}
}
