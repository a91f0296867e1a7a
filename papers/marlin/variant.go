package marlin

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/transport/tcp"
)

// Variants of the MARLIN formulation (EnvConfig.Variant). VariantPaper is
// the paper's (14 features x 7 statistics x 10 steps, equation 1, action
// w (1 + a)); VariantCompact is ours, not the paper's: a handful of
// normalised features over the last CompactHistory steps, the window set
// in bandwidth-delay-product units on a log2 scale (ActionBDP), and a
// reward that charges the evaluation's objective directly (time,
// retransmissions, queueing delay). It exists because the paper's 980-input
// [400, 300] agent cannot be trained to a useful budget on two shared
// cores; the compact agent's update is about 50 times cheaper.
const (
	VariantPaper   = "paper"
	VariantCompact = "compact"
)

// The compact variant's observation: CompactFeatures values per step,
// stacked over CompactHistory steps.
const (
	// CFRate is the delivery rate over the last rateSteps steps divided by
	// the capacity estimate (the largest such rate in the capacity window,
	// EnvConfig.CapacityWindow).
	CFRate = iota
	// CFCapacity is log2 of the capacity estimate in units of 32 KB/s
	// (the UHF link's rate), clipped to [-4, 4]: 0 on UHF, 2 on SATCOM.
	CFCapacity
	// CFQueue is log2 of the step's largest RTT sample over the windowed
	// minimum RTT (EnvConfig.MinRTTWindow), clipped to [0, 5].
	CFQueue
	// CFRetx is the step's retransmitted segments over its segments sent.
	CFRetx
	// CFWindow is log2 of the window over the BDP estimate, clipped to
	// [-5, 5].
	CFWindow
	// CFInFlight is log2 of the unacknowledged bytes over the BDP
	// estimate, clipped to [-5, 5].
	CFInFlight
	// CFElapsed is the time since the start over 20 s, clipped to 6.
	CFElapsed
	// CFLeft is the payload not yet delivered over 1 MB (0 for a bulk
	// flow).
	CFLeft

	// CompactFeatures is the number of compact features per step.
	CompactFeatures
)

// CFMinRTT follows the compact features when EnvConfig.RTTFeature is
// set: log2 of the windowed minimum RTT (the BDP estimate's) over
// rttUnit, clipped to [-4, 4]: 0 on an idle UHF path, 2 on SATCOM, -4
// before the first RTT sample (the handshake's included). The
// other features are ratios that a standing queue leaves unchanged: on a
// slow link the queue a window builds raises the minimum RTT, and so the
// BDP estimate, with the window, so one BDP estimate with no queue and
// two with one BDP queued look alike without it.
const CFMinRTT = CompactFeatures

// CompactFeaturesRTT is the number of compact features per step with
// EnvConfig.RTTFeature.
const CompactFeaturesRTT = CompactFeatures + 1

// MinRTTFeatureName names CFMinRTT.
const MinRTTFeatureName = "log2_min_rtt_250ms"

// rttUnit is CFMinRTT's unit: the UHF link's nominal RTT.
const rttUnit = 250 * time.Millisecond

// CompactFeatureNames names the compact features.
var CompactFeatureNames = [CompactFeatures]string{
	"rate_over_capacity", "log2_capacity_32KBps", "log2_rtt_over_min", "retx_fraction",
	"log2_window_bdp", "log2_inflight_bdp", "elapsed_20s", "left_MB",
}

const (
	// CompactHistory is the number of stacked steps in a compact
	// observation (400 ms: enough to see a trend, and the network's input
	// stays at 32 values).
	CompactHistory = 4
	// CompactObservationSize is one compact observation.
	CompactObservationSize = CompactFeatures * CompactHistory

	// rateSteps is the delivery-rate window (500 ms: half a SATCOM RTT,
	// five UHF RTTs; a single 100-ms step sees SACK bursts).
	rateSteps = 5
	// DefaultCapacityWindow is the capacity estimate's max-filter window
	// (EnvConfig.CapacityWindow) unless a policy was trained with another.
	DefaultCapacityWindow = 2 * time.Second
	// DefaultMinRTTWindow is the minimum-RTT filter window
	// (EnvConfig.MinRTTWindow): long enough to see the path drained at
	// least once on SATCOM, short enough to follow a switch to a longer
	// path.
	DefaultMinRTTWindow = 5 * time.Second
	// MaxFilterWindow bounds both filter windows (the meter's rings are
	// fixed arrays, so a step allocates nothing).
	MaxFilterWindow = 10 * time.Second
	maxFilterSteps  = int(MaxFilterWindow / StepInterval)
	// capacityUnit is the unit of CFCapacity.
	capacityUnit = 32_000.0

	// DefaultBDPSpan is ActionBDP's span (EnvConfig.BDPSpan): the window is
	// the BDP estimate times 2^(2a), a quarter to four estimates.
	DefaultBDPSpan = 2.0
	// MaxBDPSpan bounds EnvConfig.BDPSpan (2^8 = 256 estimates either way
	// is beyond any window between one segment and the paper's
	// WindowCap).
	MaxBDPSpan = 8.0
)

