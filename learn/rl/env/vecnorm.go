package env

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl/norm"
	"github.com/cclab/cclab/learn/rl/space"
)

// VecNormalize normalises observations with running statistics and scales
// rewards by the running standard deviation of the discounted return, as
// SB3's VecNormalize does (defaults: clip_obs = clip_reward = 10,
// epsilon = 1e-8, gamma = 0.99). Statistics are updated in Step while
// Training is true, in environment-index order. The observation
// normaliser is saved with trained policies so inference sees the same
// inputs.
type VecNormalize struct {
	Inner VecEnv
	// NormObs and NormReward select what is normalised.
	NormObs, NormReward bool
	// Training enables statistics updates.
	Training bool
	// Gamma discounts the return whose spread scales rewards.
	Gamma float64
	// ClipReward bounds scaled rewards to ±ClipReward.
	ClipReward float64

	Obs     *norm.Obs
	Ret     *norm.RunningMeanStd
	returns []float64
	batch   Batch
}

// NewVecNormalize wraps inner with SB3's defaults. Observation
// normalisation needs a Box observation space.
func NewVecNormalize(inner VecEnv, normObs, normReward bool, gamma float64) (*VecNormalize, error) {
	if normObs && inner.ObservationSpace().Kind != space.KindBox {
		return nil, fmt.Errorf("env: VecNormalize needs a Box observation space, got %v", inner.ObservationSpace())
	}
	k, d := inner.NumEnvs(), inner.ObservationSpace().Dim()
	return &VecNormalize{Inner: inner, NormObs: normObs, NormReward: normReward, Training: true, Gamma: gamma, ClipReward: 10,
		Obs: norm.NewObs(d), Ret: norm.NewRunningMeanStd(1), returns: make([]float64, k),
		batch: Batch{Obs: make([]float32, k*d), FinalObs: make([]float32, k*d), Reward: make([]float64, k)}}, nil
}

// NumEnvs implements VecEnv.
func (w *VecNormalize) NumEnvs() int { return w.Inner.NumEnvs() }

// ObservationSpace implements VecEnv.
func (w *VecNormalize) ObservationSpace() space.Space { return w.Inner.ObservationSpace() }

// ActionSpace implements VecEnv.
func (w *VecNormalize) ActionSpace() space.Space { return w.Inner.ActionSpace() }

// ObsNormalizer returns the observation normaliser to save with a policy,
// or nil when observations are not normalised.
func (w *VecNormalize) ObsNormalizer() *norm.Obs {
	if !w.NormObs {
		return nil
	}
	return w.Obs
}

// Episodes implements VecEnv; returns are the raw environment rewards.
func (w *VecNormalize) Episodes(dst []Episode) []Episode { return w.Inner.Episodes(dst) }

// Reset implements VecEnv.
func (w *VecNormalize) Reset(seed uint64) *Batch {
	b := w.Inner.Reset(seed)
	clear(w.returns)
	if w.Training && w.NormObs {
		w.Obs.RMS.Update(b.Obs)
	}
	w.fill(b)
	return &w.batch
}

// Step implements VecEnv. Following SB3, observation statistics are
// updated with the new observations (after automatic reset), the
// discounted return is accumulated per environment and reset to zero at
// episode ends, and rewards are divided by sqrt(var(return) + 1e-8).
func (w *VecNormalize) Step(actions []float32) *Batch {
	b := w.Inner.Step(actions)
	if w.Training && w.NormObs {
		w.Obs.RMS.Update(b.Obs)
	}
	for i := range w.returns {
		w.returns[i] = w.returns[i]*w.Gamma + b.Reward[i]
	}
	if w.Training && w.NormReward {
		w.Ret.UpdateScalars(w.returns)
	}
	w.fill(b)
	for i := range w.returns {
		if b.Done(i) {
			w.returns[i] = 0
		}
	}
	return &w.batch
}

func (w *VecNormalize) fill(b *Batch) {
	w.batch.Terminated, w.batch.Truncated = b.Terminated, b.Truncated
	if w.NormObs {
		w.Obs.Normalize(b.Obs, w.batch.Obs)
		w.Obs.Normalize(b.FinalObs, w.batch.FinalObs)
	} else {
		copy(w.batch.Obs, b.Obs)
		copy(w.batch.FinalObs, b.FinalObs)
	}
	s := 1.0
	if w.NormReward {
		s = 1 / math.Sqrt(w.Ret.Var[0]+w.Obs.Eps)
	}
	for i, r := range b.Reward {
		if w.NormReward {
			r = min(max(r*s, -w.ClipReward), w.ClipReward)
		}
		w.batch.Reward[i] = r
	}
}

// AppendStats appends the running statistics alone (observation
// normaliser, return spread): what a policy learned against, which a
// checkpoint must keep even when the environments cannot be saved
// (simulated networks), or a resumed run would feed the network
// observations normalised afresh.
func (w *VecNormalize) AppendStats(b []byte) []byte {
	b, _ = w.Obs.AppendBinary(b)
	return appendF64s(b, []float64{w.Ret.Mean[0], w.Ret.Var[0], w.Ret.Count})
}

// RestoreStats restores statistics written by AppendStats.
func (w *VecNormalize) RestoreStats(b []byte) error {
	r, err := w.restoreStats(b)
	if err == nil && len(r.b) != 0 {
		err = fmt.Errorf("env: %d trailing bytes after the normaliser's statistics", len(r.b))
	}
	return err
}

func (w *VecNormalize) restoreStats(b []byte) (reader, error) {
	o, n, err := norm.DecodeObs(b)
	if err != nil {
		return reader{}, err
	}
	if o.Dim() != w.Obs.Dim() {
		return reader{}, fmt.Errorf("env: saved normaliser has dimension %d, want %d", o.Dim(), w.Obs.Dim())
	}
	r := reader{b: b[n:]}
	ret := make([]float64, 3)
	r.f64s(ret)
	if r.err != nil {
		return r, r.err
	}
	w.Obs = o
	w.Ret.Mean[0], w.Ret.Var[0], w.Ret.Count = ret[0], ret[1], ret[2]
	return r, nil
}

// AppendState appends the statistics and the inner runner's state.
func (w *VecNormalize) AppendState(b []byte) ([]byte, error) {
	b = w.AppendStats(b)
	b = appendF64s(b, w.returns)
	b = appendF32s(b, w.batch.Obs)
	s, ok := w.Inner.(Stateful)
	if !ok {
		return b, fmt.Errorf("env: %T cannot save its state", w.Inner)
	}
	return s.AppendState(b)
}

// RestoreState restores a state written by AppendState.
func (w *VecNormalize) RestoreState(b []byte) error {
	r, err := w.restoreStats(b)
	if err != nil {
		return err
	}
	r.f64s(w.returns)
	r.f32s(w.batch.Obs)
	if r.err != nil {
		return r.err
	}
	s, ok := w.Inner.(Stateful)
	if !ok {
		return fmt.Errorf("env: %T cannot restore its state", w.Inner)
	}
	return s.RestoreState(r.b)
}
