package env

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl/space"
)

// Episode summarises one finished episode.
type Episode struct {
	// Env is the index of the environment that ran it.
	Env int
	// Return is the undiscounted sum of the environment's rewards (before
	// any vector-level reward normalisation).
	Return float64
	// Length is the number of steps.
	Length int
	// Truncated reports whether it ended by truncation rather than
	// termination.
	Truncated bool
}

// Batch is the result of stepping all environments of a VecEnv. Slices
// belong to the VecEnv and are overwritten by its next Step or Reset.
type Batch struct {
	// Obs holds K×obsDim observations, row i for environment i. After an
	// episode ends the row already holds the next episode's first
	// observation (automatic reset, as SB3's VecEnv does).
	Obs []float32
	// Reward, Terminated and Truncated hold one entry per environment.
	Reward                []float64
	Terminated, Truncated []bool
	// FinalObs holds, in rows where Terminated or Truncated is set, the
	// last observation of the episode that just ended (SB3's
	// info["terminal_observation"]); learners bootstrap from it on
	// truncation. Other rows are stale.
	FinalObs []float32
}

// Done reports whether environment i's episode ended in this step.
func (b *Batch) Done(i int) bool { return b.Terminated[i] || b.Truncated[i] }

// VecEnv steps K environments in lockstep.
type VecEnv interface {
	NumEnvs() int
	ObservationSpace() space.Space
	ActionSpace() space.Space
	// Reset resets every environment and returns the batch holding the
	// first observations (rewards zero, flags false).
	Reset(seed uint64) *Batch
	// Step applies K×actDim actions (row i to environment i), resets
	// environments whose episode ended, and returns the batch.
	Step(actions []float32) *Batch
	// Episodes appends the episodes finished since the last call to dst,
	// in the order they finished (by step, then environment index).
	Episodes(dst []Episode) []Episode
}

// Vec is the basic VecEnv over a slice of environments. With more than one
// worker, each Step runs the environments in parallel goroutines; every
// environment owns its slots in the batch and its own seed stream, and all
// cross-environment bookkeeping happens after the join in index order, so
// results do not depend on scheduling.
type Vec struct {
	envs      []Env
	obs, act  space.Space
	obsDim    int
	actDim    int
	workers   int
	batch     Batch
	seeds     []*rand.PCG // per-environment episode-seed streams
	epReturn  []float64
	epLen     []int
	finished  []Episode
	stepCount int64
}

// NewVec returns a runner over envs, which must share observation and
// action spaces. workers is the number of goroutines used by Step (1 steps
// in the calling goroutine; 0 means one per environment).
func NewVec(envs []Env, workers int) (*Vec, error) {
	if len(envs) == 0 {
		return nil, errors.New("env: NewVec needs at least one environment")
	}
	obs, act := envs[0].ObservationSpace(), envs[0].ActionSpace()
	if err := obs.Validate(); err != nil {
		return nil, fmt.Errorf("env: observation space: %w", err)
	}
	if err := act.Validate(); err != nil {
		return nil, fmt.Errorf("env: action space: %w", err)
	}
	for i, e := range envs[1:] {
		if !e.ObservationSpace().Equal(obs) || !e.ActionSpace().Equal(act) {
			return nil, fmt.Errorf("env: environment %d has spaces %v/%v, environment 0 has %v/%v", i+1, e.ObservationSpace(), e.ActionSpace(), obs, act)
		}
	}
	if workers <= 0 || workers > len(envs) {
		workers = len(envs)
	}
	k := len(envs)
	v := &Vec{envs: envs, obs: obs, act: act, obsDim: obs.Dim(), actDim: act.Dim(), workers: workers,
		seeds: make([]*rand.PCG, k), epReturn: make([]float64, k), epLen: make([]int, k)}
	v.batch = Batch{
		Obs: make([]float32, k*v.obsDim), FinalObs: make([]float32, k*v.obsDim),
		Reward: make([]float64, k), Terminated: make([]bool, k), Truncated: make([]bool, k),
	}
	return v, nil
}

// NumEnvs returns K.
func (v *Vec) NumEnvs() int { return len(v.envs) }

// ObservationSpace returns the shared observation space.
func (v *Vec) ObservationSpace() space.Space { return v.obs }

// ActionSpace returns the shared action space.
func (v *Vec) ActionSpace() space.Space { return v.act }

// Env returns environment i.
func (v *Vec) Env(i int) Env { return v.envs[i] }

