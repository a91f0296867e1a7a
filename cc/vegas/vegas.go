// Package vegas implements TCP Vegas with the semantics of Linux
// net/ipv4/tcp_vegas.c (Brakmo and Peterson, "TCP Vegas: End to End
// Congestion Avoidance on a Global Internet", IEEE JSAC 13(8), 1995).
//
// Once per round trip Vegas compares the window with the window that would
// fill the path without queueing, cwnd*baseRTT/rtt, where baseRTT is the
// smallest RTT seen and rtt the smallest RTT of the round just ended. The
// difference, diff, estimates how many of its segments sit in queues. Below
// alpha it adds a segment, above beta it removes one, in between it holds;
// in slow start it leaves slow start once diff exceeds gamma. With fewer
// than three RTT samples in a round (likely all delayed ACKs) it behaves as
// Reno for that round. Losses are handled as Reno: ssthresh = cwnd/2.
//
// Rounds are counted on delivered bytes: a round ends when the newest
// segment an ACK delivers was sent after the round began
// (cc.RateSample.PriorDelivered >= the delivered count at the start of the
// round). Linux compares the ACK with snd_nxt at the start of the round
// (beg_snd_nxt), which is the same event: the ACK covers data sent after
// the round began.
package vegas

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "vegas".
var Spec = cc.Spec{
	Name: "vegas",
	Doc:  "TCP Vegas (Brakmo & Peterson 1995) with Linux tcp_vegas.c semantics",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (RFC 6928: 10)"},
		{Name: "alpha", Default: 2, Min: 0, Max: 1000, Unit: "segments", Doc: "add a segment per RTT while diff < alpha (Linux: 2)"},
		{Name: "beta", Default: 4, Min: 0, Max: 1000, Unit: "segments", Doc: "remove a segment per RTT while diff > beta (Linux: 4)"},
		{Name: "gamma", Default: 1, Min: 0, Max: 1000, Unit: "segments", Doc: "leave slow start once diff > gamma (Linux: 1)"},
		{Name: "linux_diff", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "0: diff = cwnd*(rtt-baseRTT)/rtt, the segments queued (Brakmo-Peterson, ns-3); 1: Linux's integer cwnd*(rtt-baseRTT)/baseRTT"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm = (*Vegas)(nil)
	_ cc.Inspector = (*Vegas)(nil)
	_ cc.Tunable   = (*Vegas)(nil)
)

// Vegas is the Vegas controller. Create it with New or through cc.New.
type Vegas struct {
	mss  units.Bytes
	reno *newreno.Reno // cwnd, ssthresh and the Reno behaviour Vegas falls back to

	alpha, beta, gamma float64 // segments
	linuxDiff          bool

	// Linux struct vegas.
	doingVegas         bool
	enablePending      bool          // re-enable on the next ACK (recovery ended)
	disorder           bool          // the last ACK reported Linux's Disorder state
	baseRTT            time.Duration // min RTT since the last (re)start; 0 = none
	minRTT             time.Duration // min RTT of the current round; 0 = none
	cntRTT             int           // RTT samples in the current round
	nextRoundDelivered units.Bytes   // delivered count when the round began

	rounds        int64       // once-per-RTT adjustments made
	lastDelivered units.Bytes // TotalDelivered of the last ACK
	inFlight      units.Bytes // last pipe the transport reported
	inRecovery    bool
	ssthreshSet   bool
	diff          float64 // last diff computed, segments
}

// New returns a Vegas controller; params holds every parameter of Spec
// (use Spec.Resolve to fill defaults).
func New(mss units.Bytes, params map[string]float64) *Vegas {
	v := &Vegas{
		mss: mss,
		// Linux tcp_vegas uses tcp_reno_ssthresh: halve on loss.
		reno:      newreno.New(mss, map[string]float64{"iw": params["iw"], "beta": 0.5}),
		alpha:     params["alpha"],
		beta:      params["beta"],
		gamma:     params["gamma"],
		linuxDiff: params["linux_diff"] != 0,
	}
	v.restart(0)
	return v
}

// restart is Linux tcp_vegas_init: forget baseRTT and begin a fresh round
// of samples. Linux calls it when the connection starts, on
// CA_EVENT_TX_START (a send with nothing in flight: after idle, and the
// retransmission after an RTO) and on CA_EVENT_CWND_RESTART, because the
// saved window and the congestion feedback are stale then.
func (v *Vegas) restart(delivered units.Bytes) {
	v.baseRTT = 0
	v.enable(delivered)
}

// enable is Linux vegas_enable: start taking Vegas samples with a new round
// that ends with the first ACK for data sent from now on.
func (v *Vegas) enable(delivered units.Bytes) {
	v.doingVegas = true
	v.enablePending = false
	v.nextRoundDelivered = delivered
	v.cntRTT = 0
	v.minRTT = 0
}

// OnPacketSent implements cc.Algorithm: a send with nothing else in flight
// restarts Vegas (Linux CA_EVENT_TX_START).
func (v *Vegas) OnPacketSent(_ clock.Time, bytes, inFlight units.Bytes, _ bool) {
	if inFlight <= bytes {
		// After a timeout the round already reaches past the data that was
		// outstanding (Linux's beg_snd_nxt is the old snd_nxt then).
		v.restart(max(v.lastDelivered, v.nextRoundDelivered))
	}
	v.inFlight = inFlight
}

// OnAck implements cc.Algorithm.
func (v *Vegas) OnAck(_ clock.Time, a *cc.Ack) {
	v.inFlight = a.InFlight
	v.lastDelivered = a.TotalDelivered
	// Linux tcp_vegas_pkts_acked runs on every ACK, in any state.
	if a.RTT > 0 {
		if v.baseRTT == 0 || a.RTT < v.baseRTT {
			v.baseRTT = a.RTT
		}
		if v.minRTT == 0 || a.RTT < v.minRTT {
			v.minRTT = a.RTT
		}
		v.cntRTT++
	}
	if v.enablePending {
		// Recovery ended (Linux: tcp_vegas_state(TCP_CA_Open), which runs
		// after pkts_acked on the same ACK).
		v.enable(a.TotalDelivered)
	}
	// Where the transport reports Linux's Disorder state (cc.Ack.Disorder),
	// tcp_vegas_state disables Vegas there and enables it, with a new
	// round, when the open state returns (after pkts_acked, as above).
	if a.Disorder {
		v.doingVegas, v.disorder = false, true
	} else if v.disorder {
		v.disorder = false
		if !v.inRecovery && !a.InLoss && !a.CWR {
			v.enable(a.TotalDelivered)
		}
	}
	// Linux calls cong_avoid outside fast recovery (in TCP_CA_Loss too,
	// where the transport also reports InRecovery), and only on an ACK
	// that acknowledges new data cumulatively where the transport says so
	// (cc.Ack.HoldWindow).
	if v.inRecovery || a.HoldWindow {
		return
	}
	if !v.doingVegas {
		v.renoCongAvoid(a)
		return
	}
	if a.Rate.PriorDelivered < v.nextRoundDelivered {
		if v.inSlowStart() && a.CwndLimited {
			v.reno.SlowStart(a.AckedBytes)
		}
		return
	}
	// The once-per-RTT adjustment; the next round ends with the first ACK
	// for data sent from now on.
	v.nextRoundDelivered = a.TotalDelivered
	v.rounds++
	if v.cntRTT <= 2 {
		// Linux: "If we only had 2 samples total, then that means we're
		// getting only 1 ACK per RTT, which means they're almost
		// certainly delayed ACKs": behave like Reno.
		v.renoCongAvoid(a)
	} else {
		v.adjust(a)
	}
	v.cntRTT = 0
	v.minRTT = 0
}

// adjust is the Vegas decision of Linux tcp_vegas_cong_avoid.
func (v *Vegas) adjust(a *cc.Ack) {
	cwnd := v.reno.CongestionWindow()
	rtt := v.minRTT
	// Linux: target_cwnd = cwnd*baseRTT/rtt, "the cwnd we should have, if
	// we weren't going too fast".
	target := units.Bytes(float64(cwnd) * float64(v.baseRTT) / float64(rtt))
	v.diff = Diff(float64(cwnd)/float64(v.mss), v.baseRTT, rtt, v.linuxDiff)
	switch {
	case v.diff > v.gamma && v.inSlowStart():
		// "Going too fast. Time to slow down and switch to congestion
		// avoidance": cwnd = actual rate * baseRTT, plus one segment for
		// the truncation (Linux adds 1 packet).
		if v.linuxDiff {
			target = units.Bytes(math.Floor(float64(target)/float64(v.mss))) * v.mss
		}
		v.reno.SetCwnd(min(cwnd, target+v.mss))
		v.setSsthresh(min(v.reno.Ssthresh(), v.reno.CongestionWindow()))
	case v.inSlowStart():
		if a.CwndLimited {
			v.reno.SlowStart(a.AckedBytes)
		}
	case v.diff > v.beta:
		// "The old window was too fast, so we slow down." Checked before
		// alpha, so with alpha > beta the window falls whenever diff >
		// beta (see SetParam).
		v.reno.SetCwnd(cwnd - v.mss)
		v.setSsthresh(min(v.reno.Ssthresh(), v.reno.CongestionWindow()))
	case v.diff < v.alpha:
		// "We don't have enough extra packets in the network, so speed
		// up." Only when the window limits sending (cc.Ack.CwndLimited);
		// Linux grows here regardless.
		if a.CwndLimited {
			v.reno.SetCwnd(cwnd + v.mss)
		}
	}
	// Linux: at least 2 segments, then ssthresh = tcp_current_ssthresh(),
	// max(ssthresh, 3/4 cwnd) outside cwnd reduction.
	if v.reno.CongestionWindow() < 2*v.mss {
		v.reno.SetCwnd(2 * v.mss)
	}
	if ss, w := v.reno.Ssthresh(), v.reno.CongestionWindow(); ss < w*3/4 {
		v.setSsthresh(w * 3 / 4)
	}
}

// Diff is Vegas's estimate of the segments this flow has queued, from a
// window of cwnd segments, the base RTT and the round's minimum RTT.
//
// The default is Brakmo and Peterson's Diff = (Expected - Actual)*BaseRTT =
// (cwnd/baseRTT - cwnd/rtt)*baseRTT = cwnd*(rtt-baseRTT)/rtt, which is what
// ns-3's TcpVegas computes and what a fluid model says is queued. With
// linux set, it is Linux's integer arithmetic, cwnd*(rtt-baseRTT)/baseRTT
// with cwnd in whole packets, truncated: larger by the factor rtt/baseRTT,
// so Linux holds fewer segments in queues for the same alpha and beta.
func Diff(cwnd float64, baseRTT, rtt time.Duration, linux bool) float64 {
	if linux {
		return math.Floor(math.Floor(cwnd) * float64(rtt-baseRTT) / float64(baseRTT))
	}
	return cwnd * float64(rtt-baseRTT) / float64(rtt)
}

// renoCongAvoid is Linux tcp_reno_cong_avoid.
func (v *Vegas) renoCongAvoid(a *cc.Ack) {
	if !a.CwndLimited {
		return
	}
	acked := v.reno.SlowStart(a.AckedBytes)
	if acked > 0 {
		v.reno.CongestionAvoidance(acked, v.reno.CongestionWindow())
	}
}

func (v *Vegas) inSlowStart() bool { return v.reno.CongestionWindow() < v.reno.Ssthresh() }

func (v *Vegas) setSsthresh(s units.Bytes) {
	v.reno.SetSsthresh(s)
	v.ssthreshSet = true
}

// OnCongestionEvent implements cc.Algorithm: Reno's halving (Linux
// tcp_reno_ssthresh, at least 2 segments) and no Vegas decisions until
// recovery ends (tcp_vegas_state disables Vegas outside TCP_CA_Open).
//
// An ECN echo reduces as a loss does (tcp_reno_ssthresh); a loss during
// that reduction makes no second one (cc.LossEvent.InCWR, which Reno's
// handles).
func (v *Vegas) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	v.reno.OnCongestionEvent(now, ev)
	v.ssthreshSet = true
	v.doingVegas = false
	v.enablePending = false
	v.inRecovery = true
}

