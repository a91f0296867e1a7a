package metrics

import (
	"math"
	"sort"
)

// Jain returns Jain's fairness index (sum x)^2 / (n sum x^2) of the given
// allocations: 1 when all are equal, 1/n when one takes everything. It is 1
// for an empty or all-zero input (nothing is unfairly shared).
func Jain(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(x)) * s2)
}

// RTI is the RTT Transition Impact of the MARLIN paper (equation 2):
// ln( (1/m) sum_i rtt_max_i / rtt_nom_i ) over the m link segments of a
// schedule. Segments with no RTT sample or no nominal RTT are skipped; it
// returns NaN if none is left, which callers report as undefined.
func RTI(maxRTT, nominal []float64) float64 {
	var sum float64
	m := 0
	for i := range maxRTT {
		if i >= len(nominal) || maxRTT[i] <= 0 || nominal[i] <= 0 {
			continue
		}
		sum += maxRTT[i] / nominal[i]
		m++
	}
	if m == 0 {
		return math.NaN()
	}
	return math.Log(sum / float64(m))
}

// Summary holds the descriptive statistics of a sample.
type Summary struct {
	N      int       `json:"n"`
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	CI95   float64   `json:"ci95"` // half-width of the 95% confidence interval of the mean
	Min    float64   `json:"min"`
	P50    float64   `json:"p50"`
	P95    float64   `json:"p95"`
	Max    float64   `json:"max"`
	NaNs   int       `json:"nans,omitempty"`
	Sorted []float64 `json:"-"`
}

// Summarize computes descriptive statistics, ignoring NaNs (counted in
// NaNs). The confidence interval uses Student's t with n-1 degrees of
// freedom; percentiles interpolate linearly between order statistics
// (type 7, as numpy and R default).
func Summarize(x []float64) Summary {
	v := make([]float64, 0, len(x))
	nan := 0
	for _, a := range x {
		if math.IsNaN(a) {
			nan++
			continue
		}
		v = append(v, a)
	}
	s := Summary{N: len(v), NaNs: nan}
	if len(v) == 0 {
		s.Mean, s.Std, s.CI95, s.Min, s.P50, s.P95, s.Max = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return s
	}
	sort.Float64s(v)
	s.Sorted = v
	var sum float64
	for _, a := range v {
		sum += a
	}
	s.Mean = sum / float64(len(v))
	if len(v) > 1 {
		var ss float64
		for _, a := range v {
			ss += (a - s.Mean) * (a - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(len(v)-1))
		s.CI95 = TQuantile975(len(v)-1) * s.Std / math.Sqrt(float64(len(v)))
	}
	s.Min, s.Max = v[0], v[len(v)-1]
	s.P50 = Percentile(v, 0.5)
	s.P95 = Percentile(v, 0.95)
	return s
}

// Percentile returns the q-quantile of sorted data by linear interpolation
// (type 7).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
