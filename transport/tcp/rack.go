package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// rackList holds the outstanding retransmissions in the order they were
// sent, as Linux's RACK keeps its tcp_tsorted_sent_queue: a retransmission
// is judged lost by its send time, so only the oldest ones need looking at
// and an ACK costs O(retransmissions judged), not O(window). Entries go
// stale when their segment is acknowledged, SACKed or sent again; they are
// dropped when they reach the front.
type rackList struct {
	buf []rackEntry
	// head and n fit in 32 bits: the list holds at most the outstanding
	// segments, and so keeps the Sender within its size class.
	head, n int32
}

type rackEntry struct {
	k      int64      // segment number
	sentAt clock.Time // the retransmission's send time
	// nxt is the first new segment not yet sent when it was sent: the
	// originals sent after it are those from nxt on, which orders it
	// against an original sent in the same instant (see
	// detectLostRetransmissions).
	nxt int64
}

// at returns the i-th entry from the front; i < n.
func (l *rackList) at(i int) *rackEntry {
	return &l.buf[(int(l.head)+i)&(len(l.buf)-1)]
}

// tail returns where the next entry goes; the list must have a buffer.
func (l *rackList) tail() *rackEntry { return l.at(int(l.n)) }

func (l *rackList) push(k int64, at clock.Time, nxt int64) {
	if int(l.n) == len(l.buf) {
		nb := make([]rackEntry, max(2*len(l.buf), 4))
		for i := range int(l.n) {
			nb[i] = *l.at(i)
		}
		l.buf, l.head = nb, 0
	}
	*l.tail() = rackEntry{k, at, nxt}
	l.n++
}

func (l *rackList) pop() {
	l.head = (l.head + 1) & int32(len(l.buf)-1)
	l.n--
}

func (l *rackList) clear() { l.head, l.n = 0, 0 }

// detectLostRetransmissions marks lost the retransmissions that
// Config.RACKRetransmissions' rule or, by default, the send-time gap rule
// judges lost. The gap rule: lost once a segment sent a quarter of the
// minimum RTT after it has been delivered (RFC 8985 §6.2's time ordering,
// restricted to retransmissions, which the SACK rule cannot judge). The
// time rule is Linux's (tcp_rack_detect_loss walks one send-ordered list
// of originals and retransmissions): lost once a segment sent after it
// has been delivered and the latest RTT plus the reordering window has
// passed since it was sent; the first one not yet due returns its
// deadline for the reordering timer (armRACK; clock.Never if none waits),
// so a lost retransmission followed only by segments sent just after it
// is found without a timeout.
func (s *Sender) detectLostRetransmissions(now clock.Time) clock.Time {
	timeRule := s.cfg.RACKRetransmissions && !s.cfg.NoRACK && !s.cfg.NoSACK
	var wait time.Duration
	gap := s.rtt.Min() / 4
	if timeRule {
		wait = s.rackRTTNow() + s.rackReoWnd()
	}
	for s.rack.n > 0 {
		e := *s.rack.at(0)
		if !s.outstanding(&e) {
			s.rack.pop() // acknowledged, SACKed, or superseded by a later retransmission
			continue
		}
		g := s.seg(e.k)
		if timeRule {
			// Every later entry was sent no earlier: none is lost yet.
			// Sent in the same instant, an original (rackXmitSeg) came
			// after this retransmission only if it was new then. (Linux
			// breaks the tie by sequence number, tcp_skb_sent_after,
			// which orders a burst's retransmissions before its new data
			// as tcp_xmit_retransmit_queue sends them; in the simulator
			// two ACKs arriving in one instant, as a trace link delivers
			// them, can send new data first and a retransmission after,
			// and the sequence would judge that retransmission lost as
			// soon as the new data is delivered.) A retransmission sent
			// in the same instant came after it if it was sent later.
			if !s.retxBeforeNewest(0) {
				return clock.Never
			}
			if d := e.sentAt.Add(wait); d > now {
				if s.cfg.LinuxRACKTimer {
					return s.latestRetxWait().Add(wait)
				}
				return d
			}
		} else if !(e.sentAt.Add(gap) < s.rackXmit) {
			return clock.Never
		}
		s.rack.pop()
		g.retrans = false
		s.retransOut -= g.len
		s.shortPipe(g, -1)
		s.lostRetx++
		s.stats.MarkedLost++
		s.pendingRetx(e.k)
	}
	return clock.Never
}

// latestRetxWait returns the send time of the last retransmission on the
// list that waits for RACK's time rule, given that the front one does
// (Config.LinuxRACKTimer: Linux arms its timer for the latest deadline).
// The list is in send order, so that is the last live entry sent before
// the newest delivered segment; the walk stops at the first live entry
// sent after it, so it covers the retransmissions waiting and the stale
// entries among them.
func (s *Sender) latestRetxWait() clock.Time {
	l := &s.rack
	last := l.at(0).sentAt
	for i := 1; i < int(l.n); i++ {
		e := l.at(i)
		if !s.outstanding(e) {
			continue
		}
		if !s.retxBeforeNewest(i) {
			break
		}
		last = e.sentAt
	}
	return last
}

// outstanding reports whether e is its segment's latest retransmission,
// still neither acknowledged nor SACKed; the list's other entries are
// stale.
func (s *Sender) outstanding(e *rackEntry) bool {
	if e.k < s.unaSeg {
		return false
	}
	g := s.seg(e.k)
	return g.retrans && g.sentAt == e.sentAt
}

// retxBeforeNewest reports whether the list's i-th entry was sent before
// the newest delivered segment, so that delivery dates it: earlier, or in
// the same instant before it (see detectLostRetransmissions).
func (s *Sender) retxBeforeNewest(i int) bool {
	e := s.rack.at(i)
	return e.sentAt < s.rackXmit || (e.sentAt == s.rackXmit && (s.rackXmitSeg >= e.nxt || s.retransmittedAfter(i)))
}

// retransmittedAfter reports whether the newest delivered segment
// (rackXmitSeg, sent in e's instant) is a retransmission sent after e, the
// list's i-th entry (0: the front): then its delivery dates e. The list
// is in send order, so it is if its entry follows e's among those of that
// instant (Linux orders same-instant segments by sequence, and with
// retransmissions of one event that is the same order; over several ACKs
// in one instant, as a trace link delivers them, a later event can resend
// a lower segment, and only the send order says which left first).
func (s *Sender) retransmittedAfter(i int) bool {
	l := &s.rack
	e := l.at(i)
	if s.rackXmitSeg < s.unaSeg {
		return false
	}
	if g := s.seg(s.rackXmitSeg); !g.everRetrans || g.sentAt != e.sentAt {
		return false
	}
	for i++; i < int(l.n); i++ {
		f := l.at(i)
		if f.sentAt != e.sentAt {
			return false
		}
		if f.k == s.rackXmitSeg {
			return true
		}
	}
	return false
}
