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

// baseRTO is the RTO before back-off. Linux floors the variance term, not
// the sum: RTO = SRTT + max(4 RTTVAR, rto_min) (tcp_rtt_estimator keeps
// rttvar_us >= tcp_rto_min_us; tcp_set_rto), so its RTO is at least one
// SRTT above the 200 ms floor, where RFC 6298 §2.4 floors the whole RTO at
// MinRTO. On a path with a 100 ms RTT the RFC's rule times out at 200 ms,
// Linux's at 300 ms or more.
func (s *Sender) baseRTO() time.Duration {
	srtt := s.rtt.SRTT()
	if s.cfg.RFC6298RTO || srtt == 0 {
		return s.rtt.RTO()
	}
	return min(srtt+max(4*s.rtt.RTTVar(), s.cfg.MinRTO), s.cfg.MaxRTO)
}

// onRTO handles the retransmission timer (RFC 6298 §5.4-5.6; RFC 5681 §3.1;
// like Linux's tcp_enter_loss, every un-SACKed outstanding segment is marked
// lost, SACK information is kept).
func (s *Sender) onRTO(now clock.Time) {
	if s.done {
		return
	}
	if !s.established {
		// RFC 6298 §5.5 applies to the SYN as to data.
		s.synRetries++
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
	s.stats.RTOs++
	if s.currentRTO() < s.cfg.MaxRTO {
		s.backoff++
	}
	s.frtoOnRTO()
	s.markAllLost()
	s.phase = lossPhase
	s.recoveryPoint = s.nxt
	s.cc.OnRetransmissionTimeout(now)
	s.nextSend = now // the pacer must not hold back the retransmission
	s.rtoT.Reset(now.Add(s.currentRTO()))
	s.trySend(now)
}
