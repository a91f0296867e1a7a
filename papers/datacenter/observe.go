package datacenter

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc/bbr"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/transport/tcp"
)

// The observation pipeline shared by the simulator (Sim) and a live flow
// (LiveTuner): a flowMeter turns what a host reads of one controlled flow
// at the end of an interval into flowStats, aggregate reduces an agent's
// flows, and fillFrame writes the features. Only the sources differ: the
// simulator reads its receivers and its bottleneck, a live host its
// sender and the link's nominal rate.

// flowMeter holds one controlled flow's interval accumulators.
type flowMeter struct {
	rttSum   float64 // ns
	rttN     int
	rttMin   time.Duration
	lastGood units.Bytes
	lastRetx int64
	lastSegs int64
	lastRTOs int64
}

// onRTT records an RTT sample of the interval.
func (c *flowMeter) onRTT(rtt time.Duration) {
	c.rttSum += float64(rtt)
	if c.rttN == 0 || rtt < c.rttMin {
		c.rttMin = rtt
	}
	c.rttN++
}

// baseline makes the next interval's counts start from these totals.
func (c *flowMeter) baseline(good units.Bytes, st tcp.Stats) {
	c.lastGood, c.lastRetx, c.lastSegs, c.lastRTOs = good, st.Retransmissions, st.SegmentsSent, st.RTOs
}

// flowSample is what a host reads of a controlled flow at the end of an
// interval: cumulative counters and BBR's state.
type flowSample struct {
	// active: the flow ran during the interval.
	active bool
	// good is the payload delivered in order so far.
	good     units.Bytes
	sender   tcp.Stats
	inflight units.Bytes
	snap     bbr.Snapshot
}

// measure closes the interval ending at now: the flow's statistics over
// it, computed from x and the RTT samples seen since the last call, which
// it then forgets.
func (c *flowMeter) measure(now clock.Time, x flowSample, mss units.Bytes, tau time.Duration) flowStats {
	var s flowStats
	s.active = x.active
	s.goodput = x.good - c.lastGood
	s.retx = x.sender.Retransmissions - c.lastRetx
	s.segs = x.sender.SegmentsSent - c.lastSegs
	s.rto = x.sender.RTOs - c.lastRTOs
	c.baseline(x.good, x.sender)
	snap := x.snap
	s.rtprop = snap.MinRTT
	s.btlbw = snap.BtlBw
	s.pacingGain, s.cwndGain = snap.PacingGain, snap.CwndGain
	s.probeRTT = snap.Mode == bbr.ProbeRTT
	if s.rtprop > 0 {
		s.age = math.Min(10, now.Sub(snap.MinRTTStamp).Seconds())
		s.bdpSeg = float64(s.btlbw) / 8 * s.rtprop.Seconds() / float64(mss)
	}
	if s.bdpSeg > 0 {
		s.inflight = math.Log1p(float64(x.inflight) / (s.bdpSeg * float64(mss)))
	}
	if c.rttN > 0 && s.rtprop > 0 {
		s.hasRTT = true
		s.rttMean = time.Duration(c.rttSum / float64(c.rttN))
		rp := float64(s.rtprop)
		s.queue = math.Log1p(math.Max(0, float64(s.rttMean)-rp) / rp)
		s.stale = math.Log1p(math.Max(0, float64(c.rttMin)-rp) / rp)
		s.delayTerm = DelayTerm(s.rtprop, s.rttMean, tau)
	}
	c.rttSum, c.rttN, c.rttMin = 0, 0, 0
	return s
}

// linkSample is an interval's link-level view.
type linkSample struct {
	// payloadCap is the payload the bottleneck could have carried in the
	// interval, bytes.
	payloadCap float64
	// util is the reward's throughput term.
	util float64
	// activeBg counts background flows running at the end.
	activeBg int
	// lineRate is the link's nominal rate.
	lineRate units.Bandwidth
}

