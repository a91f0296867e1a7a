package tcp

import "github.com/cclab/cclab/core/units"

// Segments shorter than an MSS at the peer's window edge
// (Config.LinuxReceiveWindow). Linux sends new data up to the right edge
// of the window once the first whole segment of a send fits
// (tcp_snd_wnd_test, then tcp_mss_split_point): with Nagle off
// (TCP_NODELAY, which Go's net package sets on every TCP socket and so on
// the emulator's kernel senders), the split keeps the partial segment at
// the edge rather than wait for a window that fits a whole one
// (tcp_nagle_check; with Nagle on, Sender.UseNagle, only while no other
// short segment is unacknowledged). The window moves in multiples of its
// scale (1,024 bytes), not of the MSS, so a sender that only the
// receiver's window holds sends a short segment at the end of nearly
// every ACK's burst: on
// satcom-uhf the kernel's Hybla sent 206 of its 774 data segments short
// (139 of them 176 bytes, 3 x 1,024 - 2 x 1,448). Each counts as a
// packet in a queue that counts packets, in the receiver's window
// growth (tcp_grow_window opens two segments per segment, whatever its
// size) and in the sender's own congestion window, which Linux counts in
// packets (shortPipe), so the window opens faster and the queue
// overflows sooner than with whole segments only.
//
// Segment boundaries stay fixed once sent (a retransmission resends the
// same bytes; Linux's tcp_retrans_try_collapse, which may merge short
// segments on retransmission, is not modelled), so segment k starts at
// k x MSS less the shortfall of the short segments before it. Only
// LinuxReceiveWindow senders send them, and only those keep the list.

// runtState lists the short segments outstanding, in segment order, and
// the shortfall of those acknowledged. Acknowledged ones are dropped
// lazily (acked, when the list is added to or asked whether one is
// outstanding), so an ACK costs nothing here: a mark below SND.UNA leaves
// before and segAt right for the segments at or above it.
type runtState struct {
	// base is the total shortfall (MSS less length) of the short
	// segments below the first listed one.
	base  int64
	marks []runtMark
	head  int // marks[:head] are no longer outstanding
}

// runtMark is a short segment k and the total shortfall of the short
// segments up to and including it.
type runtMark struct{ k, cum int64 }

// before is the total shortfall of the short segments below segment k.
func (r *runtState) before(k int64) int64 {
	m := r.marks[r.head:]
	if len(m) == 0 || m[0].k >= k {
		return r.base
	}
	if last := m[len(m)-1]; last.k < k {
		return last.cum
	}
	// The last mark below k.
	lo, hi := 0, len(m)-1 // m[lo].k < k <= m[hi].k
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if m[mid].k < k {
			lo = mid
		} else {
			hi = mid
		}
	}
	return m[lo].cum
}

// segAt is the segment that holds byte b (at or above SND.UNA).
func (r *runtState) segAt(b, mss int64) int64 {
	// A mark's segment ends at (k+1) x MSS less its cum: find the last
	// one ending at or below b; the segments after it are whole up to the
	// next short one, which itself ends before (k+1) x MSS.
	m := r.marks[r.head:]
	end := func(i int) int64 { return (m[i].k+1)*mss - m[i].cum }
	if len(m) == 0 || end(0) > b {
		return (b + r.base) / mss
	}
	lo, hi := 0, len(m) // end(lo) <= b < end(hi), end(len(m)) = infinity
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if end(mid) <= b {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (b + m[lo].cum) / mss
}

// add records that segment k went out short bytes short of an MSS.
func (r *runtState) add(k int64, short units.Bytes) {
	cum := r.base
	if len(r.marks) > r.head {
		cum = r.marks[len(r.marks)-1].cum
	}
	if r.head > 0 && r.head == len(r.marks) {
		// Nothing listed: reuse the slice from its start.
		r.marks, r.head = r.marks[:0], 0
	} else if r.head >= 64 && 2*r.head >= len(r.marks) {
		n := copy(r.marks, r.marks[r.head:])
		r.marks, r.head = r.marks[:n], 0
	}
	r.marks = append(r.marks, runtMark{k, cum + int64(short)})
}

// acked forgets the short segments below una, counting them in base.
func (r *runtState) acked(una int64) {
	for r.head < len(r.marks) && r.marks[r.head].k < una {
		r.base = r.marks[r.head].cum
		r.head++
	}
}

// outstandingAt reports whether a short segment is unacknowledged with
// SND.UNA at segment una (Linux's tcp_minshall_check: snd_sml, the end of
// the last short segment sent, above snd_una; the transfer's last
// segment, which Linux sends with the FIN whatever Nagle says, is never
// listed).
func (r *runtState) outstandingAt(una int64) bool {
	r.acked(una)
	return len(r.marks) > r.head
}

// windowEdge decides the next new segment at the peer's window: ok and n
// = 0 for a whole segment (or the rest of a finite transfer) when it fits;
// ok and n > 0 for a short segment of n bytes, the room left, when a send
// of new data in this same pass (sentNew) has reached the edge and Nagle
// does not hold it back (UseNagle); not ok when the window stops the
// sender here.
func (s *Sender) windowEdge(sentNew bool) (n units.Bytes, ok bool) {
	if !s.hasSndWnd {
		return 0, true
	}
	room := s.una + s.sndWnd - s.nxt
	if room >= min(int64(s.cfg.MSS), s.total-s.nxt) {
		return 0, true
	}
	if !sentNew || room <= 0 || (s.nagle && s.rare != nil && s.rare.runts.outstandingAt(s.unaSeg)) {
		return 0, false
	}
	return units.Bytes(room), true
}

// UseNagle leaves Nagle's algorithm on in the sending application (no
// TCP_NODELAY) for Config.LinuxReceiveWindow's short segments: a send that
// reaches the peer's window edge keeps its partial segment back while
// another short segment is unacknowledged (Linux's tcp_nagle_check with
// Minshall's rule, tcp_minshall_check). Without it the partial segment
// goes, as with TCP_NODELAY, which Go sets on every TCP socket and so on
// the emulator's kernel senders. Call it before Start.
func (s *Sender) UseNagle() { s.nagle = true }

// shortPipe moves what segment g lacks of an MSS into the pipe (sign 1)
// or out of it (-1), beside each change of the byte counters that
// InFlight sums. Linux counts its congestion window and the data in
// flight in packets (tcp_cwnd_test, tcp_packets_in_flight), so with
// Config.LinuxReceiveWindow, whose short segments are Linux's, a short
// segment (at the window's edge, or a finite transfer's last) takes a
// whole segment's room under the window, in PRR's pipe and in the rate
// sample's data in flight, as in Linux.
func (s *Sender) shortPipe(g *segment, sign units.Bytes) {
	if g.len < s.cfg.MSS && s.cfg.LinuxReceiveWindow {
		s.counts().pipeShort += sign * (s.cfg.MSS - g.len)
	}
}

// leavePipe is shortPipe for a segment being SACKed or cumulatively
// acknowledged, which takes it out of the pipe as many times as it counts
// there: once outstanding, none while marked lost, once more for a
// retransmission out (RFC 6675's pipe; g not yet SACKed).
func (s *Sender) leavePipe(g *segment) {
	if g.len < s.cfg.MSS && s.cfg.LinuxReceiveWindow {
		n := units.Bytes(1)
		if g.lost {
			n--
		}
		if g.retrans {
			n++
		}
		s.counts().pipeShort -= n * (s.cfg.MSS - g.len)
	}
}
