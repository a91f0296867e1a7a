package datacenter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// MultiVec steps E independent simulations of K agents each. As an
// env.VecEnv it has E·K rows, row e·K + i being agent i of simulation e:
// one learner trains all agents with one shared policy (parameter sharing,
// the limit of the paper's "shared learned policies"). View(i) gives agent
// i its own E-row env.VecEnv for independent learners; the views are
// stepped in lockstep (see View).
//
// Every row's reward is the team-average reward of its simulation (the
// paper's fully cooperative setting). Episodes of one simulation end
// together (truncation after Config.Steps); the simulation is then reset
// with the next seed of its own stream PCG(seed, e), so results do not
// depend on scheduling.
type MultiVec struct {
	sims    []*Sim
	k       int
	kind    ActionKind
	obsDim  int
	actDim  int
	workers int
	seeds   []*rand.PCG
	batch   env.Batch
	epRet   []float64
	epLen   []int
	done    []env.Episode

	views    []*View
	mu       sync.Mutex
	cond     *sync.Cond
	arrived  int
	gen      uint64
	pending  []float32
	resetGen uint64 // gen at the last reset (views share one reset)
	wasReset bool

	// episodeSeeds, if set, are the episodes' seeds in order (one
	// simulation only), instead of the PCG stream; onEnd is called with
	// each finished episode's statistics before the next episode starts.
	episodeSeeds []uint64
	nextEpisode  int
	onEnd        func(*EpisodeStats)
}

var _ env.VecEnv = (*MultiVec)(nil)

// NewMultiVec builds envs simulations of cfg (each with cfg.Agents
// agents), stepped by up to workers goroutines (0: one per simulation).
func NewMultiVec(cfg Config, envs, workers int) (*MultiVec, error) {
	if envs < 1 {
		return nil, fmt.Errorf("datacenter: %d environments, want >= 1", envs)
	}
	v := &MultiVec{}
	for range envs {
		s, err := NewSim(cfg)
		if err != nil {
			return nil, err
		}
		v.sims = append(v.sims, s)
	}
	s0 := v.sims[0]
	v.k, v.kind, v.obsDim = s0.Agents(), s0.cfg.Action, s0.ObsDim()
	v.actDim = v.kind.Space().Dim()
	if workers <= 0 || workers > envs {
		workers = envs
	}
	v.workers = workers
	rows := envs * v.k
	v.seeds = make([]*rand.PCG, envs)
	v.batch = env.Batch{Obs: make([]float32, rows*v.obsDim), FinalObs: make([]float32, rows*v.obsDim),
		Reward: make([]float64, rows), Terminated: make([]bool, rows), Truncated: make([]bool, rows)}
	v.epRet, v.epLen = make([]float64, rows), make([]int, rows)
	v.cond = sync.NewCond(&v.mu)
	v.pending = make([]float32, rows*v.actDim)
	return v, nil
}

// Sims returns the simulations.
func (v *MultiVec) Sims() []*Sim { return v.sims }

// Agents returns K.
func (v *MultiVec) Agents() int { return v.k }

// NumEnvs implements env.VecEnv: E·K rows.
func (v *MultiVec) NumEnvs() int { return len(v.sims) * v.k }

// ObservationSpace implements env.VecEnv (one agent's observation).
func (v *MultiVec) ObservationSpace() space.Space {
	return space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), v.obsDim)
}

// ActionSpace implements env.VecEnv (one agent's action).
func (v *MultiVec) ActionSpace() space.Space { return v.kind.Space() }

// Reset implements env.VecEnv: simulation e's seed stream is PCG(seed, e).
func (v *MultiVec) Reset(seed uint64) *env.Batch {
	for e, s := range v.sims {
		v.seeds[e] = rand.NewPCG(seed, uint64(e))
		v.nextEpisode = 0
		s.Reset(v.episodeSeed(e))
		v.copyObs(v.batch.Obs, e)
	}
	clear(v.batch.Reward)
	clear(v.batch.Terminated)
	clear(v.batch.Truncated)
	clear(v.epRet)
	clear(v.epLen)
	v.done = v.done[:0]
	return &v.batch
}

// episodeSeed is the seed of simulation e's next episode: the next listed
// seed (the last one repeats once the list is used up), or the next value
// of its PCG stream.
func (v *MultiVec) episodeSeed(e int) uint64 {
	if len(v.episodeSeeds) == 0 {
		return v.seeds[e].Uint64()
	}
	seed := v.episodeSeeds[min(v.nextEpisode, len(v.episodeSeeds)-1)]
	v.nextEpisode++
	return seed
}

func (v *MultiVec) copyObs(dst []float32, e int) {
	for i := range v.k {
		r := e*v.k + i
		copy(dst[r*v.obsDim:(r+1)*v.obsDim], v.sims[e].Observation(i))
	}
}

// stepSim applies simulation e's K actions, advances it, and resets it if
// its episode ended. It touches only simulation e's rows.
func (v *MultiVec) stepSim(e int, actions []float32) {
	s := v.sims[e]
	for i := range v.k {
		r := e*v.k + i
		if err := s.Apply(i, v.kind.Decode(actions[r*v.actDim:(r+1)*v.actDim])); err != nil {
			panic(err) // Decode stays within BBR's ranges
		}
	}
	done := s.Advance()
	b := &v.batch
	for i := range v.k {
		r := e*v.k + i
		b.Reward[r] = s.TeamReward()
		b.Terminated[r], b.Truncated[r] = false, done
	}
	if done {
		v.copyObs(b.FinalObs, e)
		if v.onEnd != nil {
			v.onEnd(s.Stats())
		}
		s.Reset(v.episodeSeed(e))
	}
	v.copyObs(b.Obs, e)
}