// OnRecoveryEnd implements cc.Algorithm: back in TCP_CA_Open, Vegas is
// re-enabled with a fresh round at the next ACK.
func (v *Vegas) OnRecoveryEnd(clock.Time) {
	v.inRecovery = false
	v.enablePending = true
}

// OnRetransmissionTimeout implements cc.Algorithm: Reno's timeout (ssthresh
// = cwnd/2, cwnd = 1 segment; a timeout during fast recovery keeps
// recovery's ssthresh, as Linux tcp_enter_loss does while the recovery point
// is outstanding). In Linux the retransmission that follows is sent with
// nothing in flight, so CA_EVENT_TX_START re-initialises Vegas, forgetting
// baseRTT; this does the same here, with the first round ending only once
// the data outstanding at the timeout has been delivered (Linux: the ACK
// passes the snd_nxt of the timeout).
func (v *Vegas) OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes) {
	ss := v.reno.Ssthresh()
	v.reno.OnRetransmissionTimeout(now, inFlight)
	if v.inRecovery {
		v.reno.SetSsthresh(ss)
	}
	v.ssthreshSet = true
	v.inRecovery = false
	v.restart(v.lastDelivered + v.inFlight)
}

// CongestionWindow implements cc.Algorithm.
func (v *Vegas) CongestionWindow() units.Bytes { return v.reno.CongestionWindow() }