// ValidBDPSpan reports whether x may be ActionBDP's span
// (EnvConfig.BDPSpan): from 1 (half to twice the estimate) to MaxBDPSpan.
func ValidBDPSpan(x float64) bool { return x >= 1 && x <= MaxBDPSpan }

// Compact reward constants (CompactReward). The evaluation's objective is
// transfer time first, then retransmissions and the RTT Transition Impact;
// the reward prices each in seconds of transfer time.
const (
	// RefRate is the delivery rate, bytes/s, whose shaping bonus cancels
	// the time cost: about the ideal sender's mean rate on satcom-uhf
	// (600 KB in 11.8 s).
	RefRate = 50_000.0
	// RetxCost is the cost of one retransmitted segment, in seconds (50
	// retransmissions cost as much as a second of transfer time).
	RetxCost = 0.02
	// QueueCost is the cost per second of RTT inflation by one nominal RTT
	// (RTT twice the nominal for one second costs 0.2 s).
	QueueCost = 0.2
	// maxInflation bounds the queueing term (a UHF queue of 100 packets
	// inflates the 250 ms RTT about 19 times).
	maxInflation = 10
)

// CompactReward is the compact variant's reward for one step of dt
// seconds in which delivered payload bytes reached the receiver, retx
// segments were retransmitted and the largest RTT was inflation times the
// link's nominal RTT:
//
//	r = -dt + delivered/RefRate - RetxCost retx - QueueCost dt min(max(inflation-1, 0), 10)
//
// Over a transfer of B bytes that ends after T seconds the first two terms
// sum to B/RefRate - T, so the return is, up to a constant, minus the
// transfer time minus the priced retransmissions and queueing: the
// delivered term is a shaping potential (bytes left / RefRate) that gives
// credit as data arrives instead of only at the end, and it does not move
// the optimum (exactly so without discounting). Episodes terminate when
// the transfer completes, which stops the time cost.
func CompactReward(dt, delivered float64, retx int64, inflation float64) float64 {
	return compactReward(dt, delivered, retx, inflation, QueueCost, RefRate)
}

// compactReward is CompactReward with the queueing weight qc in place of
// QueueCost (TrainConfig.QueueCost) and delivered bytes credited at ref
// bytes/s in place of RefRate (TrainConfig.LinkShaping: the current
// link's rate). With ref the link's rate the first two terms are minus
// the part of the step the link was not used for the transfer, so a
// learner that looks a few seconds ahead, as SAC with a discount of 0.95
// at 100-ms steps does, is paid for throughput on a slow link as much as
// on a fast one; with a fixed ref below a slow link's rate every step on
// it costs time whatever the window, and what finishing sooner is worth
// lies beyond that horizon. Over a transfer the two terms then sum to
// minus its time beyond what each byte needs at the rate of the link it
// crossed, so the optimum is unchanged: a transfer that ends after the
// link changes at ts from rate C1 to C2, having delivered b1 of its B
// bytes by then and used the second link at a fraction u of its rate,
// scores -(ts - b1/C1) - (B - b1)(1/u - 1)/C2, higher the more it
// delivers early and the better it uses the slow link.
func compactReward(dt, delivered float64, retx int64, inflation, qc, ref float64) float64 {
	q := math.Min(math.Max(inflation-1, 0), maxInflation)
	return -dt + delivered/ref - RetxCost*float64(retx) - qc*dt*q
}

// compactMeter measures the compact features from a sender's state and RTT
// samples. All windows are fixed-size rings: no allocation per step.
type compactMeter struct {
	start, lastT     clock.Time
	total            units.Bytes // transfer size; 0 for a bulk flow
	floor            units.Bytes // smallest BDP estimate (the initial window)
	lastDelivered    units.Bytes
	lastRetx, lastSg int64
	k                int // steps measured
	bwSteps          int // the capacity filter's window, steps
	rttSteps         int // the minimum-RTT filter's window, steps

	delivered [rateSteps]float64 // bytes delivered per step
	dts       [rateSteps]float64
	rates     [maxFilterSteps]float64
	minRTTs   [maxFilterSteps]time.Duration // per-step minimum sample, 0 if none

	stepMin, stepMax time.Duration
	bdp              units.Bytes // the latest BDP estimate
}

// compactStep is one step's raw measurements.
type compactStep struct {
	dt             float64 // seconds
	delivered      float64 // bytes
	rate, capacity float64 // bytes/s
	minRTT, maxRTT time.Duration
	retx, segs     int64
	bdp            units.Bytes
}

// reset starts a transfer of total bytes (0: bulk) at start, with the
// filters' windows in steps (validated by NewEnv).
func (m *compactMeter) reset(start clock.Time, total, floor units.Bytes, bwSteps, rttSteps int) {
	*m = compactMeter{start: start, lastT: start, total: total, floor: floor, bdp: floor, bwSteps: bwSteps, rttSteps: rttSteps}
}

