// Package metrics computes the papers' measurements from simulation data:
// RTT and queueing-delay distributions, goodput, flow completion time,
// Jain's fairness index and RTT Transition Impact, plus the summary
// statistics sweeps aggregate (mean, standard deviation, confidence interval,
// percentiles).
package metrics

import (
	"math"
	"math/bits"
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
//
// Bucket counts are 16 bits: a flow's RTT spans about a hundred buckets and,
// with thousands of flows, each bucket sees tens of samples, so 32-bit counts
// would double the largest per-flow record after the sender's. A count that
// wraps carries into wraps, which only histograms with more than 65,535
// samples in one bucket allocate.
type Hist struct {
	counts   []uint16
	lo       int // bucket index of counts[0]
	n        int64
	sum      float64 // ns
	min, max time.Duration
	// wraps[b] is how many times bucket b's count wrapped: its count is
	// counts[b-lo] + wraps[b]<<16. It comes last, out of the 64 bytes
	// every sample touches.
	wraps map[int]uint32
}

// bucketFormula is the definition of a sample's bucket, floor(ln d / ln 1.01);
// bucketOf computes the same from a table.
func bucketFormula(d time.Duration) int {
	if d < 1 {
		d = 1
	}
	return int(math.Floor(math.Log(float64(d)) / logBase))
}

// The table splits each octave [2^e, 2^(e+1)) of durations from 2^minOctave
// ns (128 ns) to 2^maxOctave ns (4.9 hours) into 128 equal parts. A part is
// narrower (at most 1/128 of its start) than a bucket (1/100 of its start),
// so at most one bucket boundary falls in it: its entry holds the bucket of
// its first duration (high 16 bits) and the offset in the part where the
// next bucket starts (low 48 bits; the part's width if none does). Both are
// computed with bucketFormula, so the table gives the formula's bucket,
// floating-point rounding included (TestBucketTableMatchesFormula,
// FuzzBucketOf). Durations below 128 ns have a bucket each.
const (
	minOctave = 7
	maxOctave = 44
	partBits  = 7
)

var (
	smallBuckets [1 << minOctave]int16
	partBuckets  [(maxOctave - minOctave) << partBits]uint64
)

const cutMask = 1<<48 - 1

func init() { fillBucketTable() }

// fillBucketTable computes the table (about 10,000 logarithms).
func fillBucketTable() {
	for d := range smallBuckets {
		smallBuckets[d] = int16(bucketFormula(time.Duration(d)))
	}
	for e := minOctave; e < maxOctave; e++ {
		w := time.Duration(1) << (e - partBits)
		for j := range time.Duration(1 << partBits) {
			a := time.Duration(1)<<e + j*w
			k := bucketFormula(a)
			cut := w
			if bucketFormula(a+w-1) != k {
				cut = firstAbove(a, w, k) - a
			}
			partBuckets[(e-minOctave)<<partBits|int(j)] = uint64(k)<<48 | uint64(cut)
		}
	}
}

// firstAbove returns the first duration in [a, a+w) whose bucket is above k,
// given that a's bucket is k and a+w-1's is not. The boundary's real value,
// exp((k+1) ln 1.01), is within a few nanoseconds of it below 2^44 ns, so a
// few steps from there usually find it; a bisection makes sure.
func firstAbove(a, w time.Duration, k int) time.Duration {
	if g := time.Duration(math.Ceil(math.Exp(float64(k+1) * logBase))); g > a && g < a+w {
		for range 4 {
			switch {
			case bucketFormula(g) <= k:
				g++
			case bucketFormula(g-1) > k: // g-1 >= a, whose bucket is k
				g--
			default:
				return g
			}
		}
	}
	lo, hi := a, a+w-1 // bucket(lo) <= k < bucket(hi)
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if bucketFormula(m) <= k {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// bucketOf returns d's bucket, bucketFormula(d), without a logarithm for
// durations below 2^44 ns.
func bucketOf(d time.Duration) int {
	if d < 1<<minOctave {
		return int(smallBuckets[max(d, 1)])
	}
	if d >= 1<<maxOctave {
		return bucketFormula(d)
	}
	e := bits.Len64(uint64(d)) - 1
	sh := uint(e - partBits)
	p := partBuckets[(e-minOctave)<<partBits|int(d>>sh)&(1<<partBits-1)]
	k := int(p >> 48)
	if uint64(d)&(1<<sh-1) >= p&cutMask {
		k++
	}
	return k
}

// Add records one sample.
func (h *Hist) Add(d time.Duration) {
	b := bucketOf(d)
	i := b - h.lo
	if uint(i) >= uint(len(h.counts)) {
		h.grow(b)
		i = b - h.lo
	}
	if h.counts[i]++; h.counts[i] == 0 {
		h.wrap(b, 1)
	}
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
}

// Growth: a new histogram has histFirst buckets, histBelow of them below its
// first sample (a flow's first RTT sample is usually near its lowest); a
// sample outside the buckets extends them on its side by what it needs plus
// half the current length (at least histMargin), rounded up to the
// allocator's size class, so that a flow whose RTT creeps up bucket by
// bucket reallocates a few times, not once per bucket.
const (
	histFirst  = 32
	histBelow  = 4
	histMargin = 16
)

// Reserve makes an empty histogram keep its first buckets in buf (all of
// its capacity, when that is at least histFirst buckets) instead of an
// allocation of its own, so that a caller can keep them beside the state
// that adds the samples. Buckets, quantiles and means do not depend on
// where the counts are kept.
func (h *Hist) Reserve(buf []uint16) {
	if h.n == 0 && len(h.counts) == 0 && cap(buf) >= histFirst {
		h.counts = buf[:0]
	}
}

// grow extends the buckets to cover bucket b.
func (h *Hist) grow(b int) {
	if len(h.counts) == 0 {
		if cap(h.counts) >= histFirst { // Reserve's buffer
			h.counts, h.lo = h.counts[:cap(h.counts)], b-histBelow
			clear(h.counts)
			return
		}
		h.counts, h.lo = make([]uint16, histFirst), b-histBelow
		return
	}
	margin := max(histMargin, len(h.counts)/2)
	lo, hi := h.lo, h.lo+len(h.counts)
	if b < lo {
		lo = b - margin
	} else {
		hi = b + 1 + margin
	}
	nc := sizedCounts(hi - lo)
	if b < h.lo {
		lo = hi - len(nc)
	}
	copy(nc[h.lo-lo:], h.counts)
	h.counts, h.lo = nc, lo
}

// sizedCounts returns at least n zeroed counts: all that the allocation's
// size class holds.
func sizedCounts(n int) []uint16 {
	c := append([]uint16(nil), make([]uint16, n)...)
	return c[:cap(c)]
}

// wrap carries c wraps of bucket b's 16-bit count.
func (h *Hist) wrap(b int, c uint32) {
	if h.wraps == nil {
		h.wraps = make(map[int]uint32)
	}
	h.wraps[b] += c
}

// count returns the number of samples in counts[i].
func (h *Hist) count(i int) uint64 {
	c := uint64(h.counts[i])
	if h.wraps != nil {
		c += uint64(h.wraps[h.lo+i]) << 16
	}
	return c
}

// Prefetch starts loading the histogram's buckets (up to eight cache lines:
// the range a flow's RTT usually spans) before a sample is added; it
// changes nothing.
func (h *Hist) Prefetch() {
	if len(h.counts) > 0 {
		prefetch.Lines(unsafe.Pointer(&h.counts[0]), min((len(h.counts)+31)/32, 8))
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
	for i := range h.counts {
		seen += int64(h.count(i))
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
	if len(h.counts) == 0 || lo < h.lo || hi > h.lo+len(h.counts) {
		nc := make([]uint16, hi-lo)
		if len(h.counts) > 0 {
			copy(nc[h.lo-lo:], h.counts)
		}
		h.counts, h.lo = nc, lo
	}
	for i := range other.counts {
		if c := other.count(i); c > 0 {
			b := other.lo + i
			sum := uint64(h.counts[b-h.lo]) + c
			h.counts[b-h.lo] = uint16(sum)
			if sum>>16 > 0 {
				h.wrap(b, uint32(sum>>16))
			}
		}
	}
	if h.n == 0 || other.min < h.min {
		h.min = other.min
	}
	h.max = max(h.max, other.max)
	h.n += other.n
	h.sum += other.sum
}
