package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// detectLossRACK is RACK's time-based loss detection for original
// transmissions (RFC 8985 §6.2; Linux tcp_rack_detect_loss, on by default
// with tcp_recovery=1): an un-SACKed segment is lost once a segment sent
// after it has been delivered and one RTT plus the reordering window has
// passed since it was sent. With RACK on it is the only rule that marks
// an original lost (Linux 6.18's tcp_identify_packet_loss): DupThresh
// SACKed segments above a hole only close the reordering window, unless
// the path has been seen to reorder. A hole is marked by an ACK or by the
// reordering timer (RFC 8985 §6.3, Linux tcp_rack_reo_timeout) at its
// deadline, which it returns for armRACK (clock.Never if no hole waits).
// Retransmissions are rack.go's.
func (s *Sender) detectLossRACK(now clock.Time) clock.Time {
	if s.cfg.NoRACK || s.rackXmit == 0 {
		return clock.Never
	}
	rtt := s.rackRTTNow()
	if rtt == 0 {
		return clock.Never
	}
	reo := s.rackReoWnd()
	// rackFront: every segment below it is SACKed, marked lost or was
	// retransmitted, which no later ACK undoes, so each ACK looks at the
	// new candidates only.
	for k := max(s.rackFront, s.unaSeg); k < s.nxtSeg(); k++ {
		s.rackFront = k
		g := s.seg(k)
		if !awaitsRACK(g) {
			continue
		}
		// Originals are sent in order: once one is too recent, so are
		// the rest.
		if s.sentAfterNewest(k, g) {
			return clock.Never
		}
		if d := g.sentAt.Add(rtt + reo); d > now {
			if s.cfg.LinuxRACKTimer {
				return s.latestRACKWait(k).Add(rtt + reo)
			}
			return d
		}
		s.markLost(k, g)
		s.lostFront = max(s.lostFront, k+1)
	}
	s.rackFront = s.nxtSeg()
	return clock.Never
}

// latestRACKWait returns the send time of the last original that waits
// for RACK's deadline, given that k0, the first one, waits: with
// Config.LinuxRACKTimer the timer is armed for the latest deadline, as
// Linux's tcp_rack_detect_loss records the maximum wait. The originals
// waiting are the un-SACKed ones from k0 up to the first sent after the
// newest delivered segment, in send order; each ACK looks only at those
// sent since the last (rackScan), so the cost per ACK does not grow with
// the window. The latest one found earlier is looked at again only if it
// has been SACKed since (reordering), and then the search steps down
// from it.
func (s *Sender) latestRACKWait(k0 int64) clock.Time {
	if s.rackWaitTop < k0 {
		s.rackWaitTop = k0
	}
	k := max(s.rackScan, k0+1)
	for ; k < s.nxtSeg(); k++ {
		g := s.seg(k)
		if !awaitsRACK(g) {
			continue
		}
		if s.sentAfterNewest(k, g) {
			break
		}
		s.rackWaitTop = k
	}
	s.rackScan = k
	for s.rackWaitTop > k0 && !awaitsRACK(s.seg(s.rackWaitTop)) {
		s.rackWaitTop--
	}
	return s.seg(s.rackWaitTop).sentAt
}

// awaitsRACK reports whether RACK's time rule for originals judges g: an
// original neither SACKed, marked lost nor ever retransmitted.
func awaitsRACK(g *segment) bool {
	return !(g.sacked || g.lost || g.retrans || g.everRetrans)
}

// sentAfterNewest reports whether original k (g) left after the newest
// delivered segment, so that delivery dates nothing about it; segments
// sent in the same instant are ordered by sequence (Linux
// tcp_rack_sent_after).
func (s *Sender) sentAfterNewest(k int64, g *segment) bool {
	return g.sentAt > s.rackXmit || (g.sentAt == s.rackXmit && k >= s.rackXmitSeg)
}

