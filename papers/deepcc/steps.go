package deepcc

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/transport/tcp"
)

// stepCounters turns a sender's cumulative counters and its RTT samples
// into one decision step's measurements. The simulated environment (Env)
// and a live flow (LiveAgent) embed it, so the agent sees the same
// observation on either.
type stepCounters struct {
	// lastQ is the queueing-delay estimate: the latest step with RTT
	// samples' mean RTT minus the minimum RTT.
	lastQ     time.Duration
	rttSum    time.Duration
	rttN      int
	rttLatest time.Duration

	// The previous step's end and counters.
	lastT              clock.Time
	lastDeliv, lastSnt units.Bytes
	lastSegs, lastLost int64
}

// addRTT records an RTT sample of the current step.
func (c *stepCounters) addRTT(rtt time.Duration) {
	c.rttSum += rtt
	c.rttN++
	c.rttLatest = rtt
}

// baseline makes now and st's counters the start of the next step.
func (c *stepCounters) baseline(now clock.Time, st tcp.FlowState) {
	c.lastT = now
	c.lastDeliv, c.lastSnt, c.lastSegs, c.lastLost = st.Delivered, st.Stats.BytesSent, st.Stats.SegmentsSent, st.Stats.MarkedLost
}

// step closes the step ending at now with the sender's state st and
// minimum RTT minRTT, and updates the queueing-delay estimate.
func (c *stepCounters) step(now clock.Time, st tcp.FlowState, minRTT time.Duration) stepRaw {
	raw := stepRaw{
		dt:        now.Sub(c.lastT),
		delivered: st.Delivered - c.lastDeliv,
		sent:      st.Stats.BytesSent - c.lastSnt,
		segsSent:  st.Stats.SegmentsSent - c.lastSegs,
		segsLost:  st.Stats.MarkedLost - c.lastLost,
		minRTT:    minRTT,
		cwnd:      st.Cwnd,
		inflight:  st.InFlight,
	}
	c.baseline(now, st)
	if c.rttN > 0 {
		raw.rttMean = c.rttSum / time.Duration(c.rttN)
		raw.rttLatest = c.rttLatest
		// Queueing delay is RTT minus the minimum RTT (the paper's
		// definition, section II). A step without samples (an outage)
		// keeps the previous estimate.
		c.lastQ = max(raw.rttMean-raw.minRTT, 0)
	}
	c.rttSum, c.rttN = 0, 0
	return raw
}
