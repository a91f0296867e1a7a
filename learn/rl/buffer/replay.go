// Package buffer holds experience for the learners: a uniform replay buffer
// for off-policy methods (SAC, DDPG, DQN) and a rollout buffer with
// generalised advantage estimation for on-policy methods (PPO, A2C).
// Storage is flat float32 arrays so that sampled batches feed the networks
// without conversion.
package buffer

import (
	"fmt"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/rl/checkpoint"
)

// Replay is a ring buffer of transitions (s, a, r, s', terminated).
// Following SB3's handle_timeout_termination, only termination is stored as
// "done": a transition that ended by truncation keeps done = false so the
// learner bootstraps from s' (the true final observation, not the next
// episode's first).
type Replay struct {
	capacity, obsDim, actDim int
	obs, next, act, rew      []float32
	done                     []float32 // 1 for terminated, else 0
	// guide holds a reference action per transition (EnableGuide), e.g.
	// a demonstrator's action at obs for a behaviour-cloning term.
	guide     []float32
	guided    bool
	pos, size int
}

// NewReplay returns an empty buffer of the given capacity (transitions).
// Storage grows as transitions arrive, so a large capacity costs memory
// only when used: capacity × (2·obsDim + actDim + 2) × 4 bytes when full.
func NewReplay(capacity, obsDim, actDim int) *Replay {
	if capacity < 1 || obsDim < 1 || actDim < 1 {
		panic(fmt.Sprintf("buffer: NewReplay(%d, %d, %d): sizes must be >= 1", capacity, obsDim, actDim))
	}
	return &Replay{capacity: capacity, obsDim: obsDim, actDim: actDim}
}

// EnableGuide makes the buffer store a guide action of the action's
// dimension with every transition (AddGuided) and sample it into
// Batch.Guide. It must be called before the first transition is added.
func (r *Replay) EnableGuide() {
	if r.size > 0 {
		panic("buffer: EnableGuide on a non-empty replay buffer")
	}
	r.guided = true
}

// Len returns the number of stored transitions.
func (r *Replay) Len() int { return r.size }

// Cap returns the capacity.
func (r *Replay) Cap() int { return r.capacity }

// Add stores one transition, overwriting the oldest when full.
func (r *Replay) Add(obs, act []float32, rew float64, next []float32, terminated bool) {
	r.AddDone(obs, act, rew, next, DoneFlag(terminated))
}

// DoneFlag is Add's done value for a transition: 1 if it terminated, else
// 0 (AddDone's m = 1).
func DoneFlag(terminated bool) float32 {
	if terminated {
		return 1
	}
	return 0
}

// AddDone is Add with a fractional done flag in [0, 1]: learners bootstrap
// with weight (1 - done) γ, so an n-step learner stores an m-step
// transition that did not terminate with done = 1 - γ^(m-1), which makes
// the weight γ^m (done = 0 for m = 1, as Add).
func (r *Replay) AddDone(obs, act []float32, rew float64, next []float32, d float32) {
	r.AddGuided(obs, act, nil, rew, next, d)
}

// AddGuided is AddDone with the transition's guide action, which a
// buffer with EnableGuide needs and any other refuses.
func (r *Replay) AddGuided(obs, act, guide []float32, rew float64, next []float32, d float32) {
	if len(obs) != r.obsDim || len(next) != r.obsDim || len(act) != r.actDim {
		panic(fmt.Sprintf("buffer: Add got obs %d, next %d, act %d; want %d, %d, %d", len(obs), len(next), len(act), r.obsDim, r.obsDim, r.actDim))
	}
	if r.guided != (guide != nil) || guide != nil && len(guide) != r.actDim {
		panic(fmt.Sprintf("buffer: Add got a guide of %d values; want %d with EnableGuide, none without (guided: %v)", len(guide), r.actDim, r.guided))
	}
	if r.size < r.capacity && r.pos == r.size {
		r.obs = append(r.obs, obs...)
		r.next = append(r.next, next...)
		r.act = append(r.act, act...)
		r.rew = append(r.rew, float32(rew))
		r.done = append(r.done, d)
		r.guide = append(r.guide, guide...)
	} else {
		copy(r.obs[r.pos*r.obsDim:], obs)
		copy(r.next[r.pos*r.obsDim:], next)
		copy(r.act[r.pos*r.actDim:], act)
		r.rew[r.pos] = float32(rew)
		r.done[r.pos] = d
		if r.guided {
			copy(r.guide[r.pos*r.actDim:], guide)
		}
	}
	r.pos = (r.pos + 1) % r.capacity
	r.size = min(r.size+1, r.capacity)
}

