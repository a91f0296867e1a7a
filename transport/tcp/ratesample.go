package tcp

import (
	"time"

	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
)

// deliver records the first delivery (cumulative or SACK) of segment g in
// the delivery-rate sample and RACK's newest delivered send time.
func (s *Sender) deliver(now clock.Time, k int64, g *segment, rs *estimate.Sample) {
	// A delivery advances RACK (Linux tcp_rack_advance: rack.advanced, and
	// the newest delivered send time) unless it is a retransmission whose
	// ACK may be for the original (RTT below the minimum); a tail loss
	// probe's delivery is what dates the holes below it.
	if !g.everRetrans || (!s.cfg.NoRACK && now.Sub(g.sentAt) >= s.rtt.Min()) {
		s.rackAdvanced = true
		s.rackRTT = now.Sub(g.sentAt)
		if g.sentAt > s.rackXmit || (g.sentAt == s.rackXmit && k > s.rackXmitSeg) {
			s.rackXmit, s.rackXmitSeg = g.sentAt, k
		}
	}
	if !g.everRetrans {
		s.frtoOrigAcked = true
	}
	st := estimate.Stamp{Delivered: g.delivered, DeliveredTime: g.deliveredTime, FirstSentTime: g.firstSentTime, AppLimited: g.appLimited}
	s.rate.Deliver(now, g.len, g.sentAt, g.everRetrans, &st, rs)
}

// sampleRTT refines the ACK's RTT sample and feeds the estimator;
// sackOldest is the send time of the oldest original the ACK newly SACKed
// (clock.Never for none).
func (s *Sender) sampleRTT(now, echo clock.Time, ackDelay time.Duration, advanced bool, sackOldest clock.Time, rs *estimate.Sample) {
	if rs.RTT == 0 && advanced && echo > 0 {
		// Every newly acknowledged segment was retransmitted: Karn's rule
		// gives no sample, but the timestamp echo does (RFC 7323 §4.1;
		// Linux tcp_rtt_tsopt_us). Without it, a spurious timeout on a
		// long-RTT path would repeat forever.
		if d, ok := echoRTT(now, echo); ok {
			rs.RTT = d
		}
	}
	if ackDelay > 0 && rs.RTT > ackDelay {
		// A timer-driven ACK held the newest segment: remove the hold
		// time, never below a plausible path RTT (QUIC's rule, RFC 9002
		// §5.3, uses the minimum RTT as the floor).
		rs.RTT = max(rs.RTT-ackDelay, min(rs.RTT, s.rtt.Min()))
	}
	var oldest time.Duration
	if s.rtt.Split() {
		// Linux times its RTO estimator from the oldest segment the ACK
		// acknowledges, else from the timestamp echo of an ACK that
		// acknowledged data (tcp_ack_update_rtt); the flow's RTT
		// statistics keep the newest segment's.
		var ok bool
		if oldest, ok = rs.OldestRTT(now, sackOldest); !ok && advanced && echo > 0 {
			if d, ok := echoRTT(now, echo); ok {
				oldest = d
			}
		}
	}
	s.rtt.UpdateSplit(rs.RTT, oldest, s.una, s.nxt)
	if rs.RTT > 0 && s.OnRTT != nil {
		s.OnRTT(now, rs.RTT)
	}
	s.rate.EndAck()
}

// maxEchoRTT bounds an RTT taken from a timestamp echo, as Linux does
// (tcp_rtt_tsopt_us takes one only below INT_MAX / (USEC_PER_SEC /
// TCP_TS_HZ) ms, 35.8 minutes).
const maxEchoRTT = 2147483 * time.Millisecond

// echoRTT is the RTT a timestamp echo gives, and whether it is one: an
// echo after now, or one further back than maxEchoRTT, is not. In a
// simulation every echo is one; on a live socket the echo is whatever
// the peer's datagram says (TSecr), and a buggy or hostile peer's must
// not become the RTT estimator's, whose timeout once went negative.
func echoRTT(now, echo clock.Time) (time.Duration, bool) {
	d := now.Sub(echo)
	return d, d >= 0 && d < maxEchoRTT
}
