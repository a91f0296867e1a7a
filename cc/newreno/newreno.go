// Package newreno implements Reno/NewReno congestion avoidance as Linux does
// it (tcp_reno_cong_avoid), with byte counting: RFC 5681 slow start and
// congestion avoidance, RFC 6582 NewReno recovery (the transport holds the
// recovery point; this controller halves once per episode).
package newreno

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "newreno".
var Spec = cc.Spec{
	Name: "newreno",
	Doc:  "Reno/NewReno AIMD (RFC 5681, RFC 6582), Linux-style byte counting",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (RFC 6928: 10)"},
		{Name: "beta", Default: 0.5, Min: 0.05, Max: 0.95, Unit: "", Doc: "multiplicative decrease: ssthresh = beta*cwnd"},
		{Name: "linux", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1 = Linux tcp_reno's whole segments: ssthresh = beta*cwnd rounded down to a segment (tcp_reno_ssthresh's cwnd >> 1), so the window never holds part of one; 0 = RFC 5681's byte arithmetic, where an odd window halves to half a segment more"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm = (*Reno)(nil)
	_ cc.Inspector = (*Reno)(nil)
	_ cc.Tunable   = (*Reno)(nil)
)

// Reno is the NewReno controller. Its window arithmetic is exported as
// methods so that CUBIC and Vegas can reuse the Reno behaviour they fall back
// to (slow start, Reno-friendly increase).
type Reno struct {
	mss      units.Bytes
	beta     float64
	whole    bool // the "linux" parameter
	cwnd     units.Bytes
	ssthresh units.Bytes
	// acked accumulates bytes acknowledged in congestion avoidance; each
	// cwnd's worth grows the window by one MSS (RFC 5681 eq. 3, byte form).
	acked      units.Bytes
	inRecovery bool
	sawAck     bool // the initial window no longer applies
}

// New returns a NewReno controller; params holds "iw" and "beta".
func New(mss units.Bytes, params map[string]float64) *Reno {
	return &Reno{
		mss:      mss,
		beta:     params["beta"],
		whole:    params["linux"] != 0,
		cwnd:     units.Bytes(params["iw"]) * mss,
		ssthresh: infinite,
	}
}

// infinite is the initial ssthresh: slow start until the first loss.
const infinite units.Bytes = 1 << 62

// OnPacketSent implements cc.Algorithm.
func (r *Reno) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}

// OnAck implements cc.Algorithm.
func (r *Reno) OnAck(_ clock.Time, a *cc.Ack) {
	r.sawAck = true
	if a.InRecovery || a.CWR || !a.CwndLimited || a.HoldWindow {
		return
	}
	acked := r.SlowStart(a.AckedBytes)
	if acked > 0 {
		r.CongestionAvoidance(acked, r.cwnd)
	}
}

// SlowStart grows the window by the acknowledged bytes up to ssthresh and
// returns the bytes left over for congestion avoidance (Linux
// tcp_slow_start).
func (r *Reno) SlowStart(acked units.Bytes) units.Bytes {
	if r.cwnd >= r.ssthresh {
		return acked
	}
	grow := min(acked, r.ssthresh-r.cwnd)
	r.cwnd += grow
	return acked - grow
}

// CongestionAvoidance adds one MSS per w bytes acknowledged (Linux
// tcp_cong_avoid_ai with w in bytes instead of packets).
func (r *Reno) CongestionAvoidance(acked, w units.Bytes) {
	if w < r.mss {
		w = r.mss
	}
	r.acked += acked
	if r.acked >= w {
		n := r.acked / w
		r.acked -= n * w
		r.cwnd += n * r.mss
	}
}

// reduced is beta times the window, at least two segments (RFC 5681 eq. 4
// uses FlightSize/2; Linux uses cwnd, which is the same for a cwnd-limited
// sender and safer for an application-limited one). With "linux" it is in
// whole segments, rounded down, as Linux counts its window in packets:
// with windows of a few segments the half segment RFC 5681's bytes keep
// is a sixth of the window, and it slows the next increase (one segment
// per window acknowledged).
func (r *Reno) reduced() units.Bytes {
	if r.whole {
		return max(units.Bytes(float64(r.cwnd/r.mss)*r.beta)*r.mss, 2*r.mss)
	}
	return max(units.Bytes(float64(r.cwnd)*r.beta), 2*r.mss)
}

// OnCongestionEvent implements cc.Algorithm: ssthresh = reduced(), for
// a loss and for an ECN echo alike (Linux tcp_reno_ssthresh); a loss
// during an ECN reduction keeps it (cc.LossEvent.InCWR).
func (r *Reno) OnCongestionEvent(_ clock.Time, ev *cc.LossEvent) {
	r.inRecovery = true
	if ev != nil && ev.InCWR {
		return
	}
	r.ssthresh = r.reduced()
	r.cwnd = r.ssthresh
	r.acked = 0
}

// OnRecoveryEnd implements cc.Algorithm.
func (r *Reno) OnRecoveryEnd(clock.Time) {
	r.cwnd = r.ssthresh
	r.inRecovery = false
}

// OnRetransmissionTimeout implements cc.Algorithm: RFC 5681 eq. 4 and
// Linux tcp_enter_loss's window, what is still in flight plus one segment
// (RFC 5681's "LW = 1 segment" when everything outstanding was marked
// lost). A second timeout with the window already collapsed keeps the
// ssthresh of the first (Linux tcp_enter_loss does not re-halve while
// retransmits are outstanding).
func (r *Reno) OnRetransmissionTimeout(_ clock.Time, inFlight units.Bytes) {
	if r.cwnd > r.mss {
		r.ssthresh = r.reduced()
	}
	r.cwnd = max(inFlight, 0) + r.mss
	r.acked = 0
	r.inRecovery = false
}

// CongestionWindow implements cc.Algorithm.
func (r *Reno) CongestionWindow() units.Bytes { return r.cwnd }

// PacingRate implements cc.Algorithm: Reno does not pace.
func (r *Reno) PacingRate() units.Bandwidth { return 0 }

// Ssthresh returns the slow-start threshold.
func (r *Reno) Ssthresh() units.Bytes { return r.ssthresh }

// SetCwnd overrides the window; for controllers built on Reno.
func (r *Reno) SetCwnd(w units.Bytes) { r.cwnd = max(w, r.mss) }

// MarkReducing makes the controller hold its window, as after
// OnCongestionEvent, until OnRecoveryEnd; for controllers built on Reno
// that set the reduced window themselves.
func (r *Reno) MarkReducing() {
	r.acked = 0
	r.inRecovery = true
}

// SetSsthresh overrides the slow-start threshold; for controllers built on
// Reno.
func (r *Reno) SetSsthresh(s units.Bytes) { r.ssthresh = s }

// State implements cc.Inspector.
func (r *Reno) State() cc.State {
	st := cc.State{Cwnd: r.cwnd, Mode: "congestion_avoidance"}
	if r.ssthresh != infinite {
		st.Ssthresh = r.ssthresh
	}
	switch {
	case r.inRecovery:
		st.Mode = "recovery"
	case r.cwnd < r.ssthresh:
		st.Mode = "slow_start"
	}
	return st
}

// SetParam implements cc.Tunable; "iw" only matters before the first ACK.
func (r *Reno) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "beta":
			r.beta = v
		case "linux":
			r.whole = v != 0
		case "iw":
			if !r.sawAck {
				r.cwnd = units.Bytes(v) * r.mss
			}
		}
	})
}
