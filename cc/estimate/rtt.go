package estimate

import "time"

// RTT is RFC 6298's retransmission-timeout estimator, with the
// minimum RTT kept alongside (Linux keeps a windowed minimum; cclab's runs
// are short enough that the all-time minimum is what the papers use for
// queueing delay).
type RTT struct {
	srtt, rttvar, min, latest time.Duration
	minRTO, maxRTO, initRTO   time.Duration
	samples                   int64
}

// clockGranularity is G in RFC 6298 §2: a 1 ms tick, as Linux's jiffies-free
// microsecond timestamps make the term negligible.
const clockGranularity = time.Millisecond

// NewRTT returns an estimator with the given RTO bounds.
func NewRTT(initRTO, minRTO, maxRTO time.Duration) RTT {
	return RTT{initRTO: initRTO, minRTO: minRTO, maxRTO: maxRTO}
}

// Update folds in a sample (RFC 6298 §2.2, §2.3 with alpha = 1/8,
// beta = 1/4).
func (e *RTT) Update(r time.Duration) {
	if r <= 0 {
		r = 1 // a same-instant ACK in simulation; keep the estimator positive
	}
	e.latest = r
	e.samples++
	if e.min == 0 || r < e.min {
		e.min = r
	}
	if e.srtt == 0 {
		e.srtt = r
		e.rttvar = r / 2
		return
	}
	d := e.srtt - r
	if d < 0 {
		d = -d
	}
	e.rttvar = (3*e.rttvar + d) / 4
	e.srtt = (7*e.srtt + r) / 8
}

// RTO returns the retransmission timeout before back-off (RFC 6298 §2.1,
// §2.3, §2.4 with a configurable floor and cap).
func (e *RTT) RTO() time.Duration {
	if e.srtt == 0 {
		return e.initRTO
	}
	rto := e.srtt + max(clockGranularity, 4*e.rttvar)
	return min(max(rto, e.minRTO), e.maxRTO)
}

// SRTT returns the smoothed RTT, 0 before the first sample.
func (e *RTT) SRTT() time.Duration { return e.srtt }

// RTTVar returns the RTT variation.
func (e *RTT) RTTVar() time.Duration { return e.rttvar }

// Min returns the minimum sample, 0 before the first.
func (e *RTT) Min() time.Duration { return e.min }

// Latest returns the most recent sample.
func (e *RTT) Latest() time.Duration { return e.latest }

// Samples returns the number of samples taken.
func (e *RTT) Samples() int64 { return e.samples }
