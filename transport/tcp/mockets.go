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

// The packets whose own timer runs wait in queues by how many times their
// timer has expired (packetQueues): a packet joins the queue of its count
// each time it is sent, so within a queue send times, and with them
// deadlines (send time + packetRTO(count), one count per queue), only
// grow, and the earliest deadline of a queue is its first packet still
// waiting. The timer events and every ACK then look at the queues' heads
// instead of scanning the window (at 1 Gbit/s a window is thousands of
// packets). A packet leaves its queue lazily: an entry is stale once the
// packet is acknowledged, SACKed, marked lost or sent again.

// packetQueueCounts is the number of queues; packets whose timer expired
// more often share the last one, which is scanned whole (its deadlines
// are not in order).
const packetQueueCounts = 8

type packetQueues [packetQueueCounts]packetQueue

// packetQueue is a FIFO of sends in send order.
type packetQueue struct {
	e    []packetEntry
	head int
}

type packetEntry struct {
	k  int64      // segment number
	at clock.Time // its send time, which identifies this send
}

func (q *packetQueue) push(e packetEntry) {
	if len(q.e) == cap(q.e) && q.head > 0 && q.head >= len(q.e)-q.head {
		n := copy(q.e, q.e[q.head:])
		q.e, q.head = q.e[:n], 0
	}
	q.e = append(q.e, e)
}

// popFront drops the first entry, emptying the queue when it was the last.
func (q *packetQueue) popFront() {
	q.head++
	if q.head == len(q.e) {
		q.e, q.head = q.e[:0], 0
	}
}

// waiting returns the segment of queue c's entry e if that send still
// waits on its timer (outstanding, not SACKed, not marked lost or sent
// again meanwhile), else nil.
func (s *Sender) waiting(e packetEntry, c int) *segment {
	if e.k < s.unaSeg || e.k >= s.nxtSeg() {
		return nil
	}
	g := s.seg(e.k)
	if g.sentAt != e.at || g.sacked || (g.lost && !g.retrans) || min(int(g.timeouts), packetQueueCounts-1) != c {
		return nil
	}
	return g
}

// onPacketTimers marks lost every outstanding packet whose own timeout has
// expired, re-arms the timer at the earliest remaining deadline and sends.
func (s *Sender) onPacketTimers(now clock.Time) {
	if s.done || s.n == 0 {
		return
	}
	next, fired := s.packetDeadline(now, true)
	if fired {
		s.stats.RTOs++
	}
	s.setPacketTimer(now, next)
	s.trySend(now)
}

// packetDeadline walks the queues: it drops stale entries at their heads,
// with expire marks lost every waiting send whose timeout has passed, and
// returns the earliest deadline of the sends still waiting (clock.Never if
// none) and whether any expired.
func (s *Sender) packetDeadline(now clock.Time, expire bool) (next clock.Time, fired bool) {
	next = clock.Never
	pq := s.rare.pq
	for c := range pq {
		q := &pq[c]
		for i := q.head; i < len(q.e); i++ {
			if g := s.waiting(q.e[i], c); g != nil {
				d := g.sentAt.Add(s.packetRTO(g.timeouts))
				if !expire || now < d {
					next = min(next, d)
					if c < packetQueueCounts-1 {
						break // the rest of this queue is due later
					}
					continue
				}
				s.expirePacket(q.e[i].k, g)
				fired = true
			}
			if i == q.head {
				q.popFront() // the next entry, if any, is the new head
			}
		}
	}
	return next, fired
}

// expirePacket marks packet k lost when its own timer expires.
func (s *Sender) expirePacket(k int64, g *segment) {
	g.timeouts++
	s.markLostAgain(g)
	s.stats.MarkedLost++
	s.pendingRetx(k)
	// Packets below k were sent no later than k (new data goes out in
	// order), so they are delivered, lost or timed out too: the
	// scoreboard below k+1 is classified.
	s.lostFront = max(s.lostFront, k+1)
}

// packetSent keeps the timer at the earliest deadline when packet g goes
// out.
func (s *Sender) packetSent(now clock.Time, k int64, g *segment) {
	s.rare.pq[min(int(g.timeouts), packetQueueCounts-1)].push(packetEntry{k, now})
	if d := now.Add(s.packetRTO(g.timeouts)); d < s.rtoT.Deadline() {
		s.rtoT.Reset(d)
	}
}

// armPacketTimer sets the timer to the earliest deadline of the packets
// that can still time out, or stops it if there are none.
func (s *Sender) armPacketTimer(now clock.Time) {
	next, _ := s.packetDeadline(now, false)
	s.setPacketTimer(now, next)
}

// setPacketTimer arms the timer at next (at once if it has passed), or
// stops it for clock.Never.
func (s *Sender) setPacketTimer(now, next clock.Time) {
	if next == clock.Never {
		s.rtoT.Stop()
		return
	}
	s.rtoT.Reset(max(next, now))
}