// Reset seeds environment i's episode-seed stream with PCG(seed, i) and
// starts its first episode with the stream's first value. Each later
// automatic reset draws the stream's next value, so episode i of
// environment j is the same whatever the scheduling.
func (v *Vec) Reset(seed uint64) *Batch {
	for i, e := range v.envs {
		v.seeds[i] = rand.NewPCG(seed, uint64(i))
		o, _ := e.Reset(v.seeds[i].Uint64())
		v.copyObs(v.batch.Obs, i, o)
		v.epReturn[i], v.epLen[i] = 0, 0
	}
	clear(v.batch.Reward)
	clear(v.batch.Terminated)
	clear(v.batch.Truncated)
	v.finished = v.finished[:0]
	return &v.batch
}

func (v *Vec) copyObs(dst []float32, i int, o []float32) {
	if len(o) != v.obsDim {
		panic(fmt.Sprintf("env: environment %d returned %d observation values, its space has %d", i, len(o), v.obsDim))
	}
	copy(dst[i*v.obsDim:(i+1)*v.obsDim], o)
}

// stepOne steps environment i and resets it if its episode ended. It
// touches only environment i's state and batch slots.
func (v *Vec) stepOne(i int, actions []float32) {
	b := &v.batch
	o, r, term, trunc, _ := v.envs[i].Step(actions[i*v.actDim : (i+1)*v.actDim])
	b.Reward[i], b.Terminated[i], b.Truncated[i] = r, term, trunc
	if term || trunc {
		v.copyObs(b.FinalObs, i, o)
		o, _ = v.envs[i].Reset(v.seeds[i].Uint64())
	}
	v.copyObs(b.Obs, i, o)
}

// Step implements VecEnv.
func (v *Vec) Step(actions []float32) *Batch {
	k := len(v.envs)
	if len(actions) != k*v.actDim {
		panic(fmt.Sprintf("env: Vec.Step got %d action values, want %d envs × %d", len(actions), k, v.actDim))
	}
	if v.seeds[0] == nil {
		panic("env: Vec.Step before Reset")
	}
	// Contiguous chunks, one goroutine each.
	par.Chunks(k, v.workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v.stepOne(i, actions)
		}
	})
	// Bookkeeping in index order, after the join.
	b := &v.batch
	for i := range v.envs {
		v.epReturn[i] += b.Reward[i]
		v.epLen[i]++
		if b.Done(i) {
			v.finished = append(v.finished, Episode{Env: i, Return: v.epReturn[i], Length: v.epLen[i], Truncated: b.Truncated[i] && !b.Terminated[i]})
			v.epReturn[i], v.epLen[i] = 0, 0
		}
	}
	v.stepCount++
	return b
}

// Episodes implements VecEnv.
func (v *Vec) Episodes(dst []Episode) []Episode {
	dst = append(dst, v.finished...)
	v.finished = v.finished[:0]
	return dst
}

// AppendState appends the runner's state (seed streams, episode
// accumulators, current observations and each environment's state) to b.
// It fails if an environment (after unwrapping) is not Stateful.
func (v *Vec) AppendState(b []byte) ([]byte, error) {
	b = appendU64(b, uint64(len(v.envs)))
	for i, e := range v.envs {
		s, ok := e.(Stateful)
		if !ok {
			return b, fmt.Errorf("env: environment %d (%T) cannot save its state", i, e)
		}
		ps, err := v.seeds[i].MarshalBinary()
		if err != nil {
			return b, err
		}
		b = appendBytes(b, ps)
		b = appendF64(b, v.epReturn[i])
		b = appendU64(b, uint64(v.epLen[i]))
		es, err := s.AppendState(nil)
		if err != nil {
			return b, fmt.Errorf("env: environment %d: %w", i, err)
		}
		b = appendBytes(b, es)
	}
	b = appendF32s(b, v.batch.Obs)
	return b, nil
}

// RestoreState restores a state written by AppendState into a runner built
// with the same number and kind of environments.
func (v *Vec) RestoreState(b []byte) error {
	r := reader{b: b}
	if n := r.u64(); n != uint64(len(v.envs)) {
		return fmt.Errorf("env: saved state has %d environments, runner has %d", n, len(v.envs))
	}
	for i, e := range v.envs {
		s, ok := e.(Stateful)
		if !ok {
			return fmt.Errorf("env: environment %d (%T) cannot restore its state", i, e)
		}
		v.seeds[i] = rand.NewPCG(0, 0)
		if err := v.seeds[i].UnmarshalBinary(r.bytes()); err != nil && r.err == nil {
			return fmt.Errorf("env: environment %d seed stream: %w", i, err)
		}
		v.epReturn[i] = r.f64()
		v.epLen[i] = int(r.u64())
		es := r.bytes()
		if r.err != nil {
			return r.err
		}
		if err := s.RestoreState(es); err != nil {
			return fmt.Errorf("env: environment %d: %w", i, err)
		}
	}
	r.f32s(v.batch.Obs)
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("env: %d trailing bytes in saved state", len(r.b))
	}
	v.finished = v.finished[:0]
	return r.err
}
