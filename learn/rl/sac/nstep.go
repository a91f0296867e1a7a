package sac

import (
	"math"

	"github.com/cclab/cclab/learn/rl/checkpoint"
)

// transitionAdder receives finished transitions (buffer.Replay.AddGuided;
// guide is nil without a behaviour-cloning term).
type transitionAdder interface {
	AddGuided(obs, act, guide []float32, rew float64, next []float32, done float32)
}

// nstepQueue turns one environment's 1-step transitions into n-step ones
// (Sutton and Barto 7.1; Hessel et al. 2018's multi-step targets): the
// transition leaving s_t carries R = Σ_{j<m} γ^j r_{t+j} and s_{t+m},
// with m = n, or fewer when the episode ends first. The bootstrap weight
// γ^m is stored as done = 1 - γ^(m-1) (buffer.Replay.AddDone), and a
// termination within the m steps stores done = 1. The targets are those
// of the behaviour policy's actions (uncorrected for off-policy data, as
// Rainbow and SB3's n_steps replay do).
type nstepQueue struct {
	n, od, ad int
	gamma     float64
	obs, act  []float32 // n rows, ring
	guide     []float32 // n rows with guide actions, else nil
	rew       []float64
	head, len int
}

// newNStepQueue returns an empty queue; guided queues carry each step's
// guide action (Config.BCWeight) to the transition leaving its state.
func newNStepQueue(n, od, ad int, gamma float64, guided bool) *nstepQueue {
	q := &nstepQueue{n: n, od: od, ad: ad, gamma: gamma,
		obs: make([]float32, n*od), act: make([]float32, n*ad), rew: make([]float64, n)}
	if guided {
		q.guide = make([]float32, n*ad)
	}
	return q
}

// push records the step (obs, act) → rew, next (with obs's guide action
// in a guided queue, nil otherwise) and emits what is complete:
// the oldest pending transition once n are pending, every pending one when
// the episode ended (terminated, or truncated with next its final
// observation).
func (q *nstepQueue) push(dst transitionAdder, obs, act, guide []float32, rew float64, next []float32, terminated, ended bool) {
	i := (q.head + q.len) % q.n
	copy(q.obs[i*q.od:(i+1)*q.od], obs)
	copy(q.act[i*q.ad:(i+1)*q.ad], act)
	if q.guide != nil {
		copy(q.guide[i*q.ad:(i+1)*q.ad], guide)
	}
	q.rew[i] = rew
	q.len++
	if ended {
		for q.len > 0 {
			q.emit(dst, next, terminated)
		}
		q.head = 0
		return
	}
	if q.len == q.n {
		q.emit(dst, next, false)
	}
}

// emit adds the oldest pending transition, bootstrapping from next after
// the q.len steps pending, and drops it.
func (q *nstepQueue) emit(dst transitionAdder, next []float32, terminated bool) {
	var ret, g float64 = 0, 1
	for j := range q.len {
		ret += g * q.rew[(q.head+j)%q.n]
		g *= q.gamma
	}
	done := float32(1)
	if !terminated {
		done = float32(1 - math.Pow(q.gamma, float64(q.len-1)))
	}
	h := q.head
	var guide []float32
	if q.guide != nil {
		guide = q.guide[h*q.ad : (h+1)*q.ad]
	}
	dst.AddGuided(q.obs[h*q.od:(h+1)*q.od], q.act[h*q.ad:(h+1)*q.ad], guide, ret, next, done)
	q.head = (q.head + 1) % q.n
	q.len--
}

func (q *nstepQueue) save(e *checkpoint.Encoder, name string) {
	e.Int64(name+".head", int64(q.head))
	e.Int64(name+".len", int64(q.len))
	e.Float32s(name+".obs", q.obs)
	e.Float32s(name+".act", q.act)
	e.Float64s(name+".rew", q.rew)
	if q.guide != nil {
		e.Float32s(name+".guide", q.guide)
	}
}

func (q *nstepQueue) load(d *checkpoint.Decoder, name string) {
	head, n := d.Int64(name+".head"), d.Int64(name+".len")
	d.Float32sInto(name+".obs", q.obs)
	d.Float32sInto(name+".act", q.act)
	d.Float64sInto(name+".rew", q.rew)
	if q.guide != nil {
		d.Float32sInto(name+".guide", q.guide)
	}
	if d.Err() == nil && (head < 0 || head >= int64(q.n) || n < 0 || n >= int64(q.n)) {
		d.Fail(name+".len", "head %d, length %d out of range for %d-step returns", head, n, q.n)
		return
	}
	q.head, q.len = int(head), int(n)
}
