package deepcc

import (
	"math"
	"time"

	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// Measurement is DeepCC's measurement vector m_t = (throughput, -delay,
// -loss) (section IV-A): throughput is a reward, delay and loss penalties,
// "the 2nd-dimension and 3rd-dimension of measurement use the negative
// value". Each dimension is normalised to order one so that one goal
// vector means the same trade-off on every link (the paper says the
// objective uses "the relative instead of the absolute value"; it does not
// give the scales, these are ours):
//
//	m[0] = delivered payload in the step / (link capacity x step length)
//	m[1] = -min(queueing delay / DelayScale, MaxDelayTerm)
//	m[2] = -LossScale x loss rate
type Measurement [tuner.Dims]float64

// Normalisation of the measurement vector.
const (
	// DelayScale is the queueing delay worth one unit of penalty: 100 ms,
	// the order of the delay bounds of interactive applications (the
	// paper's example target is 70 ms).
	DelayScale = 100 * time.Millisecond
	// MaxDelayTerm caps the delay penalty (500 ms of queueing), so that a
	// link outage, which no action can shorten, does not swamp the
	// returns.
	MaxDelayTerm = 5.0
	// LossScale makes 10% loss cost as much as a full link's throughput
	// is worth: the paper's "high penalty of loss rate" keeps DeepCC's
	// loss near zero. The term grows linearly up to 100% loss (capping it
	// lower let a throughput-heavy goal accept 20-30% loss).
	LossScale = 10.0
	// MaxThroughputTerm caps the throughput term; utilisation above 1
	// only happens in a step where the link momentarily runs faster than
	// its mean (cellular bursts).
	MaxThroughputTerm = 4.0
)

// Measure normalises one step's raw measurement: utilisation (delivered
// payload over the payload the link could carry at its reference
// capacity), queueing delay and loss rate (a fraction).
func Measure(utilisation float64, qdelay time.Duration, lossRate float64) Measurement {
	u := clamp(utilisation, 0, MaxThroughputTerm)
	q := clamp(float64(qdelay)/float64(DelayScale), 0, MaxDelayTerm)
	l := LossScale * clamp(lossRate, 0, 1)
	return Measurement{u, -q, -l}
}

// Reward is DeepCC's multi-objective reward r_t = g_t · m_t (section IV-A).
func Reward(g Goal, m Measurement) float64 {
	return g[0]*m[0] + g[1]*m[1] + g[2]*m[2]
}

// clamp bounds x to [lo, hi]; NaN becomes lo.
func clamp(x, lo, hi float64) float64 {
	if math.IsNaN(x) || x < lo {
		return lo
	}
	return math.Min(x, hi)
}