// utilization is the reward's throughput term: good payload bytes over
// what the link could carry, at most 1.
func utilization(good units.Bytes, payloadCap float64) float64 {
	if payloadCap <= 0 {
		return 0
	}
	return math.Min(1, float64(good)/payloadCap)
}

// partialReward is an agent's own reward given its flows' aggregate a and
// the team's delay term.
func partialReward(r RewardConfig, util float64, a agg, teamDelay float64) float64 {
	s := a.delayTerm
	if a.active == 0 {
		// No flow of this agent is running: its partial reward is the
		// team's delay term, so idling is neither punished nor rewarded.
		s = teamDelay
	}
	return r.Reward(util, s)
}

// fillFrame writes an agent's newest observation frame into v: its flows'
// aggregate a, all controlled flows' team, its parameters p and the link.
func fillFrame(v []float32, a, team agg, p Params, l linkSample) {
	clear(v)
	share := func(b units.Bytes) float32 {
		if l.payloadCap <= 0 {
			return 0
		}
		return float32(float64(b) / l.payloadCap)
	}
	v[FeatActive] = float32(a.active) / float32(max(a.n, 1))
	v[FeatGoodput] = share(a.goodput)
	v[FeatQueue] = float32(a.queue)
	v[FeatQueueMax] = float32(a.queueMax)
	v[FeatStale] = float32(a.stale)
	v[FeatRTprop] = float32(a.rtprop)
	v[FeatRTT] = float32(a.rtt)
	v[FeatRetx] = float32(frac(a.retx, a.segs))
	v[FeatRTO] = float32(math.Log1p(float64(a.rto)))
	v[FeatBDP] = float32(a.bdp)
	v[FeatBtlBw] = float32(float64(a.btlbw) / float64(l.lineRate))
	v[FeatInflight] = float32(a.inflight)
	v[FeatPacingGain] = float32(a.pacingGain)
	v[FeatCwndGain] = float32(a.cwndGain)
	v[FeatProbeRTT] = float32(a.probeRTT)
	v[FeatRTpropAge] = float32(a.age)
	v[FeatParamMinRTT] = float32(math.Log(p.MinRTTWindow/MinRTTWindowLo) / math.Log(100))
	v[FeatParamBw] = float32(math.Log(float64(p.BwWindowRounds)) / math.Log(100))
	v[FeatTeamActive] = float32(team.active) / float32(max(team.n, 1))
	v[FeatTeamGoodput] = share(team.goodput)
	v[FeatLinkGoodput] = float32(l.util)
	v[FeatTeamQueue] = float32(team.queue)
	v[FeatTeamRetx] = float32(frac(team.retx, team.segs))
	v[FeatTeamDelayTerm] = float32(team.delayTerm)
	v[FeatBackground] = float32(math.Log1p(float64(l.activeBg)))
}

// pushFrame shifts an agent's stacked observation by one frame and puts
// frame first (the newest).
func pushFrame(obs, frame []float32) {
	copy(obs[NumFeatures:], obs[:len(obs)-NumFeatures])
	copy(obs[:NumFeatures], frame)
}

// fillHistory copies the newest frame into every older one (the first
// observation of an episode).
func fillHistory(obs []float32) {
	for h := NumFeatures; h < len(obs); h += NumFeatures {
		copy(obs[h:h+NumFeatures], obs[:NumFeatures])
	}
}

// applyParams sets BBR's two windows to p.
func applyParams(b *bbr.BBR, p Params) error {
	if err := b.SetParam("min_rtt_window", p.MinRTTWindow); err != nil {
		return err
	}
	return b.SetParam("bw_window_rounds", float64(p.BwWindowRounds))
}

// ParamsFrom returns the BBR windows that controller parameters give (BBR's
// defaults for those not given).
func ParamsFrom(params map[string]float64) Params {
	p := DefaultParams
	if v, ok := params["min_rtt_window"]; ok {
		p.MinRTTWindow = v
	}
	if v, ok := params["bw_window_rounds"]; ok {
		p.BwWindowRounds = int(v)
	}
	return p
}
