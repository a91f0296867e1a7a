package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// formulaBoundary returns the first duration in bucket k or above, by
// bisection on bucketFormula alone (not the table's search).
func formulaBoundary(k int) time.Duration {
	lo, hi := time.Duration(1), time.Duration(math.MaxInt64) // bucket(lo) < k <= bucket(hi)
	if bucketFormula(lo) >= k {
		return lo
	}
	for hi-lo > 1 {
		m := lo + (hi-lo)/2
		if bucketFormula(m) < k {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

func checkBucket(t *testing.T, d time.Duration) {
	t.Helper()
	if got, want := bucketOf(d), bucketFormula(d); got != want {
		t.Fatalf("bucketOf(%d) = %d, formula %d", d, got, want)
	}
}

// TestBucketOfMatchesFormula checks the table against the logarithm: every
// duration up to 2^21 ns, 1 to 3 ns either side of every bucket boundary up
// to 2^50 ns (found by bisection on the formula), both ends of every part of
// the table and both sides of its cut, and a million random durations,
// uniform in their logarithm up to 2^63 ns.
func TestBucketOfMatchesFormula(t *testing.T) {
	for d := time.Duration(-5); d <= 1<<21; d++ {
		checkBucket(t, d)
	}
	for k := 1; k <= bucketFormula(1<<50); k++ {
		b := formulaBoundary(k)
		for dd := time.Duration(-3); dd <= 3; dd++ {
			checkBucket(t, b+dd)
		}
	}
	for e := minOctave; e < maxOctave; e++ {
		w := time.Duration(1) << (e - partBits)
		for j := range time.Duration(1 << partBits) {
			a := time.Duration(1)<<e + j*w
			p := partBuckets[(e-minOctave)<<partBits|int(j)]
			cut := a + time.Duration(p&cutMask)
			for _, d := range []time.Duration{a, a + 1, a + w - 2, a + w - 1, cut - 1, cut, cut + 1} {
				checkBucket(t, d)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(19, 6))
	for range 1_000_000 {
		d := time.Duration(math.Exp(rnd.Float64() * math.Log(math.MaxInt64)))
		checkBucket(t, d)
		checkBucket(t, d+time.Duration(rnd.IntN(1000)))
	}
	for _, d := range []time.Duration{1<<maxOctave - 1, 1 << maxOctave, 1<<maxOctave + 1, math.MaxInt64, math.MinInt64} {
		checkBucket(t, d)
	}
}

func FuzzBucketOf(f *testing.F) {
	for _, d := range []int64{0, 1, 127, 128, 20_000_000, 1 << 44, math.MaxInt64, -1} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d int64) {
		checkBucket(t, time.Duration(d))
		// Mostly in the table's range, which random int64s seldom are.
		checkBucket(t, time.Duration(d&(1<<maxOctave-1)))
	})
}

// refHist is the histogram's definition with unbounded counts: a map from
// bucket to count.
type refHist struct {
	counts map[int]uint64
	n      int64
	min    time.Duration
	max    time.Duration
}

func (r *refHist) add(d time.Duration) {
	if r.counts == nil {
		r.counts = map[int]uint64{}
	}
	r.counts[bucketFormula(d)]++
	if r.n == 0 || d < r.min {
		r.min = d
	}
	r.max = max(r.max, d)
	r.n++
}

func (r *refHist) quantile(q float64) time.Duration {
	rank := uint64(math.Ceil(q * float64(r.n)))
	var seen uint64
	lo, hi := math.MaxInt, math.MinInt
	for b := range r.counts {
		lo, hi = min(lo, b), max(hi, b)
	}
	for b := lo; b <= hi; b++ {
		if seen += r.counts[b]; seen >= rank {
			v := time.Duration(math.Exp((float64(b) + 0.5) * logBase))
			return min(max(v, r.min), r.max)
		}
	}
	return r.max
}

func checkAgainstRef(t *testing.T, name string, h *Hist, r *refHist) {
	t.Helper()
	if h.Count() != r.n || h.Min() != r.min || h.Max() != r.max {
		t.Fatalf("%s: n/min/max %d/%v/%v, want %d/%v/%v", name, h.Count(), h.Min(), h.Max(), r.n, r.min, r.max)
	}
	for _, q := range []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 0.95, 0.99, 0.999} {
		if got, want := h.Quantile(q), r.quantile(q); got != want {
			t.Fatalf("%s: q=%g: %v, want %v", name, q, got, want)
		}
	}
	for i := range h.counts {
		if got, want := h.count(i), r.counts[h.lo+i]; got != want {
			t.Fatalf("%s: bucket %d holds %d, want %d", name, h.lo+i, got, want)
		}
	}
}

// TestHistCountsBeyond16Bits fills buckets past 65,535 samples (the 16-bit
// counts wrap into the overflow map) among sparse ones on both sides, and
// merges histograms whose sums wrap, against the unbounded reference.
func TestHistCountsBeyond16Bits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var a, b Hist
	var ra, rb, rall refHist
	for i := range 400_000 {
		var d time.Duration
		switch i % 4 {
		case 0, 1:
			d = 20*time.Millisecond + time.Duration(rnd.IntN(100_000)) // one or two buckets
		case 2:
			d = time.Duration(math.Exp(rnd.Float64() * 30))
		default:
			d = 30*time.Millisecond + time.Duration(rnd.IntN(200_000))
		}
		if i%3 == 0 {
			a.Add(d)
			ra.add(d)
		} else {
			b.Add(d)
			rb.add(d)
		}
		rall.add(d)
	}
	if b.wraps == nil {
		t.Fatal("no 16-bit count wrapped: the test does not cover the overflow")
	}
	checkAgainstRef(t, "a", &a, &ra)
	checkAgainstRef(t, "b", &b, &rb)
	var m Hist
	m.Merge(&a)
	m.Merge(&b)
	checkAgainstRef(t, "merged", &m, &rall)
	a.Merge(&b)
	checkAgainstRef(t, "a+b", &a, &rall)
}

// TestHistGrowth checks that an RTT creeping up one bucket at a time (a
// queue filling) reallocates the buckets a few times, not once per bucket,
// and ends within 1.5 times its span plus the allocator's rounding, and
// that samples below the first one extend the buckets downwards.
func TestHistGrowth(t *testing.T) {
	var h Hist
	var r refHist
	allocs := 0
	d := 20 * time.Millisecond
	for range 20 {
		h.Add(d)
		r.add(d)
	}
	for d < 50*time.Millisecond {
		before := &h.counts[0]
		h.Add(d)
		r.add(d)
		if &h.counts[0] != before {
			allocs++
		}
		d += d / 400
	}
	span := bucketOf(h.Max()) - bucketOf(h.Min()) + 1
	if allocs > 4 || len(h.counts) > span*3/2+histBelow+8 {
		t.Errorf("%d reallocations, %d buckets for a span of %d", allocs, len(h.counts), span)
	}
	for d := 20 * time.Millisecond; d > time.Millisecond; d -= d / 50 {
		h.Add(d)
		r.add(d)
	}
	checkAgainstRef(t, "up and down", &h, &r)
}

func BenchmarkBucketTable(b *testing.B) {
	for range b.N {
		fillBucketTable()
	}
}

// rttSamples are RTTs of a many-flow run: 20-50 ms.
func rttSamples() []time.Duration {
	rnd := rand.New(rand.NewPCG(1, 2))
	s := make([]time.Duration, 4096)
	for i := range s {
		s[i] = 20*time.Millisecond + time.Duration(rnd.IntN(30e6))
	}
	return s
}

// BenchmarkBucketOf times the table lookup against the formula it
// reproduces.
func BenchmarkBucketOf(b *testing.B) {
	s := rttSamples()
	for _, c := range []struct {
		name string
		f    func(time.Duration) int
	}{{"table", bucketOf}, {"formula", bucketFormula}} {
		b.Run(c.name, func(b *testing.B) {
			sum := 0
			for i := range b.N {
				sum += c.f(s[i&4095])
			}
			sink = sum
		})
	}
}

func BenchmarkHistAdd(b *testing.B) {
	s := rttSamples()
	var h Hist
	for i := range b.N {
		h.Add(s[i&4095])
	}
}

var sink int

// TestHistReserve: a histogram keeping its first buckets in a reserved
// buffer (dirty beforehand) gives the same counts, quantiles, minimum,
// maximum and mean as one that allocates, through growth beyond the buffer
// on both sides; a buffer under histFirst buckets is ignored.
func TestHistReserve(t *testing.T) {
	buf := make([]uint16, 104)
	for i := range buf {
		buf[i] = 0xffff
	}
	var h, plain Hist
	var r refHist
	h.Reserve(buf)
	samples := rttSamples()
	for i, d := range samples {
		if i == len(samples)/2 {
			d = 900 * time.Millisecond // far above the buffer's span
		}
		if i == len(samples)/2+1 {
			d = 2 * time.Millisecond // far below
		}
		h.Add(d)
		plain.Add(d)
		r.add(d)
		if i == 0 && &h.counts[0] != &buf[0] {
			t.Fatal("the first sample did not use the reserved buffer")
		}
	}
	checkAgainstRef(t, "reserved", &h, &r)
	checkAgainstRef(t, "plain", &plain, &r)
	if h.Mean() != plain.Mean() {
		t.Errorf("mean %v reserved, %v plain", h.Mean(), plain.Mean())
	}
	var small Hist
	small.Reserve(make([]uint16, histFirst-1))
	small.Add(time.Millisecond)
	if cap(small.counts) < histFirst {
		t.Errorf("a %d-bucket buffer was used", histFirst-1)
	}
}
