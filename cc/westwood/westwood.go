// Package westwood implements TCP Westwood+ as Linux's tcp_westwood.c does
// (Mascolo et al., "TCP Westwood: bandwidth estimation for TCP", MobiCom
// 2001; Grieco and Mascolo, CCR 2004): Reno's growth, and after a loss a
// window sized to the delivery rate the sender measured times the minimum
// RTT instead of half the window, so that random (non-congestion) loss on
// a wireless or satellite link costs less of the window than Reno's halving.
//
// The estimator is Linux's: the bytes acknowledged over each window of at
// least one RTT (and at least 50 ms) are a sample, filtered twice by a
// 7/8 low-pass filter; RTTs and windows are counted in jiffies of the
// kernel's clock (parameter hz), so the estimate has the kernel's
// granularity. It sets the threshold (and the window) at the end of a fast
// recovery or an ECN reduction (CA_EVENT_COMPLETE_CWR), and the threshold
// at a retransmission timeout (CA_EVENT_LOSS); during a fast recovery the
// transport's PRR reduces towards Reno's half, as Linux's does.
package westwood

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "westwood".
var Spec = cc.Spec{
	Name: "westwood",
	Doc:  "TCP Westwood+ (Mascolo et al. 2001) as Linux tcp_westwood.c: Reno growth; after a loss the window is the measured bandwidth times the minimum RTT",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (RFC 6928: 10)"},
		{Name: "hz", Default: 250, Min: 100, Max: 1000, Integer: true, Unit: "1/s", Doc: "the kernel's CONFIG_HZ: the estimator counts RTTs and its windows in jiffies (250 on Debian; its shortest window is HZ/20 jiffies, 50 ms at 1000)"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm   = (*Westwood)(nil)
	_ cc.Inspector   = (*Westwood)(nil)
	_ cc.Tunable     = (*Westwood)(nil)
	_ cc.Establisher = (*Westwood)(nil)
)

// initRTT is TCP_WESTWOOD_INIT_RTT, 20 s: no window closes before the
// first RTT sample.
const initRTT = 20 * time.Second

// Westwood is the Westwood+ controller.
type Westwood struct {
	reno *newreno.Reno
	mss  units.Bytes
	hz   int64

	// The estimator, in Linux's units: bytes, jiffies, bytes per jiffy.
	bwNsEst, bwEst int64
	winStart       int64 // rtt_win_sx
	bk             int64 // bytes acknowledged in the current window
	rtt, rttMin    int64
	resetRTTMin    bool
	firstAck       bool // the next ACK is the connection's first (its bytes are not counted)
	started        bool // winStart is set (at the handshake or the first ACK)
}

// New returns a Westwood+ controller; params holds "iw" and "hz".
func New(mss units.Bytes, params map[string]float64) *Westwood {
	w := &Westwood{
		// Linux's Reno arithmetic: whole segments (tcp_reno_ssthresh).
		reno:        newreno.New(mss, map[string]float64{"iw": params["iw"], "beta": 0.5, "linux": 1}),
		mss:         mss,
		hz:          int64(params["hz"]),
		resetRTTMin: true,
		firstAck:    true,
	}
	w.rtt = w.usecsToJiffies(initRTT)
	w.rttMin = w.rtt
	return w
}

func (w *Westwood) jiffies(now clock.Time) int64 { return cc.HZ(w.hz).Jiffies(now) }

func (w *Westwood) usecsToJiffies(d time.Duration) int64 { return cc.HZ(w.hz).FromDuration(d) }

// OnEstablished implements cc.Establisher: Linux's tcp_westwood_init
// starts the first window when the connection is established.
func (w *Westwood) OnEstablished(now clock.Time, _, _ time.Duration) {
	w.winStart = w.jiffies(now)
	w.started = true
}

// OnPacketSent implements cc.Algorithm.
func (w *Westwood) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}

// OnAck implements cc.Algorithm. Linux 6.18 hands the estimator each
// ACK's RTT sample (pkts_acked) and then the ACK (in_ack_event), before
// Reno's growth; a trace of the kernel's own calls shows that order, so
// an ACK's window closes against its own RTT. Each ACK counts the bytes
// it delivered, cumulatively or by SACK (Linux counts a duplicate ACK as
// one segment and takes that back from the next cumulative ACK, which
// comes to the same bytes when each duplicate ACK SACKs one segment),
// but for the connection's first, whose bytes Linux does not count: its
// first_ack resynchronises the estimator's SND.UNA after the ACK moved
// it.
func (w *Westwood) OnAck(now clock.Time, a *cc.Ack) {
	j := w.jiffies(now)
	if !w.started {
		w.winStart, w.started = j, true
	}
	if a.RTT > 0 {
		w.rtt = w.usecsToJiffies(a.RTT)
	}
	w.updateWindow(j)
	if w.firstAck {
		w.firstAck = false
	} else {
		w.bk += int64(a.AckedBytes)
	}
	if w.resetRTTMin {
		w.rttMin, w.resetRTTMin = w.rtt, false
	} else {
		w.rttMin = min(w.rttMin, w.rtt)
	}
	w.reno.OnAck(now, a)
}

