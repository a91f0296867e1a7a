// Package cctest drives congestion controllers deterministically without the
// simulator, for tests (STYLE.md point 10). It has two harnesses:
//
//   - Driver, a scenario driver with verbs (SendWindow, AckN, LoseN,
//     Advance, Timeout, Round): the test decides when every segment is sent,
//     acknowledged or lost, and checks the controller after each step against
//     a reference model.
//   - Path, a minimal packet-level single-bottleneck path (rate, base RTT,
//     drop-tail queue, delayed ACKs, SACK-style loss detection, RTO) for
//     steady-state properties such as "Vegas keeps between alpha and beta
//     segments queued".
//
// Both play the transport's part of the cc contract: they call OnPacketSent,
// OnAck, OnCongestionEvent, OnRecoveryEnd and OnRetransmissionTimeout as the
// transport does, and fill cc.Ack with RFC 6298 RTT estimates and
// draft-cheng-iccrg-delivery-rate-estimation rate samples. They follow the
// simulator's tcp.Sender where the cc contract leaves room: an ACK that ends
// fast recovery calls OnRecoveryEnd before OnAck (as Linux ends recovery in
// tcp_fastretrans_alert before running the congestion-avoidance hook), the
// loss that starts recovery calls OnCongestionEvent before that ACK's OnAck,
// and after a timeout ACKs report InRecovery until everything sent before it
// is delivered, without an OnRecoveryEnd.
package cctest

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Driver is a scenario driver around one controller. Segments are numbered
// from 0 and are MSS bytes long. It is not safe for concurrent use.
type Driver struct {
	tb  testing.TB
	alg cc.Algorithm
	mss units.Bytes
	now clock.Time
	rtt time.Duration

	// AckEvery is the number of segments each ACK covers in AckAll and
	// Round (2 models a delayed-ACK receiver); default 2.
	AckEvery int
	// AppLimited makes the driver behave like an application with nothing
	// more to send: ACKs report CwndLimited false and packets sent are
	// marked application-limited (draft-cheng §3.4).
	AppLimited bool

	nextSeq       int64
	nextSendIdx   int64
	flight        []packet // outstanding and not lost, in transmission order
	lost          []packet // marked lost, awaiting retransmission
	pipe          units.Bytes
	pendingLost   units.Bytes // lost bytes to report with the next ACK
	est           estimator
	inRecovery    bool  // fast recovery
	lossPhase     bool  // recovering from a timeout
	cwr           bool  // an ECN reduction (Echo)
	recoveryPoint int64 // highest segment sent when recovery began

	acks    int
	lastAck cc.Ack
}

// NewDriver returns a driver at time 0 with a 100 ms path RTT.
func NewDriver(tb testing.TB, alg cc.Algorithm, mss units.Bytes) *Driver {
	tb.Helper()
	if alg == nil || mss <= 0 {
		tb.Fatalf("cctest.NewDriver: need a controller and a positive MSS, got %v and %d", alg, mss)
	}
	return &Driver{tb: tb, alg: alg, mss: mss, rtt: 100 * time.Millisecond, AckEvery: 2, est: newEstimator()}
}

// Now is the driver's current time.
func (d *Driver) Now() clock.Time { return d.now }

// Advance moves time forward by dt.
func (d *Driver) Advance(dt time.Duration) {
	d.tb.Helper()
	if dt < 0 {
		d.tb.Fatalf("cctest: Advance(%v): time cannot go backwards", dt)
	}
	d.now = d.now.Add(dt)
}

// SetRTT sets the round-trip time that Round waits between sending and
// acknowledging.
func (d *Driver) SetRTT(rtt time.Duration) { d.rtt = rtt }

// RTT is the round-trip time Round uses.
func (d *Driver) RTT() time.Duration { return d.rtt }

// InFlight is the RFC 6675 pipe: bytes sent, not acknowledged and not lost.
func (d *Driver) InFlight() units.Bytes { return d.pipe }

// Delivered is the connection's delivered byte count (C.delivered).
func (d *Driver) Delivered() units.Bytes { return d.est.rate.Delivered() }

// InRecovery reports whether the driver is in fast recovery or recovering
// from a timeout.
func (d *Driver) InRecovery() bool { return d.inRecovery || d.lossPhase }

// Acks is the number of ACKs delivered to the controller so far.
func (d *Driver) Acks() int { return d.acks }

// LastAck is a copy of the last ACK given to the controller.
func (d *Driver) LastAck() cc.Ack { return d.lastAck }

