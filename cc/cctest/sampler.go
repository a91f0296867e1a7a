package cctest

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// packet is one transmission of a segment, with the delivery-rate state
// recorded when it was sent (draft-cheng-iccrg-delivery-rate-estimation §3.2,
// "P.delivered", "P.delivered_time", "P.first_sent_time", "P.is_app_limited").
type packet struct {
	seq           int64 // data sequence number, in segments
	size          units.Bytes
	sentAt        clock.Time
	retrans       bool
	sendIdx       int64 // transmission order, counting retransmissions
	delivered     units.Bytes
	deliveredTime clock.Time
	firstSentTime clock.Time
	appLimited    bool
	laterAcked    int // segments sent after this one and delivered (loss detection)
}

// estimator is the sender-side measurement shared by Driver and Path: the
// delivery-rate estimator of draft-cheng-iccrg-delivery-rate-estimation and
// RFC 6298 RTT estimation. It is the harness's stand-in for the transport.
type estimator struct {
	delivered     units.Bytes // C.delivered
	deliveredTime clock.Time  // C.delivered_time
	firstSentTime clock.Time  // C.first_sent_time
	appLimited    units.Bytes // C.app_limited; 0 when not application-limited
	lostTotal     units.Bytes

	minRTT, srtt, rttvar time.Duration
}

// onSend stamps p with the connection's delivery state (draft §3.2
// "Upon sending a packet"). pipeBefore is the data in flight before the send.
func (e *estimator) onSend(p *packet, now clock.Time, pipeBefore units.Bytes) {
	if pipeBefore == 0 {
		// draft §3.2: "If there are no packets in flight yet, then we can
		// start the delivery rate interval at the current time."
		e.firstSentTime = now
		e.deliveredTime = now
	}
	p.sentAt = now
	p.firstSentTime = e.firstSentTime
	p.deliveredTime = e.deliveredTime
	p.delivered = e.delivered
	p.appLimited = e.appLimited != 0
}

// markAppLimited records that the application has nothing to send (draft §3.4
// "C.app_limited = (C.delivered + C.pipe) ? : 1").
func (e *estimator) markAppLimited(pipe units.Bytes) {
	e.appLimited = max(e.delivered+pipe, 1)
}

// rateAcc accumulates the rate sample of one ACK across its delivered packets.
type rateAcc struct {
	has            bool
	priorDelivered units.Bytes
	priorTime      clock.Time
	newestSent     clock.Time
	sendElapsed    time.Duration
	ackElapsed     time.Duration
	appLimited     bool
	rtt            time.Duration // RTT of the most recently sent packet, 0 if retransmitted
}

// onDeliver accounts one newly delivered packet (draft §3.3
// UpdateRateSample); the most recently sent delivered packet defines the
// sample.
func (e *estimator) onDeliver(rs *rateAcc, p *packet, now clock.Time) {
	e.delivered += p.size
	e.deliveredTime = now
	if !rs.has || p.sentAt >= rs.newestSent {
		rs.has = true
		rs.newestSent = p.sentAt
		rs.priorDelivered = p.delivered
		rs.priorTime = p.deliveredTime
		rs.appLimited = p.appLimited
		rs.sendElapsed = p.sentAt.Sub(p.firstSentTime)
		rs.ackElapsed = e.deliveredTime.Sub(p.deliveredTime)
		rs.rtt = 0
		if !p.retrans {
			rs.rtt = now.Sub(p.sentAt)
		}
		e.firstSentTime = p.sentAt
	}
}

// finish turns the accumulated sample into a cc.RateSample and updates the RTT
// estimators (RFC 6298 §2) with the sample's RTT.
func (e *estimator) finish(rs *rateAcc, out *cc.RateSample) {
	if rs.rtt > 0 {
		e.observeRTT(rs.rtt)
	}
	// draft §3.3: clear the app-limited marker once its bubble is delivered.
	if e.appLimited != 0 && e.delivered > e.appLimited {
		e.appLimited = 0
	}
	*out = cc.RateSample{}
	if !rs.has {
		return
	}
	out.PriorDelivered = rs.priorDelivered
	out.Delivered = e.delivered - rs.priorDelivered
	out.RTT = rs.rtt
	out.IsAppLimited = rs.appLimited
	interval := max(rs.sendElapsed, rs.ackElapsed)
	// draft §3.3: "Normally we expect interval >= MinRTT. Note that rate
	// may still be over-estimated when a spuriously retransmitted skb was
	// first (s)acked because "interval" is under-estimated ... we ignore
	// such samples."
	if interval <= 0 || interval < e.minRTT {
		return
	}
	out.Interval = interval
	out.DeliveryRate = units.BandwidthFromDelta(out.Delivered, interval)
}

// observeRTT applies RFC 6298 §2.2-2.3.
func (e *estimator) observeRTT(r time.Duration) {
	if e.minRTT == 0 || r < e.minRTT {
		e.minRTT = r
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

// rto is the RFC 6298 §2.3 retransmission timeout with Linux's 200 ms floor
// (TCP_RTO_MIN) instead of RFC 6298's 1 s, so that harness runs stay short.
func (e *estimator) rto() time.Duration {
	if e.srtt == 0 {
		return time.Second
	}
	return max(e.srtt+4*e.rttvar, 200*time.Millisecond)
}
