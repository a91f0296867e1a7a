package marlin

import (
	"fmt"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
)

// EvalEnv is the environment `cclab marlin eval` runs a learned policy in
// (one transfer of Bytes at one UHF loss level, the variant's stacked states, at most
// maxTime), for learners outside cclab: after each step that ends the
// episode, Outcome measures the transfer exactly as Evaluate does, so a
// policy trained elsewhere (Stable-Baselines3 over the gym service) is
// scored on the same transfers with the same metrics as cclab's own.
type EvalEnv struct {
	env.Env
	core    *Env
	maxTime time.Duration
}

// NewEvalEnv returns the evaluation environment of one loss level; Reset
// with seed i+1 runs Evaluate's run i (seed offset 0).
func NewEvalEnv(base *scenario.Scenario, loss float64, bytes units.Bytes, maxTime time.Duration) (*EvalEnv, error) {
	return NewVariantEvalEnv(base, loss, bytes, maxTime, VariantPaper, ActionLinear, 1)
}

// NewPolicyEvalEnv is the evaluation environment Evaluate runs policy p
// in: p's formulation (PolicyVariant), action parametrisation
// (PolicyAction) and frame skip (PolicyFrameSkip).
func NewPolicyEvalEnv(base *scenario.Scenario, loss float64, bytes units.Bytes, maxTime time.Duration, p *policy.Policy) (*EvalEnv, error) {
	c, err := policyEnvConfig(p)
	if err != nil {
		return nil, err
	}
	return NewConfigEvalEnv(base, loss, bytes, maxTime, c, PolicyFrameSkip(p))
}

// NewVariantEvalEnv is NewEvalEnv for a policy of another formulation
// (PolicyVariant), action parametrisation (PolicyAction) or frame skip
// (PolicyFrameSkip; 0 or 1: none), set up as Evaluate sets up that
// policy's transfers; an empty action is the variant's default (ActionBDP
// for VariantCompact, else ActionLinear). With a frame skip each Step
// holds the action for frameSkip steps of 100 ms and returns their summed
// reward, as in training; the time limit still counts 100-ms steps, so a
// transfer is cut at maxTime exactly where Evaluate cuts it, even when
// the last action is held for fewer steps.
func NewVariantEvalEnv(base *scenario.Scenario, loss float64, bytes units.Bytes, maxTime time.Duration, variant, action string, frameSkip int) (*EvalEnv, error) {
	return NewConfigEvalEnv(base, loss, bytes, maxTime, EnvConfig{Variant: variant, Action: action}, frameSkip)
}

// NewConfigEvalEnv is NewVariantEvalEnv for a formulation given as an
// EnvConfig: its Variant, Action, CapacityWindow, MinRTTWindow, BDPSpan,
// RTTFeature and WindowCap are used, its scenario, loss and transfer fields are replaced
// by the evaluation's.
func NewConfigEvalEnv(base *scenario.Scenario, loss float64, bytes units.Bytes, maxTime time.Duration, c EnvConfig, frameSkip int) (*EvalEnv, error) {
	if frameSkip < 0 {
		return nil, fmt.Errorf("marlin: frame skip %d is negative (0 or 1: none)", frameSkip)
	}
	if c.Action == "" {
		c.Action = ActionLinear
		if c.Variant == VariantCompact {
			c.Action = ActionBDP
		}
	}
	core, err := NewEnv(EnvConfig{Base: WithLoss(base, loss), Loss: -1, Bytes: bytes, Variant: c.Variant, Action: c.Action,
		CapacityWindow: c.CapacityWindow, MinRTTWindow: c.MinRTTWindow, BDPSpan: c.BDPSpan, RTTFeature: c.RTTFeature, WindowCap: c.WindowCap})
	if err != nil {
		return nil, err
	}
	st, err := env.NewStack(core, historyFor(c.Variant), true)
	if err != nil {
		return nil, err
	}
	// The limit inside the repeat: Evaluate counts 100-ms steps, and a
	// repeat cut short by the limit ends the episode there.
	var e env.Env = env.NewTimeLimit(st, int(maxTime/StepInterval))
	if frameSkip > 1 {
		if e, err = env.NewActionRepeat(e, frameSkip); err != nil {
			return nil, err
		}
	}
	return &EvalEnv{Env: e, core: core, maxTime: maxTime}, nil
}

// Outcome measures the current episode's transfer (transfer time,
// retransmissions, RTI), as Evaluate reports it.
func (e *EvalEnv) Outcome() Outcome {
	var o Outcome
	fillFromResult(&o, experiment.Summarize(e.core.Network(), 0), e.maxTime)
	return o
}
