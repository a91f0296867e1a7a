// Package external implements a controller driven from outside: an RL agent,
// an experiment script or a schedule sets the window and/or the pacing rate
// at any time, and the controller itself reacts to nothing. Agents read the
// transport's measurements through probes, not through this controller.
package external

import (
	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Spec registers "external".
var Spec = cc.Spec{
	Name: "external",
	Doc:  "window and pacing rate set from outside (RL agents, scripts)",
	Params: []cc.ParamSpec{
		{Name: "iw", Default: 10, Min: 1, Max: 1 << 20, Integer: true, Unit: "segments", Doc: "window until the first external action"},
		{Name: "rate", Default: 0, Min: 0, Max: units.MaxBandwidth, Unit: "bit/s", Doc: "initial pacing rate, 0 = unpaced"},
		{Name: "min_window", Default: 1, Min: 1, Max: 1 << 20, Integer: true, Unit: "segments", Doc: "floor applied to external windows"},
		{Name: "max_window", Default: 1 << 30, Min: 1, Max: 1 << 40, Integer: true, Unit: "bytes", Doc: "cap applied to external windows"},
	},
	New: func(c cc.Config) (cc.Algorithm, error) {
		e := &External{
			mss:    c.MSS,
			minWin: units.Bytes(c.Params["min_window"]) * c.MSS,
			maxWin: units.Bytes(c.Params["max_window"]),
			rate:   units.Bandwidth(c.Params["rate"]),
		}
		e.cwnd = e.clamp(units.Bytes(c.Params["iw"]) * c.MSS)
		return e, nil
	},
}

func init() { cc.Register(Spec) }

var (
	_ cc.Algorithm    = (*External)(nil)
	_ cc.WindowSetter = (*External)(nil)
	_ cc.PacingSetter = (*External)(nil)
	_ cc.Inspector    = (*External)(nil)
)

// External holds the externally set window and rate.
type External struct {
	mss            units.Bytes
	minWin, maxWin units.Bytes
	cwnd           units.Bytes
	rate           units.Bandwidth
}

func (e *External) clamp(w units.Bytes) units.Bytes {
	return min(max(w, e.minWin, e.mss), max(e.maxWin, e.mss))
}

// OnPacketSent implements cc.Algorithm.
func (e *External) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}

// OnAck implements cc.Algorithm.
func (e *External) OnAck(clock.Time, *cc.Ack) {}

// OnCongestionEvent implements cc.Algorithm.
func (e *External) OnCongestionEvent(clock.Time, *cc.LossEvent) {}

// OnRecoveryEnd implements cc.Algorithm.
func (e *External) OnRecoveryEnd(clock.Time) {}

// OnRetransmissionTimeout implements cc.Algorithm.
func (e *External) OnRetransmissionTimeout(clock.Time, units.Bytes) {}

// CongestionWindow implements cc.Algorithm.
func (e *External) CongestionWindow() units.Bytes { return e.cwnd }

// PacingRate implements cc.Algorithm.
func (e *External) PacingRate() units.Bandwidth { return e.rate }

// SetCongestionWindow implements cc.WindowSetter, clamping to the configured
// floor and cap.
func (e *External) SetCongestionWindow(_ clock.Time, w units.Bytes) { e.cwnd = e.clamp(w) }

// SetPacingRate implements cc.PacingSetter; 0 disables pacing.
func (e *External) SetPacingRate(_ clock.Time, r units.Bandwidth) { e.rate = max(r, 0) }

// State implements cc.Inspector.
func (e *External) State() cc.State {
	return cc.State{Cwnd: e.cwnd, PacingRate: e.rate, Mode: "external"}
}