// updateWindow closes the estimator's window once it spans more than an
// RTT and more than HZ/20 jiffies (westwood_update_window).
func (w *Westwood) updateWindow(j int64) {
	delta := j - w.winStart
	if w.rtt == 0 || delta <= max(w.rtt, w.hz/20) {
		return
	}
	sample := w.bk / delta
	if w.bwNsEst == 0 && w.bwEst == 0 {
		w.bwNsEst, w.bwEst = sample, sample
	} else {
		w.bwNsEst = (7*w.bwNsEst + sample) >> 3
		w.bwEst = (7*w.bwEst + w.bwNsEst) >> 3
	}
	w.bk, w.winStart = 0, j
}

// bwRTTMin is the window Westwood+ falls back to: the bandwidth estimate
// times the minimum RTT, in whole segments, at least two
// (tcp_westwood_bw_rttmin).
func (w *Westwood) bwRTTMin() units.Bytes {
	return max(units.Bytes(w.bwEst*w.rttMin/int64(w.mss)), 2) * w.mss
}

// OnCongestionEvent implements cc.Algorithm: Reno's threshold, towards
// which the transport's PRR reduces the window during the recovery.
func (w *Westwood) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	w.reno.OnCongestionEvent(now, ev)
}

// OnRecoveryEnd implements cc.Algorithm: CA_EVENT_COMPLETE_CWR sets the
// window and the threshold to the bandwidth estimate times the minimum
// RTT, after a fast recovery and an ECN reduction alike.
func (w *Westwood) OnRecoveryEnd(now clock.Time) {
	w.reno.OnRecoveryEnd(now)
	b := w.bwRTTMin()
	w.reno.SetSsthresh(b)
	w.reno.SetCwnd(b)
}

// OnRetransmissionTimeout implements cc.Algorithm: Reno's window (the
// flight plus one segment) and, when the timeout sets a new threshold,
// CA_EVENT_LOSS makes it the bandwidth estimate times the minimum RTT and
// has the next ACK restart the minimum RTT.
func (w *Westwood) OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes) {
	fresh := w.reno.CongestionWindow() > w.mss // Reno's own test for a new threshold
	w.reno.OnRetransmissionTimeout(now, inFlight)
	if fresh {
		w.reno.SetSsthresh(w.bwRTTMin())
		w.resetRTTMin = true
	}
}

// UndoTimeout takes back a timeout the transport found spurious, as
// Linux's tcp_reno_undo_cwnd (Westwood's undo_cwnd).
func (w *Westwood) UndoTimeout(cwnd, ssthresh units.Bytes) { w.reno.UndoTimeout(cwnd, ssthresh) }

// CongestionWindow implements cc.Algorithm.
func (w *Westwood) CongestionWindow() units.Bytes { return w.reno.CongestionWindow() }

// PacingRate implements cc.Algorithm: Westwood+ does not pace.
func (w *Westwood) PacingRate() units.Bandwidth { return 0 }

// Ssthresh returns the slow-start threshold; the transport's PRR reduces
// towards it.
func (w *Westwood) Ssthresh() units.Bytes { return w.reno.Ssthresh() }

// Estimate returns the filtered bandwidth estimate and the minimum RTT,
// at the estimator's jiffy granularity.
func (w *Westwood) Estimate() (units.Bandwidth, time.Duration) {
	bw := units.Bandwidth(w.bwEst * 8 * w.hz)
	return bw, time.Duration(w.rttMin * int64(time.Second) / w.hz)
}

// State implements cc.Inspector (Reno's modes).
func (w *Westwood) State() cc.State { return w.reno.State() }

// SetParam implements cc.Tunable.
func (w *Westwood) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "iw":
			_ = w.reno.SetParam("iw", v)
		case "hz":
			// The estimator's counts are in jiffies of the old rate:
			// rescale them so that a change keeps its times.
			old := w.hz
			w.hz = int64(v)
			w.rtt = w.rtt * w.hz / old
			w.rttMin = w.rttMin * w.hz / old
			w.winStart = w.winStart * w.hz / old
			w.bwNsEst = w.bwNsEst * old / w.hz
			w.bwEst = w.bwEst * old / w.hz
		}
	})
}
