package cctest

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// packet is one transmission of a segment, with the delivery-rate stamp
// recorded when it was sent.
type packet struct {
	seq        int64 // data sequence number, in segments
	size       units.Bytes
	sentAt     clock.Time
	retrans    bool
	sendIdx    int64 // transmission order, counting retransmissions
	stamp      estimate.Stamp
	laterAcked int // segments sent after this one and delivered (loss detection)
}

// estimator is the sender-side measurement shared by Driver and Path: the
// transport's own delivery-rate sampler and RFC 6298 RTT estimator (package
// estimate, which transport/tcp uses too), so controllers see here the
// samples the transport gives them.
type estimator struct {
	rate      estimate.Rate
	rtt       estimate.RTT
	lostTotal units.Bytes
}

// newEstimator uses the transport's default RTO bounds: 1 s before the
// first sample, Linux's 200 ms floor, a 60 s cap.
func newEstimator() estimator {
	return estimator{rtt: estimate.NewRTT(200 * time.Millisecond)}
}

// onSend stamps p, sent at now with pipeBefore bytes already in flight.
func (e *estimator) onSend(p *packet, now clock.Time, pipeBefore units.Bytes) {
	p.sentAt = now
	p.stamp = e.rate.OnSend(now, pipeBefore)
}

// markAppLimited records that the application has nothing to send.
func (e *estimator) markAppLimited(pipe units.Bytes) { e.rate.SetAppLimited(pipe) }

// onDeliver accounts one newly delivered packet.
func (e *estimator) onDeliver(rs *estimate.Sample, p *packet, now clock.Time) {
	e.rate.Deliver(now, p.size, p.sentAt, p.retrans, &p.stamp, rs)
}

// finish feeds the sample's RTT to the estimator and writes the rate sample.
func (e *estimator) finish(rs *estimate.Sample, out *cc.RateSample) {
	if rs.RTT > 0 {
		e.rtt.Update(rs.RTT)
	}
	e.rate.EndAck()
	e.rate.Fill(rs, e.rtt.Min(), out)
}
