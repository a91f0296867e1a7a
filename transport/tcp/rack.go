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
	buf  []rackEntry
	head int
	n    int
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

func (l *rackList) push(k int64, at clock.Time, nxt int64) {
	if l.n == len(l.buf) {
		nb := make([]rackEntry, max(2*len(l.buf), 4))
		for i := range l.n {
			nb[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
		}
		l.buf, l.head = nb, 0
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = rackEntry{k, at, nxt}
	l.n++
}

func (l *rackList) pop() {
	l.head = (l.head + 1) & (len(l.buf) - 1)
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
		wait = s.rtt.Latest() + s.rackReoWnd()
	}
	for s.rack.n > 0 {
		e := s.rack.buf[s.rack.head]
		if e.k < s.unaSeg {
			s.rack.pop() // acknowledged
			continue
		}
		g := s.seg(e.k)
		if !g.retrans || g.sentAt != e.sentAt {
			s.rack.pop() // SACKed, or superseded by a later retransmission
			continue
		}
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
			if !(e.sentAt < s.rackXmit || (e.sentAt == s.rackXmit && (s.rackXmitSeg >= e.nxt || s.retransmittedAfter(e)))) {
				return clock.Never
			}
			if d := e.sentAt.Add(wait); d > now {
				return d
			}
		} else if !(e.sentAt.Add(gap) < s.rackXmit) {
			return clock.Never
		}
		s.rack.pop()
		g.retrans = false
		s.retransOut -= g.len
		s.stats.MarkedLost++
		s.pendingRetx(e.k)
	}
	return clock.Never
}

// retransmittedAfter reports whether the newest delivered segment
// (rackXmitSeg, sent in e's instant) is a retransmission sent after e, the
// list's front: then its delivery dates e. The list is in send order, so
// it is if its entry follows e's among those of that instant (Linux orders
// same-instant segments by sequence, and with retransmissions of one event
// that is the same order; over several ACKs in one instant, as a trace
// link delivers them, a later event can resend a lower segment, and only
// the send order says which left first).
func (s *Sender) retransmittedAfter(e rackEntry) bool {
	if s.rackXmitSeg < s.unaSeg {
		return false
	}
	if g := s.seg(s.rackXmitSeg); !g.everRetrans || g.sentAt != e.sentAt {
		return false
	}
	l := &s.rack
	for i := 1; i < l.n; i++ {
		f := l.buf[(l.head+i)&(len(l.buf)-1)]
		if f.sentAt != e.sentAt {
			return false
		}
		if f.k == s.rackXmitSeg {
			return true
		}
	}
	return false
}
