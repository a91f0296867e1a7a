// Package env defines the environment interface shared by every learning
// task in cclab, with Gymnasium's semantics (gymnasium.Env reset/step), a
// vectorised runner that steps K environments in parallel goroutines with
// results independent of scheduling, and wrappers: time limits, history
// stacking, reward scaling, episode statistics, and running observation and
// return normalisation.
//
// # Termination versus truncation
//
// Step reports two flags, as Gymnasium does since v0.26: terminated means
// the MDP reached a terminal state (no future reward; do not bootstrap),
// truncated means the episode was cut short for an external reason such as
// a time limit (the state is not terminal; learners bootstrap from the
// value of the final observation). Everything in cclab keeps the two apart:
// the vectorised runner reports both and keeps the final observation of a
// truncated episode, replay buffers store only terminated as "done", and
// PPO/A2C add γ·V(final obs) to the reward of truncated steps.
//
// # Ownership
//
// To keep the hot path allocation-free, observation slices returned by
// Reset and Step belong to the environment and are valid only until its
// next call; copy them to keep them. Step must not keep the action slice.
// Info maps are optional (nil is fine) and belong to the environment too.
package env

import (
	"github.com/cclab/cclab/learn/rl/space"
)

// Info carries optional diagnostics from Reset and Step, keyed by name.
type Info = map[string]float64

// Env is a reinforcement-learning environment with Gymnasium's API. An Env
// is used from one goroutine at a time.
type Env interface {
	// ObservationSpace describes observations; they are flat float32
	// vectors of ObservationSpace().Dim() values.
	ObservationSpace() space.Space
	// ActionSpace describes actions: flat float32 vectors of
	// ActionSpace().Dim() values (a Discrete action is one value holding
	// the index).
	ActionSpace() space.Space
	// Reset starts a new episode with its randomness derived from seed
	// alone (gymnasium's reset(seed=seed)), and returns the first
	// observation.
	Reset(seed uint64) (obs []float32, info Info)
	// Step applies action and returns the next observation, the reward,
	// whether the episode terminated (terminal MDP state) or was truncated
	// (e.g. time limit), and optional diagnostics. After either flag is
	// set the caller must Reset before stepping again.
	Step(action []float32) (obs []float32, reward float64, terminated, truncated bool, info Info)
}

// Stateful is implemented by environments whose complete state (including
// their random generator) can be saved and restored, which lets a training
// checkpoint resume mid-episode and reproduce an uninterrupted run exactly.
// Environments that do not implement it are reset when a run resumes.
type Stateful interface {
	// AppendState appends an encoding of the state to b.
	AppendState(b []byte) ([]byte, error)
	// RestoreState restores a state written by AppendState.
	RestoreState(b []byte) error
}

// StatsKeeper is a wrapper with learned statistics (VecNormalize's) that a
// checkpoint saves on their own when the environments' state cannot be
// saved: the episodes restart on resume, the statistics must not.
type StatsKeeper interface {
	// AppendStats appends an encoding of the statistics to b.
	AppendStats(b []byte) []byte
	// RestoreStats restores statistics written by AppendStats.
	RestoreStats(b []byte) error
}

// Wrapper is implemented by wrappers so that callers can reach the
// environment underneath (e.g. to find a Stateful core).
type Wrapper interface {
	Unwrap() Env
}
