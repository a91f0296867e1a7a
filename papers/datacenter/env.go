package datacenter

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// Env is the single-agent environment (env.Env): one agent sets the BBR
// windows of every controlled flow. An action decodes to Params (see
// ActionKind); the observation is the agent's frames (features.go); the
// reward is the paper's (reward.go). Episodes are Config.Steps steps and
// end by truncation: the data centre does not terminate.
type Env struct {
	sim  *Sim
	kind ActionKind
	info env.Info
}

var _ env.Env = (*Env)(nil)

// NewEnv returns a single-agent environment; cfg.Agents must be 0 or 1.
func NewEnv(cfg Config) (*Env, error) {
	if cfg.Agents > 1 {
		return nil, fmt.Errorf("datacenter: NewEnv is single-agent, got %d agents (use NewMultiVec)", cfg.Agents)
	}
	s, err := NewSim(cfg)
	if err != nil {
		return nil, err
	}
	return &Env{sim: s, kind: s.cfg.Action, info: env.Info{}}, nil
}

// Sim returns the underlying simulation.
func (e *Env) Sim() *Sim { return e.sim }

// ObservationSpace implements env.Env: unbounded features.
func (e *Env) ObservationSpace() space.Space { return observationSpace(e.sim.ObsDim()) }

// observationSpace is the agents' observation space of dim features.
func observationSpace(dim int) space.Space {
	return space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), dim)
}

// ActionSpace implements env.Env.
func (e *Env) ActionSpace() space.Space { return e.kind.Space() }

// Reset implements env.Env.
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	e.sim.Reset(seed)
	clear(e.info)
	return e.sim.Observation(0), e.info
}

// Step implements env.Env: set the parameters, simulate one interval.
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	p := e.kind.Decode(action)
	if err := e.sim.Apply(0, p); err != nil {
		panic(err) // Decode stays within BBR's ranges
	}
	done := e.sim.Advance()
	e.info["util"] = e.sim.Utilization()
	e.info["delay_term"] = e.sim.sTeam
	e.info["min_rtt_window"] = p.MinRTTWindow
	e.info["bw_window_rounds"] = float64(p.BwWindowRounds)
	return e.sim.Observation(0), e.sim.TeamReward(), false, done, e.info
}
