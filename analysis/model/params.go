package model

import (
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/core/units"
)

// TCPParams are the inputs of the TCP models. Times are durations, the
// segment size is in bytes, windows are in packets (segments).
type TCPParams struct {
	// RTT is the round-trip time, queueing included, assumed constant over
	// the connection. Must be positive.
	RTT time.Duration
	// RTO is T0 of Padhye et al.: the duration of the first timeout of a
	// timeout sequence, i.e. the retransmission timer value when it fires,
	// before exponential back-off doubles it for each further timeout in
	// the sequence. Zero means DefaultRTO(RTT). Only the Padhye models use
	// it. Must not be negative.
	RTO time.Duration
	// P is the loss probability, in [0, 1). Padhye et al. define it per
	// packet, for the first loss of a round (later packets of that round
	// are then lost too); with independent (Bernoulli) erasures it is the
	// packet erasure probability. P = 0 is accepted only when Wmax or
	// Capacity bounds the rate; positive values must be at least MinLoss.
	P float64
	// MSS is the segment size in bytes, used only to convert packets/s to
	// bits/s. Must be positive.
	MSS units.Bytes
	// Wmax is the receiver's advertised window in packets, the cap on the
	// congestion window. Zero means no cap; otherwise at least 1.
	Wmax float64
	// B is the number of packets acknowledged by one ACK: 1 when every
	// segment is acknowledged, 2 with delayed ACKs (RFC 5681 §4.2). Zero
	// means 1; otherwise at least 1.
	B float64
	// Capacity, if positive, is the bottleneck rate in bits/s available to
	// the flow: the models' rate is capped at Capacity/(8 MSS) packets/s
	// (the papers have no capacity term; the cap stands for the per-flow
	// maximum of a simulation). Zero means no cap.
	Capacity units.Bandwidth
}

// MinLoss is the smallest positive loss probability the models accept: one
// loss in 10^12 packets, far below any measurable rate; smaller values
// overflow the formulas' 1/p terms.
const MinLoss = 1e-12

// DefaultRTO is the RTO used when TCPParams.RTO is zero: RFC 6298's
// RTO = SRTT + max(G, 4 RTTVAR) on a path with constant RTT, where RTTVAR
// decays to zero and the 1-second minimum of §2.4 applies: max(1 s, rtt).
func DefaultRTO(rtt time.Duration) time.Duration { return max(time.Second, rtt) }

// NCParams are the inputs of the TCP/NC model: the TCP parameters (P is the
// end-to-end erasure probability of a coded packet) plus the coding layer's.
type NCParams struct {
	TCPParams
	// R is the redundancy factor: coded packets sent per packet from TCP.
	// Accepted range [1, 100].
	R float64
	// Duration, if positive, is the connection length over which the
	// throughput is averaged, starting from a window of one packet (Kim
	// et al. give throughput as a function of the connection's duration).
	// Zero means steady state. If positive, at least RTT.
	Duration time.Duration
}

// ParamError reports a model parameter outside its domain.
type ParamError struct {
	// Param is the parameter's field name, e.g. "P".
	Param string
	// Value is the offending value, formatted.
	Value string
	// Accepted describes the accepted range, e.g. "[0, 1)".
	Accepted string
	// Why optionally explains a domain that depends on other parameters.
	Why string
}

func (e *ParamError) Error() string {
	s := fmt.Sprintf("model: %s must be in %s, got %s", e.Param, e.Accepted, e.Value)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

func paramErr(param string, value any, accepted, why string) error {
	return &ParamError{Param: param, Value: fmt.Sprint(value), Accepted: accepted, Why: why}
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// tcp is TCPParams resolved to float64 SI units after validation.
type tcp struct {
	rtt, t0  float64 // seconds
	p        float64
	mss      float64 // bytes
	wmax     float64 // packets; +Inf when uncapped
	b        float64
	capRate  float64 // packets/s; +Inf when uncapped
	uncapped bool    // neither Wmax nor Capacity bounds the rate
	in       TCPParams
}

// resolve validates p and applies the documented defaults.
func (p TCPParams) resolve() (tcp, error) {
	var t tcp
	if p.RTT <= 0 {
		return t, paramErr("RTT", p.RTT, "(0, +inf)", "the round-trip time must be positive")
	}
	if p.RTO < 0 {
		return t, paramErr("RTO", p.RTO, "[0, +inf)", "0 selects DefaultRTO")
	}
	if !finite(p.P) || p.P < 0 || p.P >= 1 {
		return t, paramErr("P", p.P, "[0, 1)", "the loss probability")
	}
	if p.P > 0 && p.P < MinLoss {
		return t, paramErr("P", p.P, "{0} or [1e-12, 1)", "a positive loss probability below MinLoss overflows the formulas")
	}
	if p.MSS <= 0 {
		return t, paramErr("MSS", p.MSS, "(0, +inf) bytes", "")
	}
	if !finite(p.Wmax) || p.Wmax < 0 || (p.Wmax > 0 && p.Wmax < 1) {
		return t, paramErr("Wmax", p.Wmax, "{0} or [1, +inf) packets", "0 means no receiver window cap")
	}
	if !finite(p.B) || p.B < 0 || (p.B > 0 && p.B < 1) {
		return t, paramErr("B", p.B, "{0} or [1, +inf) packets per ACK", "0 means 1")
	}
	if p.Capacity < 0 {
		return t, paramErr("Capacity", p.Capacity, "[0, +inf) bits/s", "0 means no cap")
	}
	rto := p.RTO
	if rto == 0 {
		rto = DefaultRTO(p.RTT)
	}
	t = tcp{
		rtt:     p.RTT.Seconds(),
		t0:      rto.Seconds(),
		p:       p.P,
		mss:     float64(p.MSS),
		wmax:    math.Inf(1),
		b:       1,
		capRate: math.Inf(1),
		in:      p,
	}
	if p.Wmax > 0 {
		t.wmax = p.Wmax
	}
	if p.B > 0 {
		t.b = p.B
	}
	if p.Capacity > 0 {
		t.capRate = float64(p.Capacity) / (8 * t.mss)
	}
	t.uncapped = p.Wmax == 0 && p.Capacity == 0
	return t, nil
}

// errNoBound is the error for a loss-free connection nothing else bounds.
func errNoBound(param string, value any, why string) error {
	return paramErr(param, value, "(0, 1)", why+"; set Wmax or Capacity to bound it")
}