// rackRTTNow is the RTT RACK's rules add to a send time: with
// Config.LinuxRACKTimer Linux's rack.rtt_us, the RTT of the latest
// delivery that advanced RACK, which only such an ACK changes, so a
// timer armed for a deadline finds it due when it fires; by default the
// estimator's latest sample.
func (s *Sender) rackRTTNow() time.Duration {
	if s.cfg.LinuxRACKTimer {
		return s.rackRTT
	}
	return s.rtt.Latest()
}

// armRACK arms the reordering timer for the deadlines the two rules found
// in one ACK or timer event (clock.Never: none). An original's deadline
// replaces whatever the timer held, since the hole it was armed for may
// have been repaired since; a retransmission's only brings it forward, so
// that it cannot push back an original's deadline found in the same
// event. A stale earlier deadline left in place costs one timer event that
// re-runs both rules and re-arms. With Config.LinuxRACKTimer both are
// latest deadlines and the later one is armed, TimeoutMin after it and at
// most the RTO ahead (tcp_rack_mark_lost: usecs_to_jiffies(timeout +
// TCP_TIMEOUT_MIN_US), capped at icsk_rto), and only by an event in which
// RACK advanced (advanced): a retransmission's deadline found by an ACK
// that delivered nothing new must not replace an original's later one,
// which the timer would then miss, not re-arming itself.
func (s *Sender) armRACK(now, orig, retx clock.Time, advanced bool) {
	if orig == clock.Never && retx == clock.Never {
		return
	}
	if s.cfg.LinuxRACKTimer {
		if !advanced {
			return
		}
		d := orig
		if d == clock.Never || retx != clock.Never && retx > d {
			d = retx
		}
		s.rackT.Reset(min(d.Add(time.Duration(s.tlpSlack)), now.Add(s.currentRTO())))
		return
	}
	if orig != clock.Never {
		s.rackT.Reset(orig)
	}
	if retx != clock.Never && (!s.rackT.Armed() || retx < s.rackT.Deadline()) {
		s.rackT.Reset(retx)
	}
}

// rackReoWnd is RACK's reordering window (Linux tcp_rack_reo_wnd): until
// the path has been seen to reorder, zero once DupThresh segments are
// SACKed or recovery has begun; otherwise a quarter of the minimum RTT (at
// most SRTT).
func (s *Sender) rackReoWnd() time.Duration {
	if !s.reordSeen && (s.phase == recovery || s.sacked >= s.cfg.MSS*units.Bytes(s.cfg.DupThresh)) {
		return 0
	}
	return min(s.rtt.Min()/4, s.rtt.SRTT())
}

// onRACKTimer marks the holes whose deadline passed without an ACK, and
// starts recovery and retransmits as an ACK would.
func (s *Sender) onRACKTimer(now clock.Time) {
	// With Config.RACKRetransmissions the timer also waits for
	// retransmissions (rack.go).
	retx := s.cfg.RACKRetransmissions && s.retransOut > 0 && s.rackXmit > 0
	if s.done || s.n == 0 || s.sacked == 0 && !retx {
		return
	}
	prior, priorLost := s.InFlight(), s.stats.MarkedLost
	orig, retxAt := clock.Never, clock.Never
	if s.sacked > 0 {
		orig = s.detectLossRACK(now)
	}
	if retx {
		retxAt = s.detectLostRetransmissions(now)
	}
	if !s.cfg.LinuxRACKTimer {
		// Linux's tcp_rack_reo_timeout marks what is due and arms the
		// retransmission timer, not this one: what still waits is left
		// to the next ACK (or the RTO).
		s.armRACK(now, orig, retxAt, true)
	}
	if newly := s.stats.MarkedLost - priorLost; newly > 0 {
		var delivered units.Bytes
		if s.cfg.LinuxPRR && s.phase != recovery {
			// Linux's reordering timeout enters recovery with
			// tcp_cwnd_reduction(sk, 1, 0, 0): one segment counted as
			// delivered, so the first retransmission goes.
			delivered = s.cfg.MSS
		}
		s.updateRecovery(now, prior, newly, delivered, false, true, false)
		s.trySend(now)
	}
}