// Batch is a sampled minibatch, row-major.
type Batch struct {
	N                   int
	Obs, Act, Rew, Next []float32
	Done                []float32 // 1 where the transition terminated
	// Guide holds the sampled transitions' guide actions when the buffer
	// has them (EnableGuide), else nil.
	Guide          []float32
	obsDim, actDim int
}

// NewBatch returns a batch with room for n transitions of the buffer's
// shape.
func (r *Replay) NewBatch(n int) *Batch {
	b := &Batch{N: n, obsDim: r.obsDim, actDim: r.actDim,
		Obs: make([]float32, n*r.obsDim), Next: make([]float32, n*r.obsDim),
		Act: make([]float32, n*r.actDim), Rew: make([]float32, n), Done: make([]float32, n)}
	if r.guided {
		b.Guide = make([]float32, n*r.actDim)
	}
	return b
}

// Sample fills b with b.N transitions drawn uniformly with replacement
// (SB3's ReplayBuffer.sample). It panics on an empty buffer.
func (r *Replay) Sample(rng *rand.Rand, b *Batch) {
	if r.size == 0 {
		panic("buffer: Sample from an empty replay buffer")
	}
	od, ad := r.obsDim, r.actDim
	for k := 0; k < b.N; k++ {
		i := rng.IntN(r.size)
		copy(b.Obs[k*od:(k+1)*od], r.obs[i*od:(i+1)*od])
		copy(b.Next[k*od:(k+1)*od], r.next[i*od:(i+1)*od])
		copy(b.Act[k*ad:(k+1)*ad], r.act[i*ad:(i+1)*ad])
		b.Rew[k] = r.rew[i]
		b.Done[k] = r.done[i]
		if b.Guide != nil {
			copy(b.Guide[k*ad:(k+1)*ad], r.guide[i*ad:(i+1)*ad])
		}
	}
}

// Save writes the buffer's contents to a checkpoint.
func (r *Replay) Save(e *checkpoint.Encoder) {
	e.Int64("replay.capacity", int64(r.capacity))
	e.Int64("replay.pos", int64(r.pos))
	e.Int64("replay.size", int64(r.size))
	e.Float32s("replay.obs", r.obs)
	e.Float32s("replay.next", r.next)
	e.Float32s("replay.act", r.act)
	e.Float32s("replay.rew", r.rew)
	e.Float32s("replay.done", r.done)
	if r.guided {
		e.Float32s("replay.guide", r.guide)
	}
}

// Load restores contents written by Save into a buffer with the same
// shape, capacity and guide setting.
func (r *Replay) Load(d *checkpoint.Decoder) {
	if c := d.Int64("replay.capacity"); d.Err() == nil && c != int64(r.capacity) {
		d.Fail("replay.capacity", "saved capacity %d, this run uses %d", c, r.capacity)
		return
	}
	pos, size := d.Int64("replay.pos"), d.Int64("replay.size")
	if d.Err() != nil {
		return
	}
	if size < 0 || size > int64(r.capacity) || pos < 0 || pos >= int64(r.capacity) {
		d.Fail("replay.size", "size %d, pos %d out of range for capacity %d", size, pos, r.capacity)
		return
	}
	n := int(size)
	r.obs = d.Float32sMax("replay.obs", n*r.obsDim)
	r.next = d.Float32sMax("replay.next", n*r.obsDim)
	r.act = d.Float32sMax("replay.act", n*r.actDim)
	r.rew = d.Float32sMax("replay.rew", n)
	r.done = d.Float32sMax("replay.done", n)
	if r.guided {
		r.guide = d.Float32sMax("replay.guide", n*r.actDim)
	}
	if d.Err() == nil && r.guided && len(r.guide) != n*r.actDim {
		d.Fail("replay.guide", "stored guide actions do not match size %d", n)
		return
	}
	if d.Err() == nil && (len(r.obs) != n*r.obsDim || len(r.next) != n*r.obsDim || len(r.act) != n*r.actDim || len(r.rew) != n || len(r.done) != n) {
		d.Fail("replay.obs", "stored arrays do not match size %d", n)
		return
	}
	r.pos, r.size = int(pos), n
}