// SRTT and MinRTT are the driver's RFC 6298 estimates.
func (d *Driver) SRTT() time.Duration { return d.est.rtt.SRTT() }

// MinRTT is the smallest RTT sample so far.
func (d *Driver) MinRTT() time.Duration { return d.est.rtt.Min() }

// Send transmits n new MSS-sized segments now, regardless of the window.
func (d *Driver) Send(n int) {
	for range n {
		d.transmit(packet{seq: d.nextSeq, size: d.mss}, false)
		d.nextSeq++
	}
}

func (d *Driver) transmit(p packet, retrans bool) {
	if d.AppLimited {
		d.est.markAppLimited(d.pipe)
	}
	p.retrans = retrans
	p.sendIdx = d.nextSendIdx
	p.laterAcked = 0
	d.nextSendIdx++
	d.est.onSend(&p, d.now, d.pipe)
	d.flight = append(d.flight, p)
	d.pipe += p.size
	d.alg.OnPacketSent(d.now, p.size, d.pipe, retrans)
}

// SendWindow sends new segments while one more fits in the congestion
// window (pipe + MSS <= cwnd) and returns how many it sent. Pacing is not
// applied: tests that need it advance time themselves.
func (d *Driver) SendWindow() int {
	n := 0
	for d.pipe+d.mss <= d.alg.CongestionWindow() {
		d.Send(1)
		n++
	}
	return n
}

// Retransmit resends every segment marked lost and returns how many.
func (d *Driver) Retransmit() int {
	lost := d.lost
	d.lost = nil
	for _, p := range lost {
		d.transmit(p, true)
	}
	return len(lost)
}

// AckN acknowledges the n oldest outstanding segments with one ACK at the
// current time and returns a copy of the ACK the controller saw. RTT samples
// come from the most recently sent of them (unless it was retransmitted).
func (d *Driver) AckN(n int) cc.Ack {
	d.tb.Helper()
	if n <= 0 || n > len(d.flight) {
		d.tb.Fatalf("cctest: AckN(%d) with %d segments outstanding", n, len(d.flight))
	}
	prior := d.pipe
	var rs estimate.Sample
	var acked units.Bytes
	for i := range n {
		p := &d.flight[i]
		acked += p.size
		d.est.onDeliver(&rs, p, d.now)
	}
	d.flight = append(d.flight[:0], d.flight[n:]...)
	d.pipe -= acked
	a := cc.Ack{AckedBytes: acked, PriorInFlight: prior}
	d.deliverAck(&a, &rs)
	return a
}

func (d *Driver) deliverAck(a *cc.Ack, rs *estimate.Sample) {
	d.est.finish(rs, &a.Rate)
	a.LostBytes = d.pendingLost
	d.pendingLost = 0
	a.InFlight = d.pipe
	a.RTT = rs.RTT
	a.MinRTT = d.est.rtt.Min()
	a.SRTT = d.est.rtt.SRTT()
	a.CwndLimited = !d.AppLimited
	a.TotalDelivered = d.est.rate.Delivered()
	if (d.inRecovery || d.lossPhase || d.cwr) && d.recoveryDone() {
		if d.inRecovery || d.cwr {
			d.alg.OnRecoveryEnd(d.now)
		}
		d.inRecovery, d.lossPhase, d.cwr = false, false, false
	}
	a.InRecovery = d.inRecovery || d.lossPhase
	a.InLoss = d.lossPhase
	a.CWR = d.cwr
	d.acks++
	d.lastAck = *a
	d.alg.OnAck(d.now, a)
}

// recoveryDone reports whether every segment up to the recovery point has
// been delivered (RFC 6582: the recovery point is acknowledged).
func (d *Driver) recoveryDone() bool {
	for i := range d.flight {
		if d.flight[i].seq <= d.recoveryPoint {
			return false
		}
	}
	for i := range d.lost {
		if d.lost[i].seq <= d.recoveryPoint {
			return false
		}
	}
	return true
}

// AckAll acknowledges every outstanding segment now, AckEvery segments per
// ACK, and returns the number of ACKs.
func (d *Driver) AckAll() int {
	return d.AckAllSpaced(0)
}