// PacingRate implements cc.Algorithm: Vegas does not pace.
func (v *Vegas) PacingRate() units.Bandwidth { return 0 }

// Ssthresh returns the slow-start threshold, bytes (very large before it is
// first set).
func (v *Vegas) Ssthresh() units.Bytes { return v.reno.Ssthresh() }

// Snapshot is Vegas's internal state (Linux struct tcpvegas_info and the
// last decision), for tests, probes and plots.
type Snapshot struct {
	// Enabled reports whether Vegas decisions are being made (false during
	// and just after loss recovery, when Reno rules apply).
	Enabled bool
	// BaseRTT is the smallest RTT since the last restart; 0 if none.
	BaseRTT time.Duration
	// MinRTT and Samples are the current round's minimum RTT and sample
	// count.
	MinRTT  time.Duration
	Samples int
	// Rounds counts the once-per-RTT adjustments made (Vegas or Reno).
	Rounds int64
	// Diff is the last computed diff, segments.
	Diff float64
	// Alpha, Beta and Gamma are the thresholds, segments.
	Alpha, Beta, Gamma float64
}

// Snapshot returns a copy of the internal state.
func (v *Vegas) Snapshot() Snapshot {
	return Snapshot{
		Enabled: v.doingVegas, BaseRTT: v.baseRTT, MinRTT: v.minRTT, Samples: v.cntRTT, Rounds: v.rounds,
		Diff: v.diff, Alpha: v.alpha, Beta: v.beta, Gamma: v.gamma,
	}
}

