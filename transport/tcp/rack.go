package tcp

import "github.com/cclab/cclab/core/clock"

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
}

func (l *rackList) push(k int64, at clock.Time) {
	if l.n == len(l.buf) {
		nb := make([]rackEntry, max(2*len(l.buf), 4))
		for i := range l.n {
			nb[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
		}
		l.buf, l.head = nb, 0
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = rackEntry{k, at}
	l.n++
}

func (l *rackList) pop() {
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
}

func (l *rackList) clear() { l.head, l.n = 0, 0 }

// detectLostRetransmissions marks a retransmission lost again once a segment
// sent at least a quarter of the minimum RTT after it has been delivered:
// the time-ordering idea of RACK (RFC 8985 §6.2), restricted to
// retransmissions, which the SACK rule cannot judge.
func (s *Sender) detectLostRetransmissions() {
	reo := s.rtt.Min() / 4
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
		if !(e.sentAt.Add(reo) < s.rackXmit) {
			// Every later entry was sent no earlier: none is lost yet.
			return
		}
		s.rack.pop()
		g.retrans = false
		s.retransOut -= g.len
		s.stats.MarkedLost++
		if e.k < s.retxHint {
			s.retxHint = e.k
		}
	}
}
