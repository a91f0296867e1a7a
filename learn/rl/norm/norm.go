// Package norm keeps running mean and variance estimates and normalises
// observations with them, as Stable-Baselines3's RunningMeanStd and
// VecNormalize do. An observation normaliser is part of a trained policy: it
// is saved in the policy file and applied at inference.
package norm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// RunningMeanStd tracks the per-dimension mean and (population) variance
// of a stream of vectors by merging batch moments (Chan, Golub & LeVeque
// 1979, the parallel algorithm SB3's RunningMeanStd.update_from_moments
// uses). It starts at mean 0, variance 1 with a pseudo-count of 1e-4, as
// SB3 does, so the first batch dominates immediately.
type RunningMeanStd struct {
	Mean, Var []float64
	Count     float64
}

// InitialCount is SB3's pseudo-count for a fresh estimator (epsilon=1e-4).
const InitialCount = 1e-4

// NewRunningMeanStd returns an estimator for vectors of length dim.
func NewRunningMeanStd(dim int) *RunningMeanStd {
	r := &RunningMeanStd{Mean: make([]float64, dim), Var: make([]float64, dim), Count: InitialCount}
	for i := range r.Var {
		r.Var[i] = 1
	}
	return r
}

// Dim returns the vector length.
func (r *RunningMeanStd) Dim() int { return len(r.Mean) }

// Update merges a batch of rows (len(batch)/Dim() vectors, row-major).
func (r *RunningMeanStd) Update(batch []float32) {
	d := len(r.Mean)
	n := len(batch) / d
	if n == 0 || len(batch) != n*d {
		panic(fmt.Sprintf("norm: Update got %d values, want a positive multiple of %d", len(batch), d))
	}
	for i := 0; i < d; i++ {
		var s float64
		for k := 0; k < n; k++ {
			s += float64(batch[k*d+i])
		}
		bm := s / float64(n)
		var v float64
		for k := 0; k < n; k++ {
			e := float64(batch[k*d+i]) - bm
			v += e * e
		}
		r.merge(i, bm, v/float64(n), float64(n))
	}
	r.Count += float64(n)
}

// UpdateScalars merges a batch of scalars into a one-dimensional estimator.
func (r *RunningMeanStd) UpdateScalars(xs []float64) {
	if len(r.Mean) != 1 {
		panic("norm: UpdateScalars on a multi-dimensional estimator")
	}
	n := float64(len(xs))
	if n == 0 {
		return
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	bm := s / n
	var v float64
	for _, x := range xs {
		v += (x - bm) * (x - bm)
	}
	r.merge(0, bm, v/n, n)
	r.Count += n
}

// merge folds one dimension's batch moments into the running ones; the
// caller adds n to Count afterwards.
func (r *RunningMeanStd) merge(i int, bm, bv, n float64) {
	tot := r.Count + n
	delta := bm - r.Mean[i]
	m2 := r.Var[i]*r.Count + bv*n + delta*delta*r.Count*n/tot
	r.Mean[i] += delta * n / tot
	r.Var[i] = m2 / tot
}

// Obs normalises observations: clip((x − mean)/sqrt(var + Eps), ±Clip),
// SB3 VecNormalize.normalize_obs with its defaults Eps = 1e-8 and Clip = 10.
type Obs struct {
	RMS  *RunningMeanStd
	Clip float64
	Eps  float64
}

// NewObs returns a fresh observation normaliser with SB3's defaults.
func NewObs(dim int) *Obs {
	return &Obs{RMS: NewRunningMeanStd(dim), Clip: 10, Eps: 1e-8}
}

// Dim returns the observation length.
func (o *Obs) Dim() int { return o.RMS.Dim() }

// Normalize writes the normalised rows of x into dst (same length; may
// alias x).
func (o *Obs) Normalize(x, dst []float32) {
	d := o.RMS.Dim()
	if len(x)%d != 0 || len(dst) != len(x) {
		panic(fmt.Sprintf("norm: Normalize got %d values into %d, want equal multiples of %d", len(x), len(dst), d))
	}
	for k := 0; k < len(x); k += d {
		for i := 0; i < d; i++ {
			v := (float64(x[k+i]) - o.RMS.Mean[i]) / math.Sqrt(o.RMS.Var[i]+o.Eps)
			dst[k+i] = float32(min(max(v, -o.Clip), o.Clip))
		}
	}
}

// Clone returns a deep copy.
func (o *Obs) Clone() *Obs {
	r := &RunningMeanStd{Mean: append([]float64(nil), o.RMS.Mean...), Var: append([]float64(nil), o.RMS.Var...), Count: o.RMS.Count}
	return &Obs{RMS: r, Clip: o.Clip, Eps: o.Eps}
}

// AppendBinary appends dim (uint32), clip, eps, count, means and variances
// (float64, little endian).
func (o *Obs) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint32(b, uint32(o.Dim()))
	for _, v := range []float64{o.Clip, o.Eps, o.RMS.Count} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	for _, s := range [][]float64{o.RMS.Mean, o.RMS.Var} {
		for _, v := range s {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b, nil
}

// DecodeObs reads a normaliser written by AppendBinary from the front of b
// and returns it with the number of bytes consumed. It rejects negative or
// non-finite variances and counts.
func DecodeObs(b []byte) (*Obs, int, error) {
	if len(b) < 4+24 {
		return nil, 0, errors.New("norm: truncated normaliser")
	}
	d := int(binary.LittleEndian.Uint32(b))
	if d < 1 || d > 1<<24 {
		return nil, 0, fmt.Errorf("norm: normaliser dimension %d, want 1..%d", d, 1<<24)
	}
	need := 4 + 24 + 16*d
	if len(b) < need {
		return nil, 0, fmt.Errorf("norm: truncated normaliser: %d bytes for dimension %d, want %d", len(b), d, need)
	}
	f := func(off int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[off:])) }
	o := &Obs{Clip: f(4), Eps: f(12), RMS: &RunningMeanStd{Count: f(20), Mean: make([]float64, d), Var: make([]float64, d)}}
	if !(o.Clip > 0) || !(o.Eps >= 0) || !(o.RMS.Count > 0) || math.IsInf(o.RMS.Count, 0) {
		return nil, 0, fmt.Errorf("norm: invalid normaliser settings clip=%g eps=%g count=%g", o.Clip, o.Eps, o.RMS.Count)
	}
	off := 28
	for i := range o.RMS.Mean {
		o.RMS.Mean[i] = f(off)
		off += 8
		if math.IsNaN(o.RMS.Mean[i]) || math.IsInf(o.RMS.Mean[i], 0) {
			return nil, 0, fmt.Errorf("norm: mean[%d] = %g is not finite", i, o.RMS.Mean[i])
		}
	}
	for i := range o.RMS.Var {
		o.RMS.Var[i] = f(off)
		off += 8
		if !(o.RMS.Var[i] >= 0) || math.IsInf(o.RMS.Var[i], 0) {
			return nil, 0, fmt.Errorf("norm: var[%d] = %g, want finite and >= 0", i, o.RMS.Var[i])
		}
	}
	return o, off, nil
}
