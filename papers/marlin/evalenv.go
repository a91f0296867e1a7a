package marlin

import (
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/env"
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
	return NewVariantEvalEnv(base, loss, bytes, maxTime, VariantPaper, ActionLinear)
}

// NewVariantEvalEnv is NewEvalEnv for a policy of another formulation
// (PolicyVariant) or action parametrisation (PolicyAction), set up as
// Evaluate sets up that policy's transfers; an empty action is the
// variant's default (ActionBDP for VariantCompact, else ActionLinear).
func NewVariantEvalEnv(base *scenario.Scenario, loss float64, bytes units.Bytes, maxTime time.Duration, variant, action string) (*EvalEnv, error) {
	if action == "" {
		action = ActionLinear
		if variant == VariantCompact {
			action = ActionBDP
		}
	}
	core, err := NewEnv(EnvConfig{Base: WithLoss(base, loss), Loss: -1, Bytes: bytes, Variant: variant, Action: action})
	if err != nil {
		return nil, err
	}
	st, err := env.NewStack(core, historyFor(variant), true)
	if err != nil {
		return nil, err
	}
	return &EvalEnv{Env: env.NewTimeLimit(st, int(maxTime/StepInterval)), core: core, maxTime: maxTime}, nil
}

// Outcome measures the current episode's transfer (transfer time,
// retransmissions, RTI), as Evaluate reports it.
func (e *EvalEnv) Outcome() Outcome {
	var o Outcome
	fillFromResult(&o, experiment.Summarize(e.core.Network(), 0), e.maxTime)
	return o
}
