package marlin

import (
	"fmt"

	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// ActionRepeat applies each action for K consecutive steps of the wrapped
// environment (frame skip, as Atari agents' MaxAndSkip without the max):
// the reward is the undiscounted sum of the K steps' rewards, the
// observation the last step's, and an episode that ends within the K
// steps ends the repeat there. The learner's discount then applies per K
// steps (γ per 100 K ms).
type ActionRepeat struct {
	Env env.Env
	K   int
}

// NewActionRepeat wraps e; k must be at least 1.
func NewActionRepeat(e env.Env, k int) (*ActionRepeat, error) {
	if k < 1 {
		return nil, fmt.Errorf("marlin: action repeat %d must be at least 1", k)
	}
	return &ActionRepeat{Env: e, K: k}, nil
}

// ObservationSpace implements env.Env.
func (w *ActionRepeat) ObservationSpace() space.Space { return w.Env.ObservationSpace() }

// ActionSpace implements env.Env.
func (w *ActionRepeat) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *ActionRepeat) Unwrap() env.Env { return w.Env }

// Reset implements env.Env.
func (w *ActionRepeat) Reset(seed uint64) ([]float32, env.Info) { return w.Env.Reset(seed) }

// Step implements env.Env.
func (w *ActionRepeat) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	var (
		obs         []float32
		sum, r      float64
		term, trunc bool
		info        env.Info
	)
	for range w.K {
		obs, r, term, trunc, info = w.Env.Step(a)
		sum += r
		if term || trunc {
			break
		}
	}
	return obs, sum, term, trunc, info
}
