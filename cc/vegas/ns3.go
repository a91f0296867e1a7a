package vegas

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// NS3Spec registers "vegas_ns3": TCP Vegas as ns-3.37's TcpVegas behaves
// (src/internet/model/tcp-vegas.cc with TcpSocketBase and TcpNewReno), so
// that studies run in ns-3, such as the Vegas NSGA-II paper's, can be
// reproduced with their simulator's quirks. It differs from "vegas"
// (Linux) in these ways, the first four parameters so their effects can
// be separated:
//
//   - srtt: the RTT Vegas sees is TcpSocketBase's m_lastRtt, the RFC 6298
//     smoothed RTT after each measurement, not the raw sample. The SYN's
//     sample initialises the estimator, and Vegas first sees it after the
//     first data sample has moved it by 1/8: that value is the base RTT
//     (the minimum), and each round's minimum is a minimum of a lagging
//     average.
//   - oldest: with timestamps (ns-3's default), a delayed ACK echoes the
//     timestamp of the first segment it covers, so the sample includes the
//     receiver's hold; cclab's transport times the newest segment. The
//     controller keeps the send times of its segments to time the oldest
//     newly acknowledged one, as ns-3 does.
//   - ms_timestamps: ns-3's timestamps count whole milliseconds, so each
//     sample (the handshake's too) is the difference of two truncated
//     clocks, and the estimator moves by RttMeanDeviation's integer shift.
//   - per_ack: ns-3's TcpNewReno grows per ACK, not per acknowledged
//     segment: one segment per ACK in slow start, max(1, MSS²/cwnd) bytes
//     per ACK in congestion avoidance, so delayed ACKs halve the growth.
//   - Integer arithmetic in segments: target = trunc(cwnd_segs ×
//     base/min), diff = cwnd_segs − target; no check that the window
//     limits sending before growing; on loss ssthresh = max(min(ssthresh,
//     cwnd − 1 MSS), 2 MSS) (TcpVegas::GetSsThresh), not half the window.
//
// With delayed ACKs the inflated, lagging RTT makes diff exceed alpha
// while nothing is queued, and the window stalls far below the path's BDP
// (4.95 Mbit/s of a clean 10 Mbit/s, 50 ms path). Where it stalls hangs on
// tens of microseconds, so scenarios pair it with ns-3's receiver and wire
// (transport quick_ack false, ack_first, header 54B, syn_options 4B,
// handshake_ack; bottleneck serialize_acks): with them it delivers ns-3's
// bytes exactly on bench/scenarios/vegas-1flow.yaml.
var NS3Spec = cc.Spec{
	Name: "vegas_ns3",
	Doc:  "TCP Vegas as ns-3.37's TcpVegas behaves (millisecond timestamps, smoothed-RTT input, per-ACK NewReno growth)",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window"},
		{Name: "alpha", Default: 2, Min: 0, Max: 1000, Integer: true, Unit: "segments", Doc: "add a segment per RTT while diff < alpha (ns-3: 2)"},
		{Name: "beta", Default: 4, Min: 0, Max: 1000, Integer: true, Unit: "segments", Doc: "remove a segment per RTT while diff > beta (ns-3: 4)"},
		{Name: "gamma", Default: 1, Min: 0, Max: 1000, Integer: true, Unit: "segments", Doc: "leave slow start once diff > gamma (ns-3: 1)"},
		{Name: "srtt", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1: feed Vegas the smoothed RTT, starting from the handshake's (ns-3); 0: the raw samples"},
		{Name: "oldest", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1: time the oldest segment an ACK covers (ns-3's timestamp echo); 0: the transport's sample"},
		{Name: "ms_timestamps", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1: RTT samples from millisecond timestamps, as ns-3's (both clocks truncated to the millisecond)"},
		{Name: "per_ack", Default: 1, Min: 0, Max: 1, Integer: true, Doc: "1: ns-3 NewReno growth per ACK; 0: per acknowledged segment"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return NewNS3(c.MSS, c.Params), nil },
}

func init() { cc.Register(NS3Spec) }

var (
	_ cc.Algorithm = (*NS3)(nil)
	_ cc.Inspector = (*NS3)(nil)
	_ cc.Tunable   = (*NS3)(nil)
)

// NS3 is the ns-3 TcpVegas controller. Create it with NewNS3 or cc.New.
type NS3 struct {
	mss            units.Bytes
	cwnd, ssthresh units.Bytes
	ssthreshSet    bool

	alpha, beta, gamma      int
	useSRTT, oldest, perAck bool
	msTS                    bool
	firstSent               clock.Time // first new segment: the handshake's end
	started                 bool

	baseRTT, minRTT time.Duration // 0 = none (ns-3: Time::Max)
	cntRTT          int
	doingVegas      bool
	begSndNxt       units.Bytes // bytes of new data sent when the cycle began
	sent            units.Bytes // new data sent so far
	srtt            time.Duration
	inRecovery      bool
	recover         units.Bytes // after a timeout: Vegas resumes once delivery passes this
	diff            int

	// sendTimes is a FIFO of the send times of new segments not yet
	// acknowledged, a ring buffer (grows to the largest window once).
	sendTimes  []clock.Time
	head, size int
}

// NewNS3 returns the controller; params holds every parameter of NS3Spec.
func NewNS3(mss units.Bytes, params map[string]float64) *NS3 {
	v := &NS3{mss: mss, ssthresh: units.Bytes(1) << 40, doingVegas: true,
		alpha: int(params["alpha"]), beta: int(params["beta"]), gamma: int(params["gamma"]),
		useSRTT: params["srtt"] != 0, oldest: params["oldest"] != 0, perAck: params["per_ack"] != 0, msTS: params["ms_timestamps"] != 0}
	v.cwnd = units.Bytes(params["iw"]) * mss
	return v
}

// OnPacketSent implements cc.Algorithm.
func (v *NS3) OnPacketSent(now clock.Time, bytes, _ units.Bytes, retransmission bool) {
	if retransmission {
		return
	}
	if !v.started {
		v.started, v.firstSent = true, now
	}
	v.sent += bytes
	if v.size == len(v.sendTimes) {
		grown := make([]clock.Time, max(64, 2*len(v.sendTimes)))
		for i := range v.size {
			grown[i] = v.sendTimes[(v.head+i)%len(v.sendTimes)]
		}
		v.sendTimes, v.head = grown, 0
	}
	v.sendTimes[(v.head+v.size)%len(v.sendTimes)] = now
	v.size++
}

// popSegments forgets the send times of n acknowledged segments and
// returns the oldest one's (0 if none was held).
func (v *NS3) popSegments(n int) clock.Time {
	var first clock.Time
	for i := range min(n, v.size) {
		t := v.sendTimes[v.head]
		if i == 0 {
			first = t
		}
		v.head = (v.head + 1) % len(v.sendTimes)
		v.size--
	}
	return first
}

// OnAck implements cc.Algorithm: TcpSocketBase::EstimateRtt, then
// TcpVegas::PktsAcked with the smoothed RTT (m_lastRtt) and IncreaseWindow.
func (v *NS3) OnAck(now clock.Time, a *cc.Ack) {
	segs := int((a.AckedBytes + v.mss - 1) / v.mss)
	first := v.popSegments(segs)
	if a.RTT > 0 {
		// The segment whose timestamp the ACK echoes: ns-3's receiver
		// echoes the first in-order segment since its last ACK, the
		// oldest one newly acknowledged; cclab's transport times the
		// newest.
		sentAt := now.Add(-a.RTT)
		if v.oldest && first > 0 && !a.InRecovery {
			sentAt = min(sentAt, first)
		}
		sample := now.Sub(sentAt)
		if v.msTS {
			// TcpOptionTS counts whole milliseconds of simulated time:
			// the sample is the difference of two truncated clocks, and
			// ns-3 skips a zero one.
			sample = msFloor(now) - msFloor(sentAt)
		}
		if v.srtt == 0 {
			// The SYN's sample initialises RttMeanDeviation: taken when
			// the SYN-ACK arrived (the first data segment left at once)
			// for a SYN sent the handshake's RTT earlier.
			v.srtt = v.handshakeRTT(a)
		}
		if sample > 0 {
			// RttMeanDeviation::IntegerUpdate: srtt += delta >> 3 on
			// nanoseconds (an arithmetic shift rounds toward -inf).
			v.srtt += time.Duration(int64(sample-v.srtt) >> 3)
		}
		if !v.useSRTT {
			v.record(sample)
		}
	}
	// TcpSocketBase calls PktsAcked with m_lastRtt for every ACK that
	// acknowledges data, whether or not it gave a sample.
	if v.useSRTT && v.srtt > 0 && segs > 0 {
		v.record(v.srtt)
	}
	if v.inRecovery {
		return
	}
	if !v.doingVegas && v.recover > 0 && a.TotalDelivered >= v.recover {
		v.recover = 0
		v.enable()
	}
	v.increaseWindow(max(segs, 1))
}

// handshakeRTT is the first RTT sample, the SYN's: the transport's
// handshake sample (the connection's minimum at the first ACK), read from
// millisecond timestamps if ns-3's are modelled.
func (v *NS3) handshakeRTT(a *cc.Ack) time.Duration {
	hs := a.MinRTT
	if hs <= 0 {
		hs = a.RTT
	}
	if !v.msTS || !v.started {
		return hs
	}
	if ms := msFloor(v.firstSent) - msFloor(v.firstSent.Add(-hs)); ms > 0 {
		return ms
	}
	return hs
}

// msFloor is t truncated to the millisecond, as TcpOptionTS::NowToTsValue.
func msFloor(t clock.Time) time.Duration {
	return time.Duration(t).Truncate(time.Millisecond)
}

// record is TcpVegas::PktsAcked.
func (v *NS3) record(rtt time.Duration) {
	if v.minRTT == 0 || rtt < v.minRTT {
		v.minRTT = rtt
	}
	if v.baseRTT == 0 || rtt < v.baseRTT {
		v.baseRTT = rtt
	}
	v.cntRTT++
}

// enable is TcpVegas::EnableVegas (entering CA_OPEN).
func (v *NS3) enable() {
	v.doingVegas = true
	v.begSndNxt = v.sent
	v.cntRTT = 0
	v.minRTT = 0
}

// increaseWindow is TcpVegas::IncreaseWindow.
func (v *NS3) increaseWindow(segs int) {
	if !v.doingVegas {
		v.renoIncrease(segs)
		return
	}
	delivered := v.sent - units.Bytes(v.size)*v.mss // cumulative ACK, in new-data bytes
	if delivered < v.begSndNxt {
		if v.cwnd < v.ssthresh {
			v.slowStart(segs)
		}
		return
	}
	// A Vegas cycle has finished.
	v.begSndNxt = v.sent
	if v.cntRTT <= 2 {
		v.renoIncrease(segs)
	} else {
		segCwnd := int(v.cwnd / v.mss)
		target := int(float64(segCwnd) * (v.baseRTT.Seconds() / v.minRTT.Seconds()))
		v.diff = segCwnd - target
		switch {
		case v.diff > v.gamma && v.cwnd < v.ssthresh:
			segCwnd = min(segCwnd, target+1)
			v.cwnd = units.Bytes(segCwnd) * v.mss
			v.setSsthresh(v.lossSsthresh())
		case v.cwnd < v.ssthresh:
			v.slowStart(segs)
		case v.diff > v.beta:
			segCwnd--
			v.cwnd = units.Bytes(segCwnd) * v.mss
			v.setSsthresh(v.lossSsthresh())
		case v.diff < v.alpha:
			segCwnd++
			v.cwnd = units.Bytes(segCwnd) * v.mss
		}
		v.setSsthresh(max(v.ssthresh, 3*v.cwnd/4))
	}
	v.cntRTT = 0
	v.minRTT = 0
}

// lossSsthresh is TcpVegas::GetSsThresh.
func (v *NS3) lossSsthresh() units.Bytes {
	return max(min(v.ssthresh, v.cwnd-v.mss), 2*v.mss)
}

func (v *NS3) setSsthresh(s units.Bytes) {
	v.ssthresh = s
	v.ssthreshSet = true
}

// slowStart is TcpNewReno::SlowStart: one segment per ACK (per_ack), or
// one per acknowledged segment.
func (v *NS3) slowStart(segs int) int {
	if segs < 1 {
		return 0
	}
	if v.perAck {
		v.cwnd += v.mss
		return segs - 1
	}
	n := min(segs, int((v.ssthresh-v.cwnd+v.mss-1)/v.mss))
	v.cwnd += units.Bytes(n) * v.mss
	return segs - n
}

// renoIncrease is TcpNewReno::IncreaseWindow.
func (v *NS3) renoIncrease(segs int) {
	if v.cwnd < v.ssthresh {
		segs = v.slowStart(segs)
	}
	if v.cwnd >= v.ssthresh && segs > 0 {
		if !v.perAck {
			v.cwnd += max(units.Bytes(int64(segs)*int64(v.mss)*int64(v.mss)/int64(v.cwnd)), 1)
			return
		}
		v.cwnd += max(v.mss*v.mss/v.cwnd, 1)
	}
}

// OnCongestionEvent implements cc.Algorithm: fast recovery with Vegas's
// ssthresh (one segment below the window) and Vegas off until recovery
// ends. A loss during an ECN reduction makes no second one
// (cc.LossEvent.InCWR).
func (v *NS3) OnCongestionEvent(_ clock.Time, ev *cc.LossEvent) {
	if ev != nil && ev.InCWR {
		v.doingVegas = false
		v.inRecovery = true
		return
	}
	v.setSsthresh(v.lossSsthresh())
	v.cwnd = v.ssthresh
	v.doingVegas = false
	v.inRecovery = true
}

// OnRecoveryEnd implements cc.Algorithm: back in CA_OPEN.
func (v *NS3) OnRecoveryEnd(clock.Time) {
	v.inRecovery = false
	v.enable()
}

// OnRetransmissionTimeout implements cc.Algorithm: CA_LOSS, one segment,
// Vegas off until the data outstanding at the timeout is acknowledged.
func (v *NS3) OnRetransmissionTimeout(clock.Time, units.Bytes) {
	v.setSsthresh(v.lossSsthresh())
	v.cwnd = v.mss
	v.inRecovery = false
	v.doingVegas = false
	v.recover = v.sent
	// Every outstanding segment will be resent; their send times no
	// longer time anything.
	v.head, v.size = 0, 0
}

// CongestionWindow implements cc.Algorithm.
func (v *NS3) CongestionWindow() units.Bytes { return v.cwnd }

// PacingRate implements cc.Algorithm: no pacing.
func (v *NS3) PacingRate() units.Bandwidth { return 0 }

// NS3Snapshot is the controller's Vegas state.
type NS3Snapshot struct {
	BaseRTT, MinRTT, SRTT time.Duration
	Diff                  int
	Enabled               bool
}

// Snapshot returns the Vegas state.
func (v *NS3) Snapshot() NS3Snapshot {
	return NS3Snapshot{BaseRTT: v.baseRTT, MinRTT: v.minRTT, SRTT: v.srtt, Diff: v.diff, Enabled: v.doingVegas}
}

// State implements cc.Inspector.
func (v *NS3) State() cc.State {
	st := cc.State{Cwnd: v.cwnd, Mode: "congestion_avoidance"}
	if v.ssthreshSet {
		st.Ssthresh = v.ssthresh
	}
	switch {
	case v.inRecovery:
		st.Mode = "recovery"
	case v.cwnd < v.ssthresh:
		st.Mode = "slow_start"
	}
	return st
}

// SetParam implements cc.Tunable; the thresholds apply from the next
// cycle.
func (v *NS3) SetParam(name string, val float64) error {
	return cc.SetParamChecked(NS3Spec, name, val, func(val float64) {
		switch name {
		case "iw":
			if v.sent == 0 {
				v.cwnd = units.Bytes(val) * v.mss
			}
		case "alpha":
			v.alpha = int(val)
		case "beta":
			v.beta = int(val)
		case "gamma":
			v.gamma = int(val)
		case "srtt":
			v.useSRTT = val != 0
		case "oldest":
			v.oldest = val != 0
		case "ms_timestamps":
			v.msTS = val != 0
		case "per_ack":
			v.perAck = val != 0
		}
	})
}
