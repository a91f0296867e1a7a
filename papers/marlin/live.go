package marlin

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/transport/tcp"
)

// LiveObserver builds the MARLIN observation of a live flow (transport/udp
// on the real clock) exactly as Env builds it in the simulator: the 14
// features measured over each step from the sender's state and RTT
// samples, their 7 running statistics, stacked over History steps with
// zero padding (env.NewStack(core, History, true)). Only the sender's own
// measurements enter the observation; the reward's link target is not
// observable on a real path and is not computed.
type LiveObserver struct {
	feat  [NumFeatures]stats
	one   []float32
	stack []float32

	lastT                  clock.Time
	lastSent, lastGood     units.Bytes
	lastAcked              units.Bytes
	lastRetx, lastSegs     int64
	stepMinRTT, stepMaxRTT time.Duration
}

// NewLiveObserver returns an observer whose first step starts at start.
func NewLiveObserver(start clock.Time) *LiveObserver {
	return &LiveObserver{
		one:   make([]float32, NumFeatures*NumStats),
		stack: make([]float32, ObservationSize),
		lastT: start,
	}
}

// OnRTT records an RTT sample (hook it to the sender's OnRTT).
func (o *LiveObserver) OnRTT(rtt time.Duration) {
	if o.stepMinRTT == 0 || rtt < o.stepMinRTT {
		o.stepMinRTT = rtt
	}
	o.stepMaxRTT = max(o.stepMaxRTT, rtt)
}

// Observe closes the step ending at now and returns the stacked
// observation (owned by o, valid until the next call) and the step's raw
// feature values by name.
func (o *LiveObserver) Observe(now clock.Time, st tcp.FlowState) ([]float32, [NumFeatures]float64) {
	dt := now.Sub(o.lastT).Seconds()
	sent := st.Stats.BytesSent - o.lastSent
	good := units.Bytes(st.SndNxt) - o.lastGood
	acked := st.Stats.BytesAcked - o.lastAcked
	retx := st.Stats.Retransmissions - o.lastRetx
	segs := st.Stats.SegmentsSent - o.lastSegs
	o.lastT, o.lastSent, o.lastGood, o.lastAcked, o.lastRetx, o.lastSegs = now, st.Stats.BytesSent, units.Bytes(st.SndNxt), st.Stats.BytesAcked, st.Stats.Retransmissions, st.Stats.SegmentsSent
	minRTT, maxRTT := o.stepMinRTT, o.stepMaxRTT
	if minRTT == 0 {
		minRTT = st.MinRTT
	}
	if maxRTT == 0 {
		maxRTT = st.LatestRTT
	}
	o.stepMinRTT, o.stepMaxRTT = 0, 0

	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	kb := func(b units.Bytes) float64 { return float64(b) / 1000 }
	var v [NumFeatures]float64
	v[FeatCwnd] = kb(st.Cwnd)
	v[FeatSent] = kb(sent)
	v[FeatSentGood] = kb(good)
	v[FeatUnacked] = kb(units.Bytes(st.SndNxt - st.SndUna))
	v[FeatRetransmissions] = float64(retx)
	v[FeatLastRTT] = ms(st.LatestRTT)
	v[FeatMinRTT] = ms(minRTT)
	v[FeatMaxRTT] = ms(maxRTT)
	v[FeatSRTT] = ms(st.SRTT)
	v[FeatRTTVar] = ms(st.RTTVar)
	v[FeatAcked] = kb(acked)
	if dt > 0 {
		v[FeatThroughput] = kb(sent) / dt
		v[FeatGoodput] = kb(acked) / dt
	}
	v[FeatPackets] = float64(segs)
	for i := range NumFeatures {
		o.feat[i].add(v[i])
		o.feat[i].write(o.one[i*NumStats : (i+1)*NumStats])
	}
	d := len(o.one)
	copy(o.stack, o.stack[d:])
	copy(o.stack[(History-1)*d:], o.one)
	return o.stack, v
}

// LiveAckInterval is the Mockets-style SACK timer the MARLIN flow uses
// (experiment/network.DefaultSACKTimeout).
const LiveAckInterval = 20 * time.Millisecond

// WindowFor applies a MARLIN action to the current window as Env.Step
// does: scale by 1+a (a clipped to [-1, 1], NaN as 0), at least one MSS
// and at most WindowCap.
func WindowFor(a float32, cwnd, mss units.Bytes) units.Bytes {
	x := float64(a)
	if math.IsNaN(x) {
		x = 0
	}
	x = math.Max(-1, math.Min(1, x))
	w := units.Bytes(math.Ceil(float64(cwnd) * (1 + x)))
	return min(max(w, mss), WindowCap)
}
