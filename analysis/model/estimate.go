package model

import "github.com/cclab/cclab/core/units"

// Limit says what bounds a model's rate.
type Limit int

const (
	// LossLimited: losses (TCP's reaction to them) bound the rate.
	LossLimited Limit = iota
	// WindowLimited: the receiver window Wmax bounds the rate.
	WindowLimited
	// CapacityLimited: the bottleneck Capacity bounds the rate.
	CapacityLimited
)

// String returns "loss", "window" or "capacity".
func (l Limit) String() string {
	switch l {
	case LossLimited:
		return "loss"
	case WindowLimited:
		return "window"
	case CapacityLimited:
		return "capacity"
	}
	return "unknown"
}

// MarshalText encodes the limit as its String form (for JSON output).
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Estimate is a model's prediction for one parameter set.
type Estimate struct {
	// SendRate is the rate at which the sender puts packets on the wire,
	// in packets/s: Padhye et al.'s B(p), which counts retransmissions;
	// for TCP/NC, coded packets (R per packet from TCP).
	SendRate float64
	// Goodput is the rate at which packets reach the receiving application
	// in order, in packets/s. For TCP it is SendRate*(1-P): with
	// independent losses a fraction 1-P of transmissions arrives, and the
	// models assume no spurious retransmission. For TCP/NC it is the rate
	// of packets TCP gets acknowledged (seen, hence eventually decoded).
	Goodput float64
	// Window is the mean congestion window the model implies, in packets.
	Window float64
	// EffectiveLoss is the loss rate TCP's congestion control reacts to:
	// P for TCP, max(0, 1-R(1-P)) for TCP/NC.
	EffectiveLoss float64
	// Limit says what bounds the rate.
	Limit Limit
	// MSS is the segment size in bytes, for the bits/s conversions.
	MSS units.Bytes
}

// GoodputBitsPerSecond returns Goodput in bits/s.
func (e Estimate) GoodputBitsPerSecond() float64 { return e.Goodput * 8 * float64(e.MSS) }

// SendBitsPerSecond returns SendRate in bits/s.
func (e Estimate) SendBitsPerSecond() float64 { return e.SendRate * 8 * float64(e.MSS) }

// capped applies the window and capacity caps to a send rate in packets/s
// and fills the Estimate for a TCP model (goodput = rate*(1-p)).
func (t tcp) capped(rate, window float64) Estimate {
	e := Estimate{SendRate: rate, Window: window, EffectiveLoss: t.p, Limit: LossLimited, MSS: t.in.MSS}
	if wr := t.wmax / t.rtt; wr <= e.SendRate {
		e.SendRate, e.Window, e.Limit = wr, t.wmax, WindowLimited
	}
	if t.capRate < e.SendRate {
		e.SendRate, e.Window, e.Limit = t.capRate, t.capRate*t.rtt, CapacityLimited
	}
	e.Goodput = e.SendRate * (1 - t.p)
	return e
}
