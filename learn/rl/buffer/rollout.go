package buffer

import (
	"fmt"
	"math/rand/v2"
)

// Rollout stores T steps from K environments for on-policy learning. Row
// t·K + k holds step t of environment k.
type Rollout struct {
	T, K, ObsDim, ActDim int
	Obs, Act             []float32 // T·K×ObsDim, T·K×ActDim
	LogP, Val, Rew       []float32 // T·K
	// EpStart marks rows whose observation is the first of an episode
	// (SB3's episode_starts).
	EpStart []bool
	// Adv and Ret are filled by ComputeGAE.
	Adv, Ret []float32
	t        int
}

// NewRollout returns a buffer for t steps of k environments.
func NewRollout(t, k, obsDim, actDim int) *Rollout {
	n := t * k
	return &Rollout{T: t, K: k, ObsDim: obsDim, ActDim: actDim,
		Obs: make([]float32, n*obsDim), Act: make([]float32, n*actDim),
		LogP: make([]float32, n), Val: make([]float32, n), Rew: make([]float32, n),
		EpStart: make([]bool, n), Adv: make([]float32, n), Ret: make([]float32, n)}
}

// Reset empties the buffer.
func (r *Rollout) Reset() { r.t = 0 }

// Full reports whether T steps are stored.
func (r *Rollout) Full() bool { return r.t == r.T }

// Step returns the index of the next row block and advances; the caller
// fills rows [i·K, (i+1)·K).
func (r *Rollout) Step() int {
	if r.t >= r.T {
		panic("buffer: Rollout is full")
	}
	r.t++
	return r.t - 1
}

// ComputeGAE fills Adv and Ret by generalised advantage estimation
// (Schulman et al. 2016, eq. 11-16), as SB3's RolloutBuffer.
// compute_returns_and_advantage:
//
//	δ_t = r_t + γ·V(s_{t+1})·(1 − start_{t+1}) − V(s_t)
//	A_t = δ_t + γλ·(1 − start_{t+1})·A_{t+1},   R_t = A_t + V(s_t)
//
// lastVal holds V of the observation after the last step and lastDone
// whether the last step ended an episode. Truncation must already be
// folded into the rewards (r += γ·V(final obs)) by the collector.
func (r *Rollout) ComputeGAE(lastVal []float32, lastDone []bool, gamma, lambda float64) {
	if len(lastVal) != r.K || len(lastDone) != r.K {
		panic(fmt.Sprintf("buffer: ComputeGAE got %d values, %d flags for %d environments", len(lastVal), len(lastDone), r.K))
	}
	for k := 0; k < r.K; k++ {
		var gae float64
		for t := r.t - 1; t >= 0; t-- {
			i := t*r.K + k
			var nextNonTerminal, nextVal float64
			if t == r.t-1 {
				if !lastDone[k] {
					nextNonTerminal = 1
				}
				nextVal = float64(lastVal[k])
			} else {
				if !r.EpStart[i+r.K] {
					nextNonTerminal = 1
				}
				nextVal = float64(r.Val[i+r.K])
			}
			delta := float64(r.Rew[i]) + gamma*nextVal*nextNonTerminal - float64(r.Val[i])
			gae = delta + gamma*lambda*nextNonTerminal*gae
			r.Adv[i] = float32(gae)
			r.Ret[i] = float32(gae + float64(r.Val[i]))
		}
	}
}

// Permutation fills idx with a random permutation of the stored rows
// (minibatch shuffling, SB3's np.random.permutation).
func (r *Rollout) Permutation(rng *rand.Rand, idx []int) []int {
	n := r.t * r.K
	idx = idx[:0]
	for i := 0; i < n; i++ {
		idx = append(idx, i)
	}
	rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	return idx
}

// Len returns the number of stored rows (steps × environments).
func (r *Rollout) Len() int { return r.t * r.K }
