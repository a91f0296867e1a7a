// Package dctcp implements DCTCP (RFC 8257) as Linux's tcp_dctcp.c does:
// the sender keeps alpha, a moving average of the fraction of its bytes
// that the receiver echoed as CE-marked, updated once per window of data,
// and on an ECN echo cuts its window by alpha/2 instead of half; a loss
// still halves it. Window growth is Reno's (tcp_reno_cong_avoid, whole
// segments). DCTCP needs ECN: the transport turns it on for this
// controller (cc.ECNObserver), with ECT on every data segment and the
// receiver echoing each segment's CE state exactly.
package dctcp

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// maxAlpha is Linux's DCTCP_MAX_ALPHA: alpha is kept in units of 1/1024.
const maxAlpha = 1024

// Spec registers "dctcp".
var Spec = cc.Spec{
	Name: "dctcp",
	Doc:  "DCTCP (RFC 8257) as Linux tcp_dctcp.c: window cut by alpha/2 on ECN echoes, Reno growth; needs ECN marking at the bottleneck (queue mark_threshold, or red/codel with ecn)",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1000, Integer: true, Unit: "segments", Doc: "initial window (RFC 6928: 10)"},
		{Name: "shift_g", Default: 4, Min: 0, Max: 10, Integer: true, Doc: "alpha's gain g = 1/2^shift_g (Linux dctcp_shift_g: 4, g = 1/16)"},
		{Name: "alpha_on_init", Default: maxAlpha, Min: 0, Max: maxAlpha, Integer: true, Unit: "1/1024", Doc: "alpha before the first update (Linux dctcp_alpha_on_init: 1024, i.e. 1: the first echo halves the window)"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) { return New(c.MSS, c.Params), nil },
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm   = (*DCTCP)(nil)
	_ cc.ECNObserver = (*DCTCP)(nil)
	_ cc.Inspector   = (*DCTCP)(nil)
	_ cc.Tunable     = (*DCTCP)(nil)
)

// DCTCP is the DCTCP controller.
type DCTCP struct {
	*newreno.Reno
	mss    units.Bytes
	shiftG uint
	alpha  uint32 // in 1/1024

	// The current observation window (Linux dctcp_update_alpha): bytes
	// acknowledged and those of them echoed as marked, since SND.UNA
	// passed nextSeq.
	priorUna           int64
	nextSeq            int64
	ackedTotal, ackedE uint64
	started            bool
}

// New returns a DCTCP controller; params holds "iw", "shift_g" and
// "alpha_on_init".
func New(mss units.Bytes, params map[string]float64) *DCTCP {
	return &DCTCP{
		// A loss halves the window in whole segments, as
		// dctcp_react_to_loss (cwnd >> 1, at least 2).
		Reno:   newreno.New(mss, map[string]float64{"iw": params["iw"], "beta": 0.5, "linux": 1}),
		mss:    mss,
		shiftG: uint(params["shift_g"]),
		alpha:  uint32(params["alpha_on_init"]),
	}
}

// Alpha returns the current estimate of the marked fraction, in [0, 1].
func (d *DCTCP) Alpha() float64 { return float64(d.alpha) / maxAlpha }

// OnAckECN implements cc.ECNObserver: Linux's dctcp_update_alpha, which
// counts the bytes SND.UNA advanced (a duplicate ACK as one segment), those
// of an ACK with ECE as marked, and once SND.UNA reaches the SND.NXT of
// the previous update sets alpha = (1 - g) alpha + g F.
func (d *DCTCP) OnAckECN(_ clock.Time, una, nxt int64, ece bool) {
	// dctcp_init's SND.UNA and SND.NXT, before the first data, are the
	// zero values: the first ACK ends the first observation window.
	d.started = true
	acked := uint64(max(una-d.priorUna, 0))
	if acked == 0 {
		acked = uint64(d.mss)
	}
	d.ackedTotal += acked
	d.priorUna = max(d.priorUna, una)
	if ece {
		d.ackedE += acked
	}
	if una < d.nextSeq {
		return
	}
	alpha := d.alpha
	// alpha -= min_not_zero(alpha, alpha >> g)
	if dec := alpha >> d.shiftG; dec != 0 {
		alpha -= dec
	} else {
		alpha = 0
	}
	if d.ackedE > 0 {
		f := (d.ackedE << (10 - d.shiftG)) / max(d.ackedTotal, 1)
		alpha = min(alpha+uint32(f), maxAlpha)
	}
	d.alpha = alpha
	d.nextSeq, d.ackedE, d.ackedTotal = nxt, 0, 0
}

// OnCongestionEvent implements cc.Algorithm: on an ECN echo the window
// becomes cwnd - cwnd alpha / 2 (dctcp_ssthresh, whole segments, at least
// two); on a loss Reno's halving (dctcp_react_to_loss), also after an
// echo's reduction.
func (d *DCTCP) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	if ev == nil || !ev.ECN {
		if ev != nil && ev.InCWR {
			// A loss found during the echo's reduction: Linux's
			// set_state(TCP_CA_Recovery) halves the window it has.
			ev2 := *ev
			ev2.InCWR = false
			d.Reno.OnCongestionEvent(now, &ev2)
			return
		}
		d.Reno.OnCongestionEvent(now, ev)
		return
	}
	cwnd := int64(d.CongestionWindow() / d.mss)
	s := units.Bytes(max(cwnd-(cwnd*int64(d.alpha))>>11, 2)) * d.mss
	d.SetSsthresh(s)
	d.SetCwnd(s)
	// Reno's recovery flag: no growth until the reduction ends.
	d.Reno.MarkReducing()
}

// SetParam implements cc.Tunable.
func (d *DCTCP) SetParam(name string, v float64) error {
	if name == "iw" {
		return d.Reno.SetParam(name, v)
	}
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "shift_g":
			d.shiftG = uint(v)
		case "alpha_on_init":
			if !d.started {
				d.alpha = uint32(v)
			}
		}
	})
}