func (m *compactMeter) onRTT(rtt time.Duration) {
	if m.stepMin == 0 || rtt < m.stepMin {
		m.stepMin = rtt
	}
	m.stepMax = max(m.stepMax, rtt)
}

// measure closes the step ending at now and writes the CompactFeatures
// values into out.
func (m *compactMeter) measure(now clock.Time, st tcp.FlowState, out []float32) compactStep {
	var s compactStep
	s.dt = now.Sub(m.lastT).Seconds()
	s.delivered = float64(st.Delivered - m.lastDelivered)
	s.retx = st.Stats.Retransmissions - m.lastRetx
	s.segs = st.Stats.SegmentsSent - m.lastSg
	m.lastT, m.lastDelivered, m.lastRetx, m.lastSg = now, st.Delivered, st.Stats.Retransmissions, st.Stats.SegmentsSent

	i := m.k
	m.delivered[i%rateSteps], m.dts[i%rateSteps] = s.delivered, s.dt
	var sum, span float64
	for j := range min(m.k+1, rateSteps) {
		sum += m.delivered[j]
		span += m.dts[j]
	}
	if span > 0 {
		s.rate = sum / span
	}
	m.rates[i%m.bwSteps] = s.rate
	for j := range min(m.k+1, m.bwSteps) {
		s.capacity = math.Max(s.capacity, m.rates[j])
	}
	m.minRTTs[i%m.rttSteps] = m.stepMin
	for j := range min(m.k+1, m.rttSteps) {
		if r := m.minRTTs[j]; r > 0 && (s.minRTT == 0 || r < s.minRTT) {
			s.minRTT = r
		}
	}
	if s.minRTT == 0 {
		s.minRTT = st.MinRTT // the handshake's, before any data sample
	}
	s.maxRTT = m.stepMax
	if s.maxRTT == 0 {
		s.maxRTT = st.LatestRTT
	}
	m.stepMin, m.stepMax = 0, 0
	m.k++

	s.bdp = max(units.Bytes(s.capacity*s.minRTT.Seconds()), m.floor)
	m.bdp = s.bdp

	lg := func(x, lo, hi float64) float32 {
		if !(x > 0) {
			return float32(lo)
		}
		return float32(math.Min(math.Max(math.Log2(x), lo), hi))
	}
	out[CFRate] = 0
	if s.capacity > 0 {
		out[CFRate] = float32(s.rate / s.capacity)
	}
	out[CFCapacity] = lg(s.capacity/capacityUnit, -4, 4)
	out[CFQueue] = 0
	if s.minRTT > 0 && s.maxRTT > 0 {
		out[CFQueue] = lg(float64(s.maxRTT)/float64(s.minRTT), 0, 5)
	}
	out[CFRetx] = 0
	if s.segs > 0 {
		out[CFRetx] = float32(math.Min(float64(s.retx)/float64(s.segs), 1))
	}
	out[CFWindow] = lg(float64(st.Cwnd)/float64(s.bdp), -5, 5)
	out[CFInFlight] = lg(float64(st.SndNxt-st.SndUna)/float64(s.bdp), -5, 5)
	out[CFElapsed] = float32(math.Min(now.Sub(m.start).Seconds()/20, 6))
	if len(out) > CFMinRTT {
		out[CFMinRTT] = lg(float64(s.minRTT)/float64(rttUnit), -4, 4)
	}
	out[CFLeft] = 0
	if m.total > 0 {
		out[CFLeft] = float32(math.Max(float64(m.total-st.Delivered), 0) / 1e6)
	}
	return s
}

// BDPWindow applies an ActionBDP action: the window is the BDP estimate
// times 2^(span a), a clipped to [-1, 1] (with span 0, DefaultBDPSpan: a
// quarter to four times the estimate; NaN as 0), at least one MSS and at
// most WindowCap.
func BDPWindow(a float32, span float64, bdp, mss units.Bytes) units.Bytes {
	return bdpWindow(a, span, bdp, mss, WindowCap)
}

// bdpWindow is BDPWindow with the cap limit in place of WindowCap.
func bdpWindow(a float32, span float64, bdp, mss, limit units.Bytes) units.Bytes {
	x := float64(a)
	if math.IsNaN(x) {
		x = 0
	}
	if span == 0 {
		span = DefaultBDPSpan
	}
	x = math.Max(-1, math.Min(1, x))
	w := units.Bytes(math.Ceil(float64(bdp) * math.Exp2(span*x)))
	return min(max(w, mss), limit)
}

// PolicyVariant returns the formulation a policy was trained with
// (policies trained before the option are VariantPaper).
func PolicyVariant(p *policy.Policy) string {
	if v := p.Meta.Extra["variant"]; v != "" {
		return v
	}
	return VariantPaper
}

// historyFor is the number of stacked steps of a variant's observation.
func historyFor(variant string) int {
	if variant == VariantCompact {
		return CompactHistory
	}
	return History
}