// Step implements env.VecEnv.
func (v *MultiVec) Step(actions []float32) *env.Batch {
	if len(actions) != v.NumEnvs()*v.actDim {
		panic(fmt.Sprintf("datacenter: MultiVec.Step got %d action values, want %d rows × %d", len(actions), v.NumEnvs(), v.actDim))
	}
	if v.seeds[0] == nil {
		panic("datacenter: MultiVec.Step before Reset")
	}
	n := len(v.sims)
	par.Chunks(n, v.workers, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			v.stepSim(e, actions)
		}
	})
	// Episode bookkeeping in row order, after the join.
	b := &v.batch
	for r := range v.NumEnvs() {
		v.epRet[r] += b.Reward[r]
		v.epLen[r]++
		if b.Done(r) {
			v.done = append(v.done, env.Episode{Env: r, Return: v.epRet[r], Length: v.epLen[r], Truncated: true})
			v.epRet[r], v.epLen[r] = 0, 0
		}
	}
	return b
}

// Episodes implements env.VecEnv.
func (v *MultiVec) Episodes(dst []env.Episode) []env.Episode {
	dst = append(dst, v.done...)
	v.done = v.done[:0]
	return dst
}

// View is agent i's window on a MultiVec: an env.VecEnv of E rows (one per
// simulation) for an independent learner. The K views must be stepped
// together, from K goroutines: each Step blocks until every view has
// submitted its actions, then the last one steps the simulations and
// hands every view its rows. All views' learners must therefore take the
// same number of steps per iteration (same algorithm and rollout length),
// which makes the lockstep deterministic. Reset resets the simulations
// once: the first view's call resets them with its seed, later calls
// before the next Step only read the first observations.
type View struct {
	mv    *MultiVec
	agent int
	batch env.Batch
	done  []env.Episode
}

var _ env.VecEnv = (*View)(nil)

// Views returns the K views (created once).
func (v *MultiVec) Views() []*View {
	if v.views == nil {
		n := len(v.sims)
		for i := range v.k {
			v.views = append(v.views, &View{mv: v, agent: i, batch: env.Batch{
				Obs: make([]float32, n*v.obsDim), FinalObs: make([]float32, n*v.obsDim),
				Reward: make([]float64, n), Terminated: make([]bool, n), Truncated: make([]bool, n)}})
		}
	}
	return v.views
}

// Agent returns the view's agent index.
func (w *View) Agent() int { return w.agent }

// NumEnvs implements env.VecEnv: one row per simulation.
func (w *View) NumEnvs() int { return len(w.mv.sims) }

// ObservationSpace implements env.VecEnv.
func (w *View) ObservationSpace() space.Space { return w.mv.ObservationSpace() }

// ActionSpace implements env.VecEnv.
func (w *View) ActionSpace() space.Space { return w.mv.ActionSpace() }

// Reset implements env.VecEnv.
func (w *View) Reset(seed uint64) *env.Batch {
	mv := w.mv
	mv.mu.Lock()
	defer mv.mu.Unlock()
	if !mv.wasReset || mv.resetGen != mv.gen {
		mv.Reset(seed)
		mv.wasReset, mv.resetGen = true, mv.gen
		for _, o := range mv.Views() {
			o.done = o.done[:0]
		}
	}
	w.fill()
	clear(w.batch.Reward)
	clear(w.batch.Terminated)
	clear(w.batch.Truncated)
	return &w.batch
}

// fill copies the view's rows out of the joint batch.
func (w *View) fill() {
	mv := w.mv
	b := &mv.batch
	d := mv.obsDim
	for e := range mv.sims {
		r := e*mv.k + w.agent
		copy(w.batch.Obs[e*d:(e+1)*d], b.Obs[r*d:(r+1)*d])
		copy(w.batch.FinalObs[e*d:(e+1)*d], b.FinalObs[r*d:(r+1)*d])
		w.batch.Reward[e] = b.Reward[r]
		w.batch.Terminated[e], w.batch.Truncated[e] = b.Terminated[r], b.Truncated[r]
	}
}

// Step implements env.VecEnv; see View for the lockstep contract.
func (w *View) Step(actions []float32) *env.Batch {
	mv := w.mv
	if len(actions) != len(mv.sims)*mv.actDim {
		panic(fmt.Sprintf("datacenter: View.Step got %d action values, want %d", len(actions), len(mv.sims)*mv.actDim))
	}
	mv.mu.Lock()
	defer mv.mu.Unlock()
	for e := range mv.sims {
		r := e*mv.k + w.agent
		copy(mv.pending[r*mv.actDim:(r+1)*mv.actDim], actions[e*mv.actDim:(e+1)*mv.actDim])
	}
	mv.arrived++
	if mv.arrived < mv.k {
		g := mv.gen
		for mv.gen == g {
			mv.cond.Wait()
		}
		return &w.batch
	}
	// Last to arrive: step everything, hand out the rows, wake the rest.
	mv.Step(mv.pending)
	var eps []env.Episode
	eps = mv.Episodes(eps)
	for _, o := range mv.Views() {
		o.fill()
		for _, ep := range eps {
			if ep.Env%mv.k == o.agent {
				ep.Env /= mv.k
				o.done = append(o.done, ep)
			}
		}
	}
	mv.arrived = 0
	mv.gen++
	mv.cond.Broadcast()
	return &w.batch
}

// Episodes implements env.VecEnv: the agent's finished episodes.
func (w *View) Episodes(dst []env.Episode) []env.Episode {
	w.mv.mu.Lock()
	defer w.mv.mu.Unlock()
	dst = append(dst, w.done...)
	w.done = w.done[:0]
	return dst
}
