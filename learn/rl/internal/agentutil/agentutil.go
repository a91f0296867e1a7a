// Package agentutil holds plumbing shared by the learning algorithms:
// checkpointable random streams, episode-statistics windows, saving the
// vectorised environment with a checkpoint, and small array helpers.
package agentutil

import (
	"math"
	"math/rand/v2"

	"github.com/cclab/cclab/learn/rl/checkpoint"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/norm"
	"github.com/cclab/cclab/learn/rl/space"
)

// RNG is a seeded PCG generator whose state can be checkpointed.
type RNG struct {
	*rand.Rand
	src *rand.PCG
}

// NewRNG returns a generator for stream `stream` of seed.
func NewRNG(seed, stream uint64) *RNG {
	src := rand.NewPCG(seed, stream)
	return &RNG{Rand: rand.New(src), src: src}
}

// Save writes the generator state.
func (r *RNG) Save(e *checkpoint.Encoder, name string) {
	b, _ := r.src.MarshalBinary()
	e.Bytes(name, b)
}

// Load restores the generator state.
func (r *RNG) Load(d *checkpoint.Decoder, name string) {
	b := d.Bytes(name)
	if d.Err() != nil {
		return
	}
	if err := r.src.UnmarshalBinary(b); err != nil {
		d.Fail(name, "%v", err)
	}
}

// Normal fills x with standard normal draws.
func (r *RNG) Normal(x []float32) {
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
}

// Window keeps the last N finished episodes, as SB3's ep_info_buffer
// (stats_window_size = 100) behind ep_rew_mean and ep_len_mean.
type Window struct {
	N       int
	returns []float64
	lengths []float64
	next    int
	Total   int64 // episodes seen
	scratch []env.Episode
}

// NewWindow returns a window of n episodes.
func NewWindow(n int) *Window { return &Window{N: n} }

// Drain moves finished episodes from v into the window.
func (w *Window) Drain(v env.VecEnv) {
	w.scratch = v.Episodes(w.scratch[:0])
	for _, ep := range w.scratch {
		w.Add(ep.Return, float64(ep.Length))
	}
}

// Add records one episode.
func (w *Window) Add(ret, length float64) {
	if len(w.returns) < w.N {
		w.returns = append(w.returns, ret)
		w.lengths = append(w.lengths, length)
	} else {
		w.returns[w.next] = ret
		w.lengths[w.next] = length
		w.next = (w.next + 1) % w.N
	}
	w.Total++
}

// MeanReturn is the mean return over the window, NaN if empty.
func (w *Window) MeanReturn() float64 { return mean(w.returns) }

// MeanLength is the mean length over the window, NaN if empty.
func (w *Window) MeanLength() float64 { return mean(w.lengths) }

func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Save writes the window.
func (w *Window) Save(e *checkpoint.Encoder) {
	e.Int64("window.next", int64(w.next))
	e.Int64("window.total", w.Total)
	e.Float64s("window.returns", w.returns)
	e.Float64s("window.lengths", w.lengths)
}

// Load restores the window.
func (w *Window) Load(d *checkpoint.Decoder) {
	w.next = int(d.Int64("window.next"))
	w.Total = d.Int64("window.total")
	n := int(min(max(w.Total, 0), int64(w.N)))
	w.returns = make([]float64, n)
	w.lengths = make([]float64, n)
	d.Float64sInto("window.returns", w.returns)
	d.Float64sInto("window.lengths", w.lengths)
	if d.Err() == nil && (w.next < 0 || w.next >= max(w.N, 1)) {
		d.Fail("window.next", "%d out of range", w.next)
	}
}

// SaveEnv writes the vectorised environment's state if it can be saved
// (every environment is env.Stateful) and a flag saying whether it was;
// otherwise the statistics of an env.StatsKeeper wrapper alone.
func SaveEnv(e *checkpoint.Encoder, v env.VecEnv) error {
	s, ok := v.(env.Stateful)
	var b []byte
	var err error
	if ok {
		b, err = s.AppendState(nil)
		ok = err == nil
	}
	e.Bool("env.saved", ok)
	if ok {
		e.Bytes("env.state", b)
		return nil
	}
	// Statistics alone (empty without any), so that a resumed run's
	// policy sees observations normalised as before.
	var st []byte
	if k, ok := v.(env.StatsKeeper); ok {
		st = k.AppendStats(nil)
	}
	e.Bytes("env.stats", st)
	return nil
}

