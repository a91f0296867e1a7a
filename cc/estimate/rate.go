package estimate

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Rate is a connection's delivery-rate state
// (draft-cheng-iccrg-delivery-rate-estimation §3.1: C.delivered,
// C.delivered_time, C.first_sent_time, C.app_limited). The zero value is
// ready; call Start when the connection can first send.
type Rate struct {
	delivered     units.Bytes
	deliveredTime clock.Time
	firstSentTime clock.Time
	appLimited    units.Bytes // 0, or the C.delivered value at which app-limited ends
}

// Stamp is the state recorded in a packet when it is (re)transmitted
// (draft §3.2: P.delivered, P.delivered_time, P.first_sent_time,
// P.is_app_limited).
type Stamp struct {
	Delivered     units.Bytes
	DeliveredTime clock.Time
	FirstSentTime clock.Time
	AppLimited    bool
}

// Sample accumulates the rate sample of one ACK over the packets it newly
// delivers (draft §3.3 UpdateRateSample). The zero value is an empty sample.
type Sample struct {
	ok             bool
	appLimited     bool
	priorDelivered units.Bytes
	sendElapsed    time.Duration
	ackElapsed     time.Duration
	sentAt         clock.Time // send time of the sampled packet
	// RTT is the sampled packet's round-trip time, 0 if it was
	// retransmitted (Karn's rule). The transport may refine it (timestamp
	// echo, ACK delay) before Fill.
	RTT time.Duration
	// What Linux times for its RTO estimator (RTT.SplitSamples), noted by
	// the transport (NoteCumulative, NoteRetransAcked), not by Deliver:
	// the send time of the oldest original segment the ACK acknowledged
	// cumulatively, and whether it cumulatively acknowledged a
	// retransmitted one.
	cumSentAt    clock.Time
	cumOK        bool
	retransAcked bool
}

// NoteCumulative notes the cumulative acknowledgement of a never
// retransmitted segment sent at sentAt.
func (s *Sample) NoteCumulative(sentAt clock.Time) {
	if !s.cumOK || sentAt < s.cumSentAt {
		s.cumSentAt, s.cumOK = sentAt, true
	}
}

// NoteRetransAcked notes that the ACK cumulatively acknowledged a segment
// that was retransmitted (SACKed before or not).
func (s *Sample) NoteRetransAcked() { s.retransAcked = true }

// OldestRTT returns Linux's sample for its RTO estimator at now
// (tcp_clean_rtx_queue's seq_rtt and sack_rtt, tcp_ack_update_rtt): the
// oldest cumulatively acknowledged original's RTT, unless a retransmitted
// segment was cumulatively acknowledged too (Karn's rule), else that of
// the oldest original the ACK newly SACKed, sent at sackOldest
// (clock.Never for none); ok is false when the ACK timed neither.
func (s *Sample) OldestRTT(now, sackOldest clock.Time) (rtt time.Duration, ok bool) {
	switch {
	case s.cumOK && !s.retransAcked:
		return now.Sub(s.cumSentAt), true
	case sackOldest != clock.Never:
		return now.Sub(sackOldest), true
	}
	return 0, false
}

// OK reports whether the ACK delivered anything.
func (s *Sample) OK() bool { return s.ok }

// Start begins the first delivery interval at now.
func (r *Rate) Start(now clock.Time) { r.deliveredTime, r.firstSentTime = now, now }

// Delivered returns C.delivered: every byte delivered so far.
func (r *Rate) Delivered() units.Bytes { return r.delivered }

// OnSend returns the stamp for a packet sent at now with inFlight bytes
// already in flight (draft §3.2 "Upon sending a packet").
func (r *Rate) OnSend(now clock.Time, inFlight units.Bytes) Stamp {
	if inFlight == 0 {
		// "If there are no packets in flight yet, then we can start the
		// delivery rate interval at the current time."
		r.firstSentTime, r.deliveredTime = now, now
	}
	return Stamp{Delivered: r.delivered, DeliveredTime: r.deliveredTime, FirstSentTime: r.firstSentTime, AppLimited: r.appLimited != 0}
}

// SetAppLimited records that the sender had window but no data, with
// inFlight bytes in flight (draft §3.4 "C.app_limited = (C.delivered +
// C.pipe) ? : 1").
func (r *Rate) SetAppLimited(inFlight units.Bytes) { r.appLimited = max(r.delivered+inFlight, 1) }

// Deliver accounts the first delivery (cumulative or selective) at now of a
// packet of size bytes last sent at sentAt with stamp st. The most recently
// sent of an ACK's newly delivered packets defines the sample (Linux
// tcp_rate_skb_delivered orders by send time the same way).
func (r *Rate) Deliver(now clock.Time, size units.Bytes, sentAt clock.Time, retransmitted bool, st *Stamp, s *Sample) {
	r.delivered += size
	r.deliveredTime = now
	if s.ok && sentAt <= s.sentAt {
		return
	}
	s.ok = true
	s.sentAt = sentAt
	s.priorDelivered = st.Delivered
	s.appLimited = st.AppLimited
	s.sendElapsed = sentAt.Sub(st.FirstSentTime)
	s.ackElapsed = now.Sub(st.DeliveredTime)
	s.RTT = 0
	if !retransmitted {
		s.RTT = now.Sub(sentAt)
	}
	r.firstSentTime = sentAt
}

// EndAck ends an application-limited period once its bubble is delivered
// (draft §3.3); call it once per ACK, after the deliveries.
func (r *Rate) EndAck() {
	if r.appLimited != 0 && r.delivered > r.appLimited {
		r.appLimited = 0
	}
}

// Fill writes s as a cc.RateSample. An interval shorter than minRTT means
// the sample is unreliable (ACK compression, a spurious retransmission
// SACKed first) and gives no rate (draft §3.3). out is zeroed if s is empty.
func (r *Rate) Fill(s *Sample, minRTT time.Duration, out *cc.RateSample) {
	*out = cc.RateSample{}
	if !s.ok {
		return
	}
	out.PriorDelivered = s.priorDelivered
	out.Delivered = r.delivered - s.priorDelivered
	out.Interval = max(s.sendElapsed, s.ackElapsed)
	out.RTT = s.RTT
	out.IsAppLimited = s.appLimited
	if out.Interval < minRTT {
		out.Interval = 0
	}
	if out.Valid() {
		out.DeliveryRate = units.BandwidthFromDelta(out.Delivered, out.Interval)
	}
}
