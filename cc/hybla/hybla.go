// Package hybla implements TCP Hybla as Linux's tcp_hybla.c does (Caini
// and Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
// networks", International Journal of Satellite Communications and
// Networking, 2004). Hybla makes a long-RTT flow's window grow as a
// reference flow's with RTT rtt0 (25 ms) would in time: with rho = RTT /
// rtt0, slow start adds 2^rho - 1 segments per ACK and congestion avoidance
// rho^2 / cwnd, so a satellite flow's throughput no longer falls with its
// RTT. Losses are Reno's (half the window), as Linux's.
//
// Linux's arithmetic is kept: rho is computed in eighths from the smoothed
// RTT whenever the smallest smoothed RTT seen falls, at least 1; 2^rho's
// fraction comes from Linux's table of eight values; growth is counted per
// ACK (not per acknowledged segment) in 1/128 segments, with the
// remainders carried; the window starts at rho segments once the handshake
// has measured the RTT (hybla_init) and is clamped at 65,535 segments.
// Outside the open state Linux's Hybla grows by Reno's rules; here that is
// a retransmission timeout's loss state (cc.Ack.InLoss) and, where the
// transport reports it (tcp.Config.LinuxWindowGrowth), Linux's Disorder
// state (cc.Ack.Disorder: SACKed, lost or retransmitted data outstanding
// in the open state), as fast recovery and ECN reductions do not grow the
// window at all. Without that report Hybla's own rule runs in Disorder.
package hybla

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "hybla".
var Spec = cc.Spec{
	Name: "hybla",
	Doc:  "TCP Hybla (Caini & Firrincieli 2004) as Linux tcp_hybla.c: window growth of a reference rtt0 flow for any RTT (satellite links); Reno's halving on loss",
	Params: []cc.ParamSpec{
		{Name: "rtt0", Default: 0.025, Min: 0.001, Max: 10, Unit: "s", Doc: "reference RTT: rho = SRTT / rtt0, at least 1 (Linux module parameter rtt0: 25 ms; ns-3's TcpHybla RRTT: 50 ms)"},
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window when the handshake gave no RTT sample; with one the window starts at rho segments (Linux hybla_init)"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm   = (*Hybla)(nil)
	_ cc.Inspector   = (*Hybla)(nil)
	_ cc.Tunable     = (*Hybla)(nil)
	_ cc.Establisher = (*Hybla)(nil)
)

// clamp is hybla_init's snd_cwnd_clamp, segments.
const clamp = 65535

// fractions is 2^(k/8) in 1/128ths (hybla_fraction).
var fractions = [8]int64{128, 139, 152, 165, 181, 197, 215, 234}

// Hybla is the Hybla controller. The window, its threshold, recovery,
// timeouts and undo are Reno's (Linux: tcp_reno_ssthresh,
// tcp_reno_undo_cwnd); Hybla changes how the window grows.
type Hybla struct {
	reno *newreno.Reno
	mss  units.Bytes
	rtt0 time.Duration

	// rho3ls is rho in eighths, rho its integer part, rho27ls rho^2 in
	// 1/128ths (hybla_recalc_param).
	rho, rho3ls, rho27ls int64
	minSRTT              time.Duration
	cents                int64 // snd_cwnd_cents: growth below a segment, 1/128ths
	cnt                  int64 // snd_cwnd_cnt, shared with Reno's rule as in Linux
	started              bool  // the handshake or an ACK has set the window
}

// New returns a Hybla controller; params holds "rtt0" and "iw".
func New(mss units.Bytes, params map[string]float64) *Hybla {
	return &Hybla{
		reno:    newreno.New(mss, map[string]float64{"iw": params["iw"], "beta": 0.5, "linux": 1}),
		mss:     mss,
		rtt0:    time.Duration(params["rtt0"] * float64(time.Second)),
		minSRTT: noSRTT,
	}
}

// noSRTT is the smallest SRTT before any: the first ACK's sets rho when
// the handshake gave no sample.
const noSRTT = time.Duration(math.MaxInt64)

// recalc sets rho from the smoothed RTT: Linux divides srtt_us (eight
// times the SRTT in microseconds) by rtt0 in microseconds, so rho3ls is
// rho in eighths, at least 8 (rho >= 1).
func (h *Hybla) recalc(srtt time.Duration) {
	srttUs8 := int64(srtt/time.Microsecond) * 8
	h.rho3ls = max(srttUs8/max(int64(h.rtt0/time.Microsecond), 1), 8)
	h.rho = h.rho3ls >> 3
	h.rho27ls = (h.rho3ls * h.rho3ls) << 1
}

// OnEstablished implements cc.Establisher: hybla_init computes rho from
// the handshake's SRTT and sets the window to rho segments.
func (h *Hybla) OnEstablished(_ clock.Time, srtt, _ time.Duration) {
	if srtt <= 0 {
		return
	}
	h.recalc(srtt)
	h.minSRTT = srtt
	h.started = true
	h.reno.SetCwnd(units.Bytes(min(h.rho, clamp)) * h.mss)
}

// OnPacketSent implements cc.Algorithm.
func (h *Hybla) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}