// LoadEnv restores the environment state written by SaveEnv. It reports
// false if none was saved, in which case the caller must reset v (whose
// statistics, if saved, are restored).
func LoadEnv(d *checkpoint.Decoder, v env.VecEnv) bool {
	if !d.Bool("env.saved") {
		st := d.Bytes("env.stats")
		if d.Err() != nil || len(st) == 0 {
			return false
		}
		k, ok := v.(env.StatsKeeper)
		if !ok {
			d.Fail("env.stats", "checkpoint has normalisation statistics but %T keeps none (a different configuration)", v)
			return false
		}
		if err := k.RestoreStats(st); err != nil {
			d.Fail("env.stats", "%v", err)
		}
		return false
	}
	b := d.Bytes("env.state")
	if d.Err() != nil {
		return false
	}
	s, ok := v.(env.Stateful)
	if !ok {
		d.Fail("env.state", "checkpoint has an environment state but %T cannot restore one", v)
		return false
	}
	if err := s.RestoreState(b); err != nil {
		d.Fail("env.state", "%v", err)
		return false
	}
	return true
}

// ObsNormalizer returns the vectorised environment's observation
// normaliser (a clone, for a policy file) if it has one.
func ObsNormalizer(v env.VecEnv) *norm.Obs {
	if n, ok := v.(interface{ ObsNormalizer() *norm.Obs }); ok {
		if o := n.ObsNormalizer(); o != nil {
			return o.Clone()
		}
	}
	return nil
}

// Concat writes rows [a_i, b_i] of widths da and db into dst (n rows).
func Concat(dst, a []float32, da int, b []float32, db int) {
	n := len(a) / da
	w := da + db
	for i := 0; i < n; i++ {
		copy(dst[i*w:i*w+da], a[i*da:(i+1)*da])
		copy(dst[i*w+da:(i+1)*w], b[i*db:(i+1)*db])
	}
}

// Unscale maps a ∈ [−1, 1] to the Box bounds: low + (a+1)/2·(high−low)
// (SB3's unscale_action), for each row of a.
func Unscale(s space.Space, a, dst []float32) {
	d := s.Dim()
	for i := range a {
		lo, hi := s.Low[i%d], s.High[i%d]
		dst[i] = lo + (a[i]+1)*0.5*(hi-lo)
	}
}

// Scale maps Box values to [−1, 1] (SB3's scale_action).
func Scale(s space.Space, x, dst []float32) {
	d := s.Dim()
	for i := range x {
		lo, hi := s.Low[i%d], s.High[i%d]
		dst[i] = 2*(x[i]-lo)/(hi-lo) - 1
	}
}

// AllFinite reports whether no value is NaN or infinite.
func AllFinite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// SaveAdam writes an Adam optimiser's step count and moments.
func SaveAdam(e *checkpoint.Encoder, name string, a *nn.Adam) {
	e.Int64(name+".t", a.T)
	e.Float32s(name+".m", a.M)
	e.Float32s(name+".v", a.V)
}

// LoadAdam restores an Adam optimiser of the same size.
func LoadAdam(d *checkpoint.Decoder, name string, a *nn.Adam) {
	a.T = d.Int64(name + ".t")
	d.Float32sInto(name+".m", a.M)
	d.Float32sInto(name+".v", a.V)
}

// CheckDims verifies that a checkpoint was written for the same shapes.
func CheckDims(d *checkpoint.Decoder, prefix string, obsDim, actDim, envs int) {
	for _, c := range []struct {
		name string
		want int
	}{{prefix + ".obs_dim", obsDim}, {prefix + ".act_dim", actDim}, {prefix + ".envs", envs}} {
		if v := d.Int64(c.name); d.Err() == nil && v != int64(c.want) {
			d.Fail(c.name, "checkpoint has %d, this run has %d", v, c.want)
		}
	}
}

// SaveDims writes the shapes checked by CheckDims.
func SaveDims(e *checkpoint.Encoder, prefix string, obsDim, actDim, envs int) {
	e.Int64(prefix+".obs_dim", int64(obsDim))
	e.Int64(prefix+".act_dim", int64(actDim))
	e.Int64(prefix+".envs", int64(envs))
}
