package env

import (
	"fmt"

	"github.com/cclab/cclab/learn/rl/space"
)

func innerState(e Env, b []byte) ([]byte, error) {
	s, ok := e.(Stateful)
	if !ok {
		return b, fmt.Errorf("env: %T cannot save its state", e)
	}
	return s.AppendState(b)
}

func restoreInner(e Env, b []byte) error {
	s, ok := e.(Stateful)
	if !ok {
		return fmt.Errorf("env: %T cannot restore its state", e)
	}
	return s.RestoreState(b)
}

// TimeLimit truncates episodes after MaxSteps steps, like gymnasium's
// TimeLimit wrapper: the step that reaches the limit reports truncated =
// true unless the inner environment terminated on it.
type TimeLimit struct {
	Env      Env
	MaxSteps int
	steps    int
}

// NewTimeLimit wraps e. It panics if maxSteps < 1.
func NewTimeLimit(e Env, maxSteps int) *TimeLimit {
	if maxSteps < 1 {
		panic(fmt.Sprintf("env: TimeLimit needs maxSteps >= 1, got %d", maxSteps))
	}
	return &TimeLimit{Env: e, MaxSteps: maxSteps}
}

// ObservationSpace implements Env.
func (w *TimeLimit) ObservationSpace() space.Space { return w.Env.ObservationSpace() }

// ActionSpace implements Env.
func (w *TimeLimit) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *TimeLimit) Unwrap() Env { return w.Env }

// Reset implements Env.
func (w *TimeLimit) Reset(seed uint64) ([]float32, Info) {
	w.steps = 0
	return w.Env.Reset(seed)
}

// Step implements Env.
func (w *TimeLimit) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	o, r, term, trunc, info := w.Env.Step(a)
	w.steps++
	if w.steps >= w.MaxSteps && !term {
		trunc = true
	}
	return o, r, term, trunc, info
}

// AppendState implements Stateful when the inner environment does.
func (w *TimeLimit) AppendState(b []byte) ([]byte, error) {
	b = appendU64(b, uint64(w.steps))
	return innerState(w.Env, b)
}

// RestoreState implements Stateful.
func (w *TimeLimit) RestoreState(b []byte) error {
	r := reader{b: b}
	w.steps = int(r.u64())
	if r.err != nil {
		return r.err
	}
	return restoreInner(w.Env, r.b)
}

// Stack concatenates the last K observations (oldest first) into one, as
// gymnasium's FrameStackObservation does (MARLIN stacks 10 steps of
// statistics). At reset the history is filled with copies of the first
// observation (Gymnasium's padding_type="reset"), or zeros if ZeroPad is
// set (SB3's VecFrameStack).
type Stack struct {
	Env     Env
	K       int
	ZeroPad bool
	dim     int
	buf     []float32 // K×dim, oldest first
	obs     space.Space
}

// NewStack wraps e to stack k >= 1 observations. The observation space
// becomes a Box of shape [k, inner shape...] with the bounds repeated; a
// Discrete observation space is not supported.
func NewStack(e Env, k int, zeroPad bool) (*Stack, error) {
	in := e.ObservationSpace()
	if in.Kind != space.KindBox {
		return nil, fmt.Errorf("env: Stack needs a Box observation space, got %v", in)
	}
	if k < 1 {
		return nil, fmt.Errorf("env: Stack needs k >= 1, got %d", k)
	}
	d := in.Dim()
	lo := make([]float32, 0, k*d)
	hi := make([]float32, 0, k*d)
	for range k {
		lo = append(lo, in.Low...)
		hi = append(hi, in.High...)
	}
	shape := append([]int{k}, in.Shape...)
	return &Stack{Env: e, K: k, ZeroPad: zeroPad, dim: d, buf: make([]float32, k*d), obs: space.NewBox(lo, hi, shape...)}, nil
}

// ObservationSpace implements Env.
func (w *Stack) ObservationSpace() space.Space { return w.obs }

// ActionSpace implements Env.
func (w *Stack) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *Stack) Unwrap() Env { return w.Env }

// Reset implements Env.
func (w *Stack) Reset(seed uint64) ([]float32, Info) {
	o, info := w.Env.Reset(seed)
	for k := 0; k < w.K; k++ {
		dst := w.buf[k*w.dim : (k+1)*w.dim]
		if w.ZeroPad && k < w.K-1 {
			clear(dst)
		} else {
			copy(dst, o)
		}
	}
	return w.buf, info
}

