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
// deadline. Retransmissions are rack.go's.
func (s *Sender) detectLossRACK(now clock.Time) {
	if s.cfg.NoRACK || s.rackXmit == 0 {
		return
	}
	rtt := s.rtt.Latest()
	if rtt == 0 {
		return
	}
	reo := s.rackReoWnd()
	// rackFront: every segment below it is SACKed, marked lost or was
	// retransmitted, which no later ACK undoes, so each ACK looks at the
	// new candidates only.
	for k := max(s.rackFront, s.unaSeg); k < s.nxtSeg(); k++ {
		s.rackFront = k
		g := s.seg(k)
		if g.sacked || g.lost || g.retrans || g.everRetrans {
			continue
		}
		// Originals are sent in order: once one is too recent, so are
		// the rest. Segments sent in the same instant are ordered by
		// sequence (Linux tcp_rack_sent_after).
		if g.sentAt > s.rackXmit || (g.sentAt == s.rackXmit && k >= s.rackXmitSeg) {
			return
		}
		if d := g.sentAt.Add(rtt + reo); d > now {
			s.rackT.Reset(d)
			return
		}
		s.markLost(k, g)
		s.lostFront = max(s.lostFront, k+1)
	}
	s.rackFront = s.nxtSeg()
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
	if s.sacked > 0 {
		s.detectLossRACK(now)
	}
	if retx {
		s.detectLostRetransmissions(now)
	}
	if newly := s.stats.MarkedLost - priorLost; newly > 0 {
		s.updateRecovery(now, prior, newly, 0)
		s.trySend(now)
	}
}
