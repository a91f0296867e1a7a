package estimate

import (
	"math"
	"time"
)

// RTT is RFC 6298's retransmission-timeout estimator, with Linux's
// variant (tcp_rtt_estimator) kept beside it and the minimum RTT alongside
// (Linux keeps a windowed minimum; cclab's runs are short enough that the
// all-time minimum is what the papers use for queueing delay). The RTO's
// initial value and cap are the caller's (RTO, LinuxRTO), so that the
// estimator stays within one cache line of a sender's per-ACK state.
type RTT struct {
	srtt, rttvar, min, latest time.Duration
	// roundSeq is Linux's rtt_seq: the sequence next to send when the
	// current round began (UpdateSeq).
	roundSeq int64
	// Linux's variance, in microseconds as Linux keeps it: mdev is four
	// mean deviations, growing at an eighth of the gain on falling RTTs
	// (Eifel's finding); mdevMax is its largest value in the current
	// round; linuxVar is the term Linux's RTO adds to SRTT, raised at once
	// to mdevMax and lowered by a quarter of the excess per round, never
	// below the RTO floor. After a burst of varying samples (ACKs
	// reordered by a link switch) it keeps the RTO up for a round where
	// RFC 6298's RTTVAR has already decayed, which spares Linux a spurious
	// timeout there.
	mdev, mdevMax, linuxVar uint32
	samples                 uint32 // saturates at its maximum
	// minRTO is the RTO floor in microseconds, as Linux keeps it, which
	// leaves room in the estimator's line for split.
	minRTO uint32
	// split takes SRTT and the variance from the oldest segment an ACK
	// acknowledges and the minimum from the newest (SplitSamples).
	split bool
}

// clockGranularity is G in RFC 6298 §2: a 1 ms tick, as Linux's jiffies-free
// microsecond timestamps make the term negligible.
const clockGranularity = time.Millisecond

// NewRTT returns an estimator whose RTO is never below minRTO.
func NewRTT(minRTO time.Duration) RTT {
	return RTT{minRTO: us(minRTO)}
}

// SplitSamples makes UpdateSplit take two samples per ACK, as Linux's
// tcp_ack_update_rtt does: SRTT and the variance (and so the RTO) from
// the oldest segment the ACK newly acknowledges (seq_rtt), the minimum and
// the latest from the newest (ca_rtt). Without it UpdateSplit folds in the
// newest alone, as UpdateSeq does.
func (e *RTT) SplitSamples(on bool) { e.split = on }

// Split reports whether SplitSamples is on.
func (e *RTT) Split() bool { return e.split }

// UpdateSplit folds in an ACK's samples (see SplitSamples): oldest feeds
// SRTT and the variance, newest the minimum and the latest; una and nxt
// are UpdateSeq's. With split samples, an ACK without an oldest sample
// (Karn's rule: it acknowledged a retransmission and nothing else timed
// it) changes nothing, as in Linux, and one without a newest sample uses
// the oldest for both.
func (e *RTT) UpdateSplit(newest, oldest time.Duration, una, nxt int64) {
	if !e.split {
		if newest > 0 {
			e.UpdateSeq(newest, una, nxt)
		}
		return
	}
	if oldest <= 0 {
		return
	}
	if newest <= 0 {
		newest = oldest
	}
	first := e.srtt == 0
	e.update(oldest, newest)
	e.endRound(first, una, nxt)
}

// us converts d to Linux's unsigned microseconds, saturating.
func us(d time.Duration) uint32 {
	return uint32(min(max(d.Microseconds(), 0), math.MaxUint32))
}

// Update folds in a sample (RFC 6298 §2.2, §2.3 with alpha = 1/8,
// beta = 1/4).
func (e *RTT) Update(r time.Duration) { e.update(r, r) }

// update folds in r for SRTT and the variance and ca for the minimum and
// the latest sample.
func (e *RTT) update(r, ca time.Duration) {
	if r <= 0 {
		r = 1 // a same-instant ACK in simulation; keep the estimator positive
	}
	if ca <= 0 {
		ca = 1
	}
	e.latest = ca
	if e.samples < math.MaxUint32 {
		e.samples++
	}
	if e.min == 0 || ca < e.min {
		e.min = ca
	}
	if e.srtt == 0 {
		e.srtt = r
		e.rttvar = r / 2
		e.mdev = us(2 * r) // "make sure rto = 3*rtt"
		e.linuxVar = max(e.mdev, e.minRTO)
		e.mdevMax = e.linuxVar
		return
	}
	err := r - e.srtt
	d := max(err, -err)
	e.rttvar = (3*e.rttvar + d) / 4
	e.srtt = (7*e.srtt + r) / 8
	m := int64(us(d)) - int64(e.mdev/4)
	if err < 0 && m > 0 {
		m /= 8
	}
	e.mdev = uint32(min(max(int64(e.mdev)+m, 0), math.MaxUint32))
	if e.mdev > e.mdevMax {
		e.mdevMax = e.mdev
		e.linuxVar = max(e.linuxVar, e.mdevMax)
	}
}

// UpdateSeq is Update for a transport that tells where the sample's ACK
// leaves it (una, the first unacknowledged byte, and nxt, the next to
// send), so that Linux's variance term also ends its rounds: once per
// RTT, when una passes what was next to send at the round's start.
func (e *RTT) UpdateSeq(r time.Duration, una, nxt int64) {
	first := e.srtt == 0
	e.Update(r)
	e.endRound(first, una, nxt)
}

// endRound ends one of Linux's variance rounds once una has passed the
// sequence that was next to send when it began (UpdateSeq); first says
// the sample just folded in was the estimator's first.
func (e *RTT) endRound(first bool, una, nxt int64) {
	switch {
	case first:
		e.roundSeq = nxt
	case una > e.roundSeq:
		e.EndRound()
		e.roundSeq = nxt
	}
}

// EndRound closes one of Linux's estimator rounds (tcp_rtt_estimator: the
// sample's ACK passed the sequence that was next to send when the round
// began): the variance term falls by a quarter of its excess over the
// round's largest deviation, and the next round's largest starts at the
// RTO floor.
func (e *RTT) EndRound() {
	if e.mdevMax < e.linuxVar {
		e.linuxVar -= (e.linuxVar - e.mdevMax) / 4
	}
	e.mdevMax = e.minRTO
}

// LinuxRTO returns Linux's retransmission timeout before back-off
// (__tcp_set_rto, tcp_bound_rto): SRTT plus the variance term, which is
// never below the RTO floor, capped at maxRTO; initRTO before the first
// sample.
func (e *RTT) LinuxRTO(initRTO, maxRTO time.Duration) time.Duration {
	if e.srtt == 0 {
		return initRTO
	}
	return min(e.srtt+time.Duration(e.linuxVar)*time.Microsecond, maxRTO)
}

// RTO returns the retransmission timeout before back-off (RFC 6298 §2.1,
// §2.3, §2.4 with the estimator's floor and the cap maxRTO); initRTO
// before the first sample.
func (e *RTT) RTO(initRTO, maxRTO time.Duration) time.Duration {
	if e.srtt == 0 {
		return initRTO
	}
	rto := e.srtt + max(clockGranularity, 4*e.rttvar)
	return min(max(rto, time.Duration(e.minRTO)*time.Microsecond), maxRTO)
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
func (e *RTT) Samples() int64 { return int64(e.samples) }