// Step implements Env.
func (w *Stack) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	o, r, term, trunc, info := w.Env.Step(a)
	copy(w.buf, w.buf[w.dim:])
	copy(w.buf[(w.K-1)*w.dim:], o)
	return w.buf, r, term, trunc, info
}

// AppendState implements Stateful when the inner environment does.
func (w *Stack) AppendState(b []byte) ([]byte, error) {
	b = appendF32s(b, w.buf)
	return innerState(w.Env, b)
}

// RestoreState implements Stateful.
func (w *Stack) RestoreState(b []byte) error {
	r := reader{b: b}
	r.f32s(w.buf)
	if r.err != nil {
		return r.err
	}
	return restoreInner(w.Env, r.b)
}

// ScaleReward multiplies every reward by Scale (a fixed reward scale, as
// used to bring returns to order one; for a running scale see
// VecNormalize).
type ScaleReward struct {
	Env   Env
	Scale float64
}

// ObservationSpace implements Env.
func (w *ScaleReward) ObservationSpace() space.Space { return w.Env.ObservationSpace() }

// ActionSpace implements Env.
func (w *ScaleReward) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *ScaleReward) Unwrap() Env { return w.Env }

// Reset implements Env.
func (w *ScaleReward) Reset(seed uint64) ([]float32, Info) { return w.Env.Reset(seed) }

// Step implements Env.
func (w *ScaleReward) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	o, r, term, trunc, info := w.Env.Step(a)
	return o, r * w.Scale, term, trunc, info
}

// AppendState implements Stateful when the inner environment does.
func (w *ScaleReward) AppendState(b []byte) ([]byte, error) { return innerState(w.Env, b) }

// RestoreState implements Stateful.
func (w *ScaleReward) RestoreState(b []byte) error { return restoreInner(w.Env, b) }

// EpisodeStats records the return and length of every finished episode of
// one environment (gymnasium's RecordEpisodeStatistics). Vec keeps the same
// statistics for vectorised runs; this wrapper serves single-environment
// loops such as evaluation.
type EpisodeStats struct {
	Env Env
	// Finished lists completed episodes in order.
	Finished []Episode
	ret      float64
	n        int
}

// ObservationSpace implements Env.
func (w *EpisodeStats) ObservationSpace() space.Space { return w.Env.ObservationSpace() }

// ActionSpace implements Env.
func (w *EpisodeStats) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *EpisodeStats) Unwrap() Env { return w.Env }

// Reset implements Env. An episode abandoned before it ended is not
// recorded.
func (w *EpisodeStats) Reset(seed uint64) ([]float32, Info) {
	w.ret, w.n = 0, 0
	return w.Env.Reset(seed)
}

// Step implements Env.
func (w *EpisodeStats) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	o, r, term, trunc, info := w.Env.Step(a)
	w.ret += r
	w.n++
	if term || trunc {
		w.Finished = append(w.Finished, Episode{Return: w.ret, Length: w.n, Truncated: trunc && !term})
		w.ret, w.n = 0, 0
	}
	return o, r, term, trunc, info
}

// ActionRepeat applies each action for K consecutive steps of the wrapped
// environment (frame skip, as Atari agents' MaxAndSkip without the max):
// the reward is the undiscounted sum of the K steps' rewards, the
// observation the last step's, and an episode that ends within the K
// steps ends the repeat there. The learner's discount then applies once per
// K inner steps.
type ActionRepeat struct {
	Env Env
	K   int
}

// NewActionRepeat wraps e; k must be at least 1.
func NewActionRepeat(e Env, k int) (*ActionRepeat, error) {
	if k < 1 {
		return nil, fmt.Errorf("env: action repeat %d must be at least 1", k)
	}
	return &ActionRepeat{Env: e, K: k}, nil
}

// ObservationSpace implements Env.
func (w *ActionRepeat) ObservationSpace() space.Space { return w.Env.ObservationSpace() }

// ActionSpace implements Env.
func (w *ActionRepeat) ActionSpace() space.Space { return w.Env.ActionSpace() }

// Unwrap returns the wrapped environment.
func (w *ActionRepeat) Unwrap() Env { return w.Env }

// Reset implements Env.
func (w *ActionRepeat) Reset(seed uint64) ([]float32, Info) { return w.Env.Reset(seed) }

// Step implements Env.
func (w *ActionRepeat) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	var (
		obs         []float32
		sum, r      float64
		term, trunc bool
		info        Info
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