// AckAllSpaced acknowledges every outstanding segment, AckEvery segments
// per ACK, advancing time by gap between consecutive ACKs (a bottleneck
// spreads ACKs by its serialisation time).
func (d *Driver) AckAllSpaced(gap time.Duration) int {
	d.tb.Helper()
	k := max(d.AckEvery, 1)
	n := 0
	for len(d.flight) > 0 {
		if n > 0 {
			d.Advance(gap)
		}
		d.AckN(min(k, len(d.flight)))
		n++
	}
	return n
}

// LoseN marks the n oldest outstanding segments lost. The first loss of an
// episode enters fast recovery and calls OnCongestionEvent (once per window,
// RFC 6582); the lost bytes are reported in the next ACK's LostBytes.
func (d *Driver) LoseN(n int) {
	d.tb.Helper()
	if n <= 0 || n > len(d.flight) {
		d.tb.Fatalf("cctest: LoseN(%d) with %d segments outstanding", n, len(d.flight))
	}
	prior := d.pipe
	var bytes units.Bytes
	for i := range n {
		bytes += d.flight[i].size
		d.lost = append(d.lost, d.flight[i])
	}
	d.flight = append(d.flight[:0], d.flight[n:]...)
	d.pipe -= bytes
	d.pendingLost += bytes
	d.est.lostTotal += bytes
	if !d.inRecovery && !d.lossPhase {
		inCWR := d.cwr
		d.inRecovery, d.cwr = true, false
		if !inCWR {
			d.recoveryPoint = d.nextSeq - 1
		}
		d.alg.OnCongestionEvent(d.now, &cc.LossEvent{PriorInFlight: prior, LostBytes: bytes, InCWR: inCWR})
	}
}

// Echo delivers an ECN echo (without an ACK of data), as tcp.Sender
// reacts to an ACK with ECE: a controller that observes ECN
// (cc.ECNObserver) sees it, and in the open state the window reduction
// starts (cc.LossEvent.ECN), after which ACKs report CWR until everything
// sent before it is delivered and OnRecoveryEnd ends it; a loss meanwhile
// turns it into fast recovery (cc.LossEvent.InCWR).
func (d *Driver) Echo() {
	if o, ok := d.alg.(cc.ECNObserver); ok {
		var una int64
		if len(d.flight) > 0 {
			una = d.flight[0].seq * int64(d.mss)
		} else {
			una = d.nextSeq * int64(d.mss)
		}
		o.OnAckECN(d.now, una, d.nextSeq*int64(d.mss), true)
	}
	if d.inRecovery || d.lossPhase || d.cwr {
		return
	}
	d.cwr = true
	d.recoveryPoint = d.nextSeq - 1
	d.alg.OnCongestionEvent(d.now, &cc.LossEvent{PriorInFlight: d.pipe, ECN: true})
}

// Timeout fires the retransmission timer: every outstanding segment is
// marked lost, fast recovery is abandoned and OnRetransmissionTimeout is
// called. Until every segment sent so far is delivered, ACKs report
// InRecovery (as tcp.Sender does after a timeout) but no OnRecoveryEnd
// follows, and further losses start no congestion event.
func (d *Driver) Timeout() {
	d.lost = append(d.lost, d.flight...)
	d.flight = d.flight[:0]
	d.pipe = 0
	d.inRecovery, d.cwr = false, false
	d.lossPhase = true
	d.recoveryPoint = d.nextSeq - 1
	d.alg.OnRetransmissionTimeout(d.now, 0)
}

// Outstanding is the number of segments in flight (sent, not acknowledged,
// not lost).
func (d *Driver) Outstanding() int { return len(d.flight) }

// Round runs one ACK-clocked round trip: if nothing is in flight it first
// sends a window; then, one RTT later, it acknowledges the segments that
// were outstanding, AckEvery per ACK, all at the same instant, and refills
// the window after every ACK, so the pipe does not drain between rounds (as
// with a real cwnd-limited sender, which Linux would otherwise treat as
// restarting after idle). It returns the number of segments acknowledged.
func (d *Driver) Round() int { return d.RoundFunc(nil) }

// RoundFunc is Round with fn called after every ACK with a copy of it.
func (d *Driver) RoundFunc(fn func(a cc.Ack)) int {
	d.tb.Helper()
	if len(d.flight) == 0 {
		d.SendWindow()
	}
	d.Advance(d.rtt)
	n := len(d.flight)
	k := max(d.AckEvery, 1)
	for left := n; left > 0; {
		m := min(k, left)
		a := d.AckN(m)
		left -= m
		if fn != nil {
			fn(a)
		}
		d.SendWindow()
	}
	return n
}
