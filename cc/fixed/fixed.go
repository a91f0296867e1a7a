// Package fixed implements a Mockets-style aggressive sender: a congestion
// window that never shrinks on loss or timeout. Its size is a parameter and
// can be re-set at any time (by a link schedule or the MARLIN baseline, which
// matches it to the link's capacity before and after a transition).
package fixed

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "fixed".
var Spec = cc.Spec{
	Name: "fixed",
	Doc:  "fixed window that never shrinks on loss (Mockets-style aggressive sender)",
	Params: []cc.ParamSpec{
		{Name: "window", Default: 150000, Min: 1, Max: 1 << 40, Integer: true, Unit: "bytes", Doc: "congestion window"},
		{Name: "rate", Default: 0, Min: 0, Max: units.MaxBandwidth, Unit: "bit/s", Doc: "pacing rate, 0 = unpaced"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) {
		return &Fixed{mss: c.MSS, window: units.Bytes(c.Params["window"]), rate: units.Bandwidth(c.Params["rate"])}, nil
	},
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm    = (*Fixed)(nil)
	_ cc.WindowSetter = (*Fixed)(nil)
	_ cc.Tunable      = (*Fixed)(nil)
	_ cc.Inspector    = (*Fixed)(nil)
)

// Fixed is a constant-window controller.
type Fixed struct {
	mss    units.Bytes
	window units.Bytes
	rate   units.Bandwidth
}

// OnPacketSent implements cc.Algorithm.
func (f *Fixed) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}

// OnAck implements cc.Algorithm.
func (f *Fixed) OnAck(clock.Time, *cc.Ack) {}

// OnCongestionEvent implements cc.Algorithm: loss never shrinks the window.
func (f *Fixed) OnCongestionEvent(clock.Time, *cc.LossEvent) {}

// OnRecoveryEnd implements cc.Algorithm.
func (f *Fixed) OnRecoveryEnd(clock.Time) {}

// OnRetransmissionTimeout implements cc.Algorithm: neither does a timeout.
func (f *Fixed) OnRetransmissionTimeout(clock.Time, units.Bytes) {}

// CongestionWindow implements cc.Algorithm; never below one segment.
func (f *Fixed) CongestionWindow() units.Bytes { return max(f.window, f.mss) }

// PacingRate implements cc.Algorithm.
func (f *Fixed) PacingRate() units.Bandwidth { return f.rate }

// SetCongestionWindow implements cc.WindowSetter.
func (f *Fixed) SetCongestionWindow(_ clock.Time, w units.Bytes) { f.window = w }

// SetParam implements cc.Tunable.
func (f *Fixed) SetParam(name string, v float64) error {
	return cc.SetParamChecked(Spec, name, v, func(v float64) {
		switch name {
		case "window":
			f.window = units.Bytes(v)
		case "rate":
			f.rate = units.Bandwidth(v)
		}
	})
}

// State implements cc.Inspector.
func (f *Fixed) State() cc.State {
	return cc.State{Cwnd: f.CongestionWindow(), PacingRate: f.rate, Mode: "fixed"}
}
