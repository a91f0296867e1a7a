package deepcc

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/units"
)

// The network-state features s_t of one step (section IV-B: "the input of
// agent includes not only network state but also measurement and goal";
// the paper lists no exact feature set, these are ours). Rates are relative
// to the bottleneck-bandwidth estimate and delays to the minimum RTT, so the
// same policy reads links of any speed; three absolute features (minimum
// RTT, queueing delay, bandwidth) let it map relative delays to the
// absolute delay scale of the reward.
const (
	// FeatDelivery is the step's delivery rate over the bandwidth
	// estimate, in [0, 1].
	FeatDelivery = iota
	// FeatSending is the step's sending rate (retransmissions included)
	// over the bandwidth estimate.
	FeatSending
	// FeatRTTRatio is the step's mean RTT over the minimum RTT, minus 1
	// (relative queueing delay), capped at 20.
	FeatRTTRatio
	// FeatLatestRTT is the latest RTT sample over the minimum RTT, minus 1,
	// capped at 20.
	FeatLatestRTT
	// FeatLoss is the step's loss rate: segments newly marked lost over
	// segments sent, in [0, 1].
	FeatLoss
	// FeatCwnd is log2(window / estimated BDP) at the end of the step.
	FeatCwnd
	// FeatInflight is the bytes in flight over the estimated BDP, capped
	// at 20.
	FeatInflight
	// FeatBwTrend is log2 of the bandwidth estimate over the previous
	// step's, in [-3, 3].
	FeatBwTrend
	// FeatDeliveryTrend is log2 of the delivery rate over the previous
	// step's (each plus 1% of the estimate), in [-3, 3].
	FeatDeliveryTrend
	// FeatMinRTT is the minimum RTT in units of DelayScale (100 ms).
	FeatMinRTT
	// FeatQDelay is the step's mean queueing delay in units of
	// DelayScale, capped at MaxDelayTerm.
	FeatQDelay
	// FeatBandwidth is log2 of the bandwidth estimate in Mbit/s.
	FeatBandwidth
	// FeatAction is the previous action, in [-1, 1].
	FeatAction

	// NumFeatures is the number of features per step.
	NumFeatures
)

// FeatureNames names the features for logs and documentation.
var FeatureNames = [NumFeatures]string{
	"delivery/bw", "sending/bw", "rtt/minrtt-1", "latest_rtt/minrtt-1", "loss",
	"log2(cwnd/bdp)", "inflight/bdp", "log2 bw trend", "log2 delivery trend",
	"minrtt/100ms", "qdelay/100ms", "log2(bw Mbit/s)", "previous action",
}

// History is the number of steps of features in an observation.
const History = 4

// ObservationSize is one observation: History steps of features, then the
// measurement vector m_t (3) and the goal g_t (3).
const ObservationSize = History*NumFeatures + 2*3

// Offsets of the measurement and goal in an observation.
const (
	measurementOffset = History * NumFeatures
	goalOffset        = measurementOffset + 3
)

// stepRaw is what the transport reported during one step.
type stepRaw struct {
	dt                 time.Duration
	delivered, sent    units.Bytes // payload bytes delivered (cumulative or SACKed) and sent
	segsSent, segsLost int64
	rttMean, rttLatest time.Duration // 0 when the step had no sample
	minRTT             time.Duration
	cwnd, inflight     units.Bytes
}

// rates converts byte counts over the step to bits/s.
func (r stepRaw) rates() (delivery, sending float64) {
	s := r.dt.Seconds()
	if s <= 0 {
		return 0, 0
	}
	return float64(r.delivered) * 8 / s, float64(r.sent) * 8 / s
}

// lossRate is the fraction of the step's segments marked lost.
func (r stepRaw) lossRate() float64 {
	if r.segsLost <= 0 {
		return 0
	}
	return math.Min(1, float64(r.segsLost)/math.Max(1, float64(r.segsSent)))
}

// featureInput gathers what the features need beyond the raw step.
type featureInput struct {
	bw, prevBw        float64 // bandwidth estimate after and before the step, bits/s
	prevDelivery      float64 // previous step's delivery rate, bits/s
	qdelay            time.Duration
	prevAction        float64
	bdp               units.Bytes // bw x minRTT, floored
	delivery, sending float64
}

// features computes one step's feature vector into dst (NumFeatures long).
func features(raw stepRaw, in featureInput, dst []float32) {
	bw := math.Max(in.bw, 1)
	min := float64(max(raw.minRTT, time.Microsecond))
	rel := func(d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return clamp(float64(d)/min-1, 0, 20)
	}
	log2 := func(x float64) float64 { return clamp(math.Log2(x), -3, 3) }
	bdp := math.Max(float64(in.bdp), 1)
	eps := 0.01 * bw
	dst[FeatDelivery] = float32(clamp(in.delivery/bw, 0, 4))
	dst[FeatSending] = float32(clamp(in.sending/bw, 0, 8))
	dst[FeatRTTRatio] = float32(rel(raw.rttMean))
	dst[FeatLatestRTT] = float32(rel(raw.rttLatest))
	dst[FeatLoss] = float32(raw.lossRate())
	dst[FeatCwnd] = float32(clamp(math.Log2(math.Max(float64(raw.cwnd), 1)/bdp), -8, 8))
	dst[FeatInflight] = float32(clamp(float64(raw.inflight)/bdp, 0, 20))
	dst[FeatBwTrend] = float32(log2(bw / math.Max(in.prevBw, 1)))
	dst[FeatDeliveryTrend] = float32(log2((in.delivery + eps) / (in.prevDelivery + eps)))
	dst[FeatMinRTT] = float32(float64(raw.minRTT) / float64(DelayScale))
	dst[FeatQDelay] = float32(clamp(float64(in.qdelay)/float64(DelayScale), 0, MaxDelayTerm))
	dst[FeatBandwidth] = float32(clamp(math.Log2(bw/1e6), -10, 10))
	dst[FeatAction] = float32(clamp(in.prevAction, -1, 1))
}

// maxFilter keeps the maximum of the last n values (BBR's windowed
// bottleneck-bandwidth filter, Cardwell et al. 2016, over steps rather than
// round trips; a step is about one RTT).
type maxFilter struct {
	buf  []float64
	next int
	full bool
}

func newMaxFilter(n int) *maxFilter { return &maxFilter{buf: make([]float64, n)} }

func (f *maxFilter) reset() {
	clear(f.buf)
	f.next, f.full = 0, false
}

func (f *maxFilter) add(x float64) {
	f.buf[f.next] = x
	f.next++
	if f.next == len(f.buf) {
		f.next, f.full = 0, true
	}
}

func (f *maxFilter) max() float64 {
	m := 0.0
	n := f.next
	if f.full {
		n = len(f.buf)
	}
	for _, x := range f.buf[:n] {
		m = math.Max(m, x)
	}
	return m
}
