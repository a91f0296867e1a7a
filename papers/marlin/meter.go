package marlin

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/transport/tcp"
)

// stepMeter measures the 14 features over each step from a sender's state
// and its RTT samples, and keeps their running statistics. The simulated
// environment (Env) and a live flow (LiveObserver) share it, so a policy
// sees the same observation on either.
type stepMeter struct {
	feat [NumFeatures]stats

	// The previous step's end and counters.
	lastT                  clock.Time
	lastSent, lastGood     units.Bytes
	lastAcked              units.Bytes
	lastRetx, lastSegs     int64
	stepMinRTT, stepMaxRTT time.Duration
}

// reset starts an episode whose first step begins at start.
func (m *stepMeter) reset(start clock.Time) { *m = stepMeter{lastT: start} }

// onRTT records an RTT sample of the current step.
func (m *stepMeter) onRTT(rtt time.Duration) {
	if m.stepMinRTT == 0 || rtt < m.stepMinRTT {
		m.stepMinRTT = rtt
	}
	m.stepMaxRTT = max(m.stepMaxRTT, rtt)
}

// measure closes the step ending at now with the sender's state st: it
// returns the step's feature values and retransmissions, adds the values to
// the running statistics and writes those into out (NumFeatures×NumStats).
func (m *stepMeter) measure(now clock.Time, st tcp.FlowState, out []float32) (v [NumFeatures]float64, retx int64) {
	dt := now.Sub(m.lastT).Seconds()
	sent := st.Stats.BytesSent - m.lastSent
	good := units.Bytes(st.SndNxt) - m.lastGood
	acked := st.Stats.BytesAcked - m.lastAcked
	retx = st.Stats.Retransmissions - m.lastRetx
	segs := st.Stats.SegmentsSent - m.lastSegs
	m.lastT, m.lastSent, m.lastGood, m.lastAcked, m.lastRetx, m.lastSegs = now, st.Stats.BytesSent, units.Bytes(st.SndNxt), st.Stats.BytesAcked, st.Stats.Retransmissions, st.Stats.SegmentsSent

	minRTT, maxRTT := m.stepMinRTT, m.stepMaxRTT
	if minRTT == 0 {
		minRTT = st.MinRTT
	}
	if maxRTT == 0 {
		maxRTT = st.LatestRTT
	}
	m.stepMinRTT, m.stepMaxRTT = 0, 0

	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	kb := func(b units.Bytes) float64 { return float64(b) / 1000 }
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
		m.feat[i].add(v[i])
		m.feat[i].write(out[i*NumStats : (i+1)*NumStats])
	}
	return v, retx
}