func (h *Hybla) segs(b units.Bytes) int64 { return int64(b / h.mss) }

// OnAck implements cc.Algorithm (hybla_cong_avoid, which Linux does not
// call in fast recovery or an ECN reduction).
func (h *Hybla) OnAck(now clock.Time, a *cc.Ack) {
	h.started = true
	if a.InRecovery || a.CWR || a.HoldWindow {
		return
	}
	if a.SRTT > 0 && a.SRTT < h.minSRTT {
		h.recalc(a.SRTT)
		h.minSRTT = a.SRTT
	}
	if !a.CwndLimited {
		return
	}
	cwnd := h.segs(h.reno.CongestionWindow())
	ssthresh := h.segs(h.reno.Ssthresh())
	if a.InLoss || a.Disorder {
		h.renoCongAvoid(cwnd, ssthresh, (int64(a.AckedBytes)+int64(h.mss)-1)/int64(h.mss))
		return
	}
	if h.rho == 0 {
		h.recalc(a.SRTT)
	}
	fraction := h.rho3ls - h.rho<<3
	slowStart := cwnd < ssthresh
	var increment int64
	if slowStart {
		increment = (int64(1)<<min(h.rho, 16))*fractions[fraction] - 128
	} else {
		increment = h.rho27ls / max(cwnd, 1)
		if increment < 128 {
			h.cnt++
		}
	}
	odd := increment % 128
	cwnd += increment >> 7
	h.cents += odd
	for h.cents >= 128 {
		cwnd++
		h.cents -= 128
		h.cnt = 0
	}
	if increment == 0 && odd == 0 && h.cnt >= cwnd {
		cwnd++
		h.cnt = 0
	}
	if slowStart {
		cwnd = min(cwnd, ssthresh)
	}
	h.reno.SetCwnd(units.Bytes(min(cwnd, clamp)) * h.mss)
}

// renoCongAvoid is Linux's tcp_reno_cong_avoid in segments, with the
// counter Hybla's rule shares (tcp_slow_start, tcp_cong_avoid_ai).
func (h *Hybla) renoCongAvoid(cwnd, ssthresh, acked int64) {
	if cwnd < ssthresh {
		next := min(cwnd+acked, ssthresh)
		acked -= next - cwnd
		cwnd = min(next, clamp)
		if acked <= 0 {
			h.reno.SetCwnd(units.Bytes(cwnd) * h.mss)
			return
		}
	}
	cwnd = cc.CongAvoidAI(cwnd, cwnd, acked, &h.cnt)
	h.reno.SetCwnd(units.Bytes(min(cwnd, clamp)) * h.mss)
}

// OnCongestionEvent implements cc.Algorithm: Reno's halving.
func (h *Hybla) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	h.reno.OnCongestionEvent(now, ev)
}

// OnRecoveryEnd implements cc.Algorithm.
func (h *Hybla) OnRecoveryEnd(now clock.Time) { h.reno.OnRecoveryEnd(now) }

// OnRetransmissionTimeout implements cc.Algorithm: Reno's, and
// tcp_enter_loss clears the window's growth counter.
func (h *Hybla) OnRetransmissionTimeout(now clock.Time, inFlight units.Bytes) {
	h.reno.OnRetransmissionTimeout(now, inFlight)
	h.cnt = 0
}

// UndoTimeout takes back a timeout the transport found spurious
// (tcp_reno_undo_cwnd).
func (h *Hybla) UndoTimeout(cwnd, ssthresh units.Bytes) { h.reno.UndoTimeout(cwnd, ssthresh) }

// CongestionWindow implements cc.Algorithm.
func (h *Hybla) CongestionWindow() units.Bytes { return h.reno.CongestionWindow() }

// PacingRate implements cc.Algorithm: Linux's Hybla does not pace.
func (h *Hybla) PacingRate() units.Bandwidth { return 0 }

// Ssthresh returns the slow-start threshold; the transport's PRR reduces
// towards it.
func (h *Hybla) Ssthresh() units.Bytes { return h.reno.Ssthresh() }

// Rho returns rho in eighths (Linux's rho_3ls): 8 is rho = 1.
func (h *Hybla) Rho() int64 { return h.rho3ls }

// State implements cc.Inspector (Reno's modes).
func (h *Hybla) State() cc.State { return h.reno.State() }

// SetParam implements cc.Tunable; "iw" only matters before the handshake
// or the first ACK,
// and "rtt0" recomputes rho from the smallest SRTT seen.
func (h *Hybla) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "iw":
			if !h.started {
				_ = h.reno.SetParam("iw", v)
			}
		case "rtt0":
			h.rtt0 = time.Duration(v * float64(time.Second))
			if h.rho3ls != 0 && h.minSRTT < noSRTT {
				h.recalc(h.minSRTT)
			}
		}
	})
}