// State implements cc.Inspector.
func (v *Vegas) State() cc.State {
	st := cc.State{Cwnd: v.reno.CongestionWindow(), Mode: "congestion_avoidance"}
	if v.ssthreshSet {
		st.Ssthresh = v.reno.Ssthresh()
	}
	switch {
	case v.inRecovery:
		st.Mode = "recovery"
	case v.inSlowStart():
		st.Mode = "slow_start"
	}
	return st
}

// SetParam implements cc.Tunable; changes apply from the next round's
// decision. alpha > beta is accepted, as Linux accepts it: beta is tested
// first, so the window shrinks whenever diff > beta and grows whenever diff
// < alpha and diff <= beta, i.e. it oscillates around beta with no dead
// band. Rejecting it here would make a pair of updates order-dependent
// (raising both thresholds past the old beta would fail on alpha first);
// NSGA-II keeps alpha < beta with its own constraint. "iw" only matters
// before the first ACK.
func (v *Vegas) SetParam(name string, val float64) error {
	return cc.SetParamChecked(Spec, name, val, func(val float64) {
		switch name {
		case "iw":
			if v.lastDelivered == 0 { // newreno's SetParam resets cwnd
				_ = v.reno.SetParam("iw", val)
			}
		case "alpha":
			v.alpha = val
		case "beta":
			v.beta = val
		case "gamma":
			v.gamma = val
		case "linux_diff":
			v.linuxDiff = val != 0
		}
	})
}
