// Package metrics computes the papers' measurements from simulation data:
// RTT and queueing-delay distributions, goodput, flow completion time,
// Jain's fairness index and RTT Transition Impact, plus the summary
// statistics sweeps aggregate (mean, standard deviation, confidence interval,
// percentiles).
package metrics

import (
	"math"
	"time"
	"unsafe"

	"github.com/cclab/cclab/internal/prefetch"
)

// relErr is the histogram's relative bucket width: percentiles are exact to
// within ±0.5%, far below the run-to-run spread of any network metric.
const relErr = 0.01

var logBase = math.Log1p(relErr)

// Hist is a log-bucketed histogram of positive durations with exact count,
// sum, minimum and maximum. Memory is proportional to the range of values
// seen (about 230 buckets per decade), never to the number of samples.
type Hist struct {
	counts   []uint32
	lo       int // bucket index of counts[0]
	n        int64
	sum      float64 // ns
	min, max time.Duration
}

func bucketOf(d time.Duration) int {
	if d < 1 {
		d = 1
	}
	return int(math.Floor(math.Log(float64(d)) / logBase))
}

// Add records one sample.
func (h *Hist) Add(d time.Duration) {
	b := bucketOf(d)
	switch {
	case len(h.counts) == 0:
		h.counts = make([]uint32, 64)
		h.lo = b - 32
	case b < h.lo:
		grow := h.lo - b + 32
		nc := make([]uint32, len(h.counts)+grow)
		copy(nc[grow:], h.counts)
		h.counts, h.lo = nc, h.lo-grow
	case b >= h.lo+len(h.counts):
		need := b - h.lo + 1 + 32
		nc := make([]uint32, need)
		copy(nc, h.counts)
		h.counts = nc
	}
	h.counts[b-h.lo]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
}

// Prefetch starts loading the histogram's buckets (up to eight cache lines:
// the range a flow's RTT usually spans) before a sample is added; it
// changes nothing.
func (h *Hist) Prefetch() {
	if len(h.counts) > 0 {
		prefetch.Lines(unsafe.Pointer(&h.counts[0]), min((len(h.counts)+15)/16, 8))
	}
}

// Count returns the number of samples.
func (h *Hist) Count() int64 { return h.n }

// Mean returns the exact mean, 0 if empty.
func (h *Hist) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Min returns the smallest sample.
func (h *Hist) Min() time.Duration { return h.min }

// Max returns the largest sample.
func (h *Hist) Max() time.Duration { return h.max }

// Quantile returns the q-quantile (0 <= q <= 1) to within the bucket width,
// clamped to the exact minimum and maximum; 0 if empty.
func (h *Hist) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += int64(c)
		if seen >= rank {
			// Geometric middle of the bucket.
			v := time.Duration(math.Exp((float64(h.lo+i) + 0.5) * logBase))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// Merge adds other's samples to h.
func (h *Hist) Merge(other *Hist) {
	if other.n == 0 {
		return
	}
	lo, hi := other.lo, other.lo+len(other.counts)
	if len(h.counts) > 0 {
		lo, hi = min(lo, h.lo), max(hi, h.lo+len(h.counts))
	}
	switch {
	case len(h.counts) == 0:
		h.counts, h.lo = make([]uint32, hi-lo), lo
	case lo < h.lo || hi > h.lo+len(h.counts):
		nc := make([]uint32, hi-lo)
		copy(nc[h.lo-lo:], h.counts)
		h.counts, h.lo = nc, lo
	}
	for i, c := range other.counts {
		h.counts[other.lo+i-h.lo] += c
	}
	if h.n == 0 || other.min < h.min {
		h.min = other.min
	}
	h.max = max(h.max, other.max)
	h.n += other.n
	h.sum += other.sum
}
