package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// currentRTO is the RTO with exponential back-off (RFC 6298 §5.5), capped.
func (s *Sender) currentRTO() time.Duration {
	rto := s.baseRTO()
	for i := 0; i < int(s.backoff) && rto < s.cfg.MaxRTO; i++ {
		rto *= 2
	}
	return min(rto, s.cfg.MaxRTO)
}

// LostRetransmits returns how many retransmissions the sender found lost
// in turn: by RACK (or the send-time gap rule, detectLostRetransmissions)
// or when a timeout marked them lost with their segment. It is Linux's
// TcpExtTCPLostRetransmit (tcp_mark_skb_lost), which the emulator's
// kernel counters report beside it.
func (s *Sender) LostRetransmits() int64 { return int64(s.lostRetx) }

// TimeoutStates returns how many of the sender's timeouts were first
// timeouts (none since SND.UNA last advanced) in fast recovery and in the
// loss state, which followed an earlier timeout and a partial ACK: what
// Linux counts as TCPSackRecoveryFail (TCPRenoRecoveryFail without SACK)
// and TCPLossFailures (tcp_retransmit_timer). The rest of Stats.RTOs are
// the SYN's, backed-off ones and those in the open state.
func (s *Sender) TimeoutStates() (inRecovery, inLoss int64) {
	if s.rare == nil {
		return 0, 0
	}
	return int64(s.rare.rtoInRecovery), int64(s.rare.rtoInLoss)
}

// RTO returns the retransmission timeout before back-off, as the sender
// computes it (Config.RFC6298RTO says which rule).
func (s *Sender) RTO() time.Duration { return s.baseRTO() }

// baseRTO is the RTO before back-off. Linux's (the default) is SRTT plus
// its own variance term (estimate.RTT.LinuxRTO, tcp_rtt_estimator), which
// is never below rto_min, so its RTO is at least one SRTT above the 200 ms
// floor, where RFC 6298 §2.4 floors the whole RTO at MinRTO: on a path
// with a 100 ms RTT the RFC's rule times out at 200 ms, Linux's at 300 ms
// or more. The term also holds the largest deviation of the last round
// for a round, where RFC 6298's RTTVAR decays at once.
func (s *Sender) baseRTO() time.Duration {
	if s.cfg.RFC6298RTO {
		return s.rtt.RTO(s.cfg.InitialRTO, s.cfg.MaxRTO)
	}
	return s.rtt.LinuxRTO(s.cfg.InitialRTO, s.cfg.MaxRTO)
}

// onRTO handles the retransmission timer (RFC 6298 §5.4-5.6; RFC 5681 §3.1;
// Linux's tcp_enter_loss and tcp_retransmit_timer): the timed-out segments
// are marked lost (markTimedOut), SACK information is kept, the controller
// is told what is still in flight, and the first unacknowledged segment is
// retransmitted whatever the window says.
func (s *Sender) onRTO(now clock.Time) {
	if s.done {
		return
	}
	if !s.established {
		// RFC 6298 §5.5 applies to the SYN as to data.
		s.synRetried = true
		s.stats.RTOs++
		if s.currentRTO() < s.cfg.MaxRTO {
			s.backoff++
		}
		s.sendSyn(now)
		return
	}
	if s.cfg.PacketTimers {
		s.onPacketTimers(now)
		return
	}
	if s.n == 0 {
		return
	}
	if t := s.tlp.timer; s.cfg.LinuxTLPTimer && t != nil && t.Deadline() <= now && s.sendProbe(now) {
		// The probe was due at this instant in the RTO's place
		// (scheduleTLP, Config.LinuxTLPTimer).
		return
	}
	if s.backoff == 0 {
		switch s.phase {
		case recovery:
			s.counts().rtoInRecovery++
		case lossPhase:
			s.counts().rtoInLoss++
		}
	}
	s.stats.RTOs++
	if s.currentRTO() < s.cfg.MaxRTO {
		s.backoff++
	}
	s.frtoOnRTO()
	s.markTimedOut(now, !s.cfg.NoRACK)
	s.phase = lossPhase
	s.recoveryPoint = s.nxt
	if s.cfg.ECN != ECNOff {
		s.cwrPending = true // tcp_enter_loss's tcp_ecn_queue_cwr
	}
	s.cc.OnRetransmissionTimeout(now, s.InFlight())
	s.nextSend = now // the pacer must not hold back the retransmission
	s.rtoT.Reset(now.Add(s.currentRTO()))
	if g := s.seg(s.unaSeg); g.lost && !g.retrans && !g.sacked {
		// Linux's tcp_retransmit_timer sends the head itself, outside
		// the window: a controller that keeps its window (External,
		// Fixed) may leave no room with the spared segments in flight.
		s.sendOutside(now, s.unaSeg, true)
	}
	s.trySend(now)
}
