package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// Mockets-style retransmission (Config.PacketTimers). IHMC's Mockets keeps
// every unacknowledged packet in a queue with its own retransmission
// timeout and resends a packet when its own timeout expires; there is no
// connection-wide timer with exponential back-off, no window reduction and,
// by default, no SACK-gap ("lost packets detection") or time-order
// detection. Its Transmitter computes a packet's timeout as
// (SRTT + RTOConstant) x RTOFactor (defaults 0 and 2), multiplied by
// 1 + the packet's retransmission count, floored at the minimum RTO, which
// defaults to the SACK transmit timeout so that no packet is resent before
// an acknowledgement could have arrived. Without loss detection and with
// a window matched to the bandwidth-delay product, queueing delay above
// twice the smoothed RTT makes these timers fire spuriously, which is why
// Mockets retransmits much more than TCP.

// packetRTO is the timeout of a packet sent retx times before. Mockets'
// Transmitter starts from an assumed RTT of 100 ms, not from the
// handshake: until the first data packet is acknowledged, on a path with a
// longer RTT (SATCOM: 1 s), the first window's packets all time out and are
// resent, some of them several times. This is most of the retransmissions
// the paper reports for Mockets.
func (s *Sender) packetRTO(retx uint16) time.Duration {
	srtt := s.rtt.SRTT()
	handshake := int64(1)
	if s.cfg.NoHandshake {
		handshake = 0
	}
	if s.rtt.Samples() <= handshake {
		srtt = mocketsInitialRTT
	}
	rto := 2 * srtt * time.Duration(1+int64(retx))
	return max(rto, s.cfg.AckInterval, mocketsMinRTO)
}

// Mockets' defaults: DEFAULT_INITIAL_ASSUMED_RTT and DEFAULT_MINIMUM_RTO.
const (
	mocketsInitialRTT = 100 * time.Millisecond
	mocketsMinRTO     = 10 * time.Millisecond
)

// onPacketTimers marks lost every outstanding packet whose own timeout has
// expired, re-arms the timer at the earliest remaining deadline and sends.
func (s *Sender) onPacketTimers(now clock.Time) {
	if s.done || s.n == 0 {
		return
	}
	fired := false
	for k := s.unaSeg; k < s.nxtSeg(); k++ {
		g := s.seg(k)
		if g.sacked || (g.lost && !g.retrans) {
			continue // delivered, or already waiting to be resent
		}
		if now < g.sentAt.Add(s.packetRTO(g.timeouts)) {
			continue
		}
		fired = true
		g.timeouts++
		if g.retrans {
			g.retrans = false
			s.retransOut -= g.len
		}
		if !g.lost {
			g.lost = true
			s.lost += g.len
		}
		s.stats.MarkedLost++
		s.pendingRetx(k)
		// Packets below k were sent no later than k (new data goes out in
		// order), so they are delivered, lost or timed out too: the
		// scoreboard below k+1 is classified.
		s.lostFront = max(s.lostFront, k+1)
	}
	if fired {
		s.stats.RTOs++
	}
	s.armPacketTimer(now)
	s.trySend(now)
}

// packetSent keeps the timer at the earliest deadline when packet g goes
// out.
func (s *Sender) packetSent(now clock.Time, g *segment) {
	if d := now.Add(s.packetRTO(g.timeouts)); d < s.rtoT.Deadline() {
		s.rtoT.Reset(d)
	}
}

// armPacketTimer sets the timer to the earliest deadline of the packets
// that can still time out, or stops it if there are none.
func (s *Sender) armPacketTimer(now clock.Time) {
	next := clock.Never
	for k := s.unaSeg; k < s.nxtSeg(); k++ {
		g := s.seg(k)
		if g.sacked || (g.lost && !g.retrans) {
			continue
		}
		next = min(next, g.sentAt.Add(s.packetRTO(g.timeouts)))
	}
	if next == clock.Never {
		s.rtoT.Stop()
		return
	}
	s.rtoT.Reset(max(next, now))
}
