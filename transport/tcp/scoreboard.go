package tcp

import (
	"github.com/cclab/cclab/cc/estimate"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// segment is the scoreboard entry of one MSS-sized segment between SND.UNA
// and SND.NXT. Segment boundaries never change: retransmissions resend the
// same bytes, which lets the scoreboard be a ring indexed by segment number.
type segment struct {
	sentAt clock.Time // last (re)transmission
	// Delivery-rate snapshot at the last transmission (an estimate.Stamp,
	// kept field by field so that its flag packs with the others: a
	// segment is 48 bytes, not 56).
	delivered     units.Bytes
	deliveredTime clock.Time
	firstSentTime clock.Time

	len         units.Bytes
	appLimited  bool
	sacked      bool
	lost        bool // marked lost and not yet SACKed
	retrans     bool // retransmitted since it was marked lost, still outstanding
	everRetrans bool
	timeouts    uint16 // Mockets: times its own timer expired (mockets.go)
}

// The scoreboard ring: segment number k is at
// ring[(head + k - unaSeg) mod len(ring)]; the length is a power of two, so
// the index wraps with a mask.

func (s *Sender) seg(k int64) *segment {
	return &s.ring[(int(s.head)+int(k-s.unaSeg))&(len(s.ring)-1)]
}

func (s *Sender) nxtSeg() int64 { return s.unaSeg + int64(s.n) }

// noteRunt lists the segment being added, of n bytes, if it is short
// and not the transfer's last (whose shortness shifts no later segment).
func (s *Sender) noteRunt(n units.Bytes) {
	if n < s.cfg.MSS && s.nxt+int64(n) < s.total {
		r := &s.counts().runts
		r.acked(s.unaSeg)
		r.add(s.nxtSeg()-1, s.cfg.MSS-n)
	}
}

// segStart is the first byte of segment k: k MSSs, less the shortfall of
// the short segments before it (runt.go). Kept small enough to inline:
// only LinuxReceiveWindow senders have short segments.
func (s *Sender) segStart(k int64) int64 {
	if !s.cfg.LinuxReceiveWindow {
		return k * int64(s.cfg.MSS)
	}
	return s.segStartShort(k)
}

//go:noinline
func (s *Sender) segStartShort(k int64) int64 {
	st := k * int64(s.cfg.MSS)
	if s.rare != nil {
		st -= s.rare.runts.before(k)
	}
	return st
}

// segAt is the segment that holds byte b, at or above SND.UNA; inlined
// like segStart.
func (s *Sender) segAt(b int64) int64 {
	if !s.cfg.LinuxReceiveWindow {
		return b / int64(s.cfg.MSS)
	}
	return s.segAtShort(b)
}

//go:noinline
func (s *Sender) segAtShort(b int64) int64 {
	if s.rare == nil {
		return b / int64(s.cfg.MSS)
	}
	return s.rare.runts.segAt(b, int64(s.cfg.MSS))
}

// minRing is the scoreboard's smallest length: an initial window of ten
// segments fits.
const minRing = 16

// resize moves the scoreboard to a ring of length size (a power of two,
// at least s.n).
func (s *Sender) resize(size int) {
	nr := make([]segment, size)
	for i := range int(s.n) {
		nr[i] = s.ring[(int(s.head)+i)&(len(s.ring)-1)]
	}
	s.ring, s.head = nr, 0
}

// newLen is the length of the next new segment: an MSS, or what is left
// of a finite transfer.
func (s *Sender) newLen() units.Bytes {
	return units.Bytes(min(int64(s.cfg.MSS), s.total-s.nxt))
}

// addSegment appends the next new segment to the scoreboard: a whole
// one, or the rest of a finite transfer; runt bytes if runt > 0 (a short
// segment at the peer's window edge, runt.go).
func (s *Sender) addSegment(runt units.Bytes) *segment {
	if int(s.n) == len(s.ring) {
		s.resize(2 * len(s.ring))
	}
	s.n++
	s.ringPeak = max(s.ringPeak, s.n)
	g := s.seg(s.nxtSeg() - 1)
	n := s.newLen()
	if runt > 0 {
		n = runt
		s.noteRunt(n)
	}
	*g = segment{len: n}
	s.nxt += int64(n)
	s.outBytes += n
	s.shortPipe(g, 1)
	return g
}

// ackCumulative removes the segments below ackNo from the scoreboard,
// delivering those not SACKed before.
func (s *Sender) ackCumulative(now clock.Time, ackNo int64, rs *estimate.Sample, acked *units.Bytes) {
	for s.n > 0 {
		g := s.seg(s.unaSeg)
		if s.segStart(s.unaSeg)+int64(g.len) > ackNo {
			break
		}
		if g.everRetrans && s.rtt.Split() {
			// Karn's rule for the RTO estimator, SACKed before or not.
			rs.NoteRetransAcked()
		}
		if g.sacked {
			s.sacked -= g.len
		} else {
			s.leavePipe(g) // lost, retransOut and outBytes, below
			if g.lost {
				s.lost -= g.len
			}
			if g.retrans {
				s.retransOut -= g.len
			}
			if s.unaSeg < s.highSacked && !g.everRetrans {
				s.reordSeen = true // Linux tcp_clean_rtx_queue's reord
			}
			if s.rtt.Split() && !g.everRetrans {
				rs.NoteCumulative(g.sentAt)
			}
			s.deliver(now, s.unaSeg, g, rs)
			*acked += g.len
		}
		s.outBytes -= g.len
		s.stats.BytesAcked += g.len
		// The slot is not cleared: nothing reads a slot outside
		// [unaSeg, nxtSeg), and addSegment overwrites it whole.
		s.head = (s.head + 1) & int32(len(s.ring)-1)
		s.n--
		s.unaSeg++
		if s.head == 0 {
			s.ringWrapped()
		}
	}
	s.una = s.segStart(s.unaSeg)
	if s.n == 0 {
		s.una = s.nxt // the last segment may be short
	}
}

// ringWrapped runs each time the ring's first slot comes round again, after
// a ring's length of segments has been acknowledged: if the window stayed
// at an eighth of the ring or less all that time (a slow start's overshoot
// long over, a timeout), the ring shrinks to between four and eight times
// the window's peak, giving the memory back. A window must then grow
// fourfold to grow the ring again, and a window that dips for less than a
// ring's length of segments (BBR's PROBE_RTT) keeps its ring, so a sawtooth
// (a halving per loss) never resizes it.
func (s *Sender) ringWrapped() {
	if size := len(s.ring); size > minRing && int(s.ringPeak) <= size/8 {
		for size > minRing && int(s.ringPeak) <= size/8 {
			size /= 2
		}
		s.resize(size)
	}
	s.ringPeak = s.n
}

// sackRange marks the segments of block b as SACKed, skipping the parts
// covered by the previous ACK's blocks, which keeps SACK processing
// O(new information). oldest falls to the earliest send time of a newly
// SACKed segment never retransmitted (Linux's first_sackt).
func (s *Sender) sackRange(now clock.Time, b packet.Block, rs *estimate.Sample, acked *units.Bytes, oldest *clock.Time) {
	start, end := max(b.Start, s.una), min(b.End, s.nxt)
	if start >= end {
		return
	}
	// Subtract the previous ACK's blocks (each at most once).
	for i := range int(s.nPrevSACK) {
		pb := s.prevSACK[i]
		if pb.Start <= start && pb.End >= end {
			return
		}
		if pb.Start <= start && pb.End > start {
			start = pb.End
		} else if pb.End >= end && pb.Start < end {
			end = pb.Start
		}
	}
	for k := s.segAt(start); k < s.nxtSeg() && s.segStart(k) < end; k++ {
		if k < s.unaSeg {
			continue
		}
		// Blocks are segment-aligned (the receiver reports whole
		// segments), so every segment starting in [start, end) is covered.
		g := s.seg(k)
		if g.sacked {
			continue
		}
		s.leavePipe(g) // sacked, lost and retransOut, below
		g.sacked = true
		s.sacked += g.len
		if !g.everRetrans {
			*oldest = min(*oldest, g.sentAt)
			if k < s.highSacked {
				s.reordSeen = true // Linux tcp_sacktag_one's state->reord
			}
		}
		if g.lost {
			s.lost -= g.len
			g.lost = false
		}
		if g.retrans {
			s.retransOut -= g.len
			g.retrans = false
		}
		s.deliver(now, k, g, rs)
		*acked += g.len
		if k > s.highSacked {
			s.highSacked = k
		}
	}
}

// markLost marks segment k lost (it must be neither SACKed nor lost).
func (s *Sender) markLost(k int64, g *segment) {
	g.lost = true
	s.lost += g.len
	s.shortPipe(g, -1)
	s.stats.MarkedLost++
	s.pendingRetx(k)
}

// markLostAgain marks g lost whether or not a retransmission of it is
// outstanding, which is then forgotten (a timeout); it reports whether g
// was not marked lost before.
func (s *Sender) markLostAgain(g *segment) bool {
	if g.retrans {
		g.retrans = false
		s.retransOut -= g.len
		s.shortPipe(g, -1)
		if g.lost {
			// A retransmission of a segment marked lost, lost in turn
			// (Linux's tcp_timeout_mark_lost counts it in
			// TCPLostRetransmit too); a probe's is not.
			s.lostRetx++
		}
	}
	if g.lost {
		return false
	}
	g.lost = true
	s.lost += g.len
	s.shortPipe(g, -1)
	return true
}

// pendingRetx records that segment k now waits for retransmission. The
// scan for the next one (nextSegment) resumes from retxHint; a segment
// below it (a retransmission lost in turn, found by RACK) is listed in
// retxLow instead of pulling the hint back to it, which made the next
// scans walk again over every SACKed and retransmitted segment between it
// and the hint: a window's length for each lost retransmission.
func (s *Sender) pendingRetx(k int64) {
	if k < s.retxHint {
		if s.retxLow == nil {
			s.retxLow = new(retxHeap)
		}
		s.retxLow.push(k)
	}
}

// resetRetxHint makes the next scan start from the first unacknowledged
// segment, which covers every segment retxLow lists.
func (s *Sender) resetRetxHint() {
	s.retxHint = s.unaSeg
	if s.retxLow != nil {
		s.retxLow.clear()
	}
}

// markTimedOut marks segments lost after a retransmission timeout, keeping
// SACK information. With spare it is Linux's tcp_timeout_mark_lost (since
// 4.18, with RACK; this kernel's 6.x does it for every connection): the
// first unacknowledged segment is lost, and every other un-SACKed one only
// if it was (re)sent at least an RTT ago (RACK's RTT, reordering window 0);
// those sent since are left in flight, and RACK judges them as their ACKs
// come. Without spare every un-SACKed outstanding segment is lost and
// outstanding retransmissions are forgotten (RFC 6675 with RFC 6298, ns-3,
// Linux before 4.18), which resends a whole window of segments that are
// merely queued when the timeout fires because the path's delay has grown
// (a link switch to a slower, deeper-queued radio), each a spurious
// retransmission.
func (s *Sender) markTimedOut(now clock.Time, spare bool) {
	rtt := s.rackRTTNow()
	all := true
	highest := s.unaSeg
	for k := s.unaSeg; k < s.nxtSeg(); k++ {
		g := s.seg(k)
		if g.sacked {
			continue
		}
		if spare && k != s.unaSeg && rtt > 0 && now.Sub(g.sentAt) < rtt {
			all = false
			continue
		}
		if s.markLostAgain(g) {
			s.stats.MarkedLost++
		}
		highest = k
	}
	if all {
		s.rack.clear()
		s.lostFront = s.nxtSeg()
	} else {
		// Outstanding retransmissions spared stay on the RACK list, and
		// the spared originals are RACK's to judge again.
		s.lostFront = max(s.lostFront, highest+1)
		s.rackFront, s.rackScan = s.unaSeg, s.unaSeg
	}
	s.resetRetxHint()
	s.dupAcks, s.renoSacked = 0, 0
}

// nextSegment implements RFC 6675 NextSeg() rules 1 and 2: the lowest lost
// segment not yet retransmitted, else new data. It returns -1 if neither.
func (s *Sender) nextSegment() (int64, bool) {
	end := min(s.lostFront, s.nxtSeg())
	// Every segment waiting below retxHint is listed, so the lowest
	// listed one still waiting is the lowest of all.
	for s.retxLow != nil && s.retxLow.len() > 0 {
		k := s.retxLow.min()
		if k >= end {
			break
		}
		if k >= s.unaSeg {
			if g := s.seg(k); g.lost && !g.retrans && !g.sacked {
				return k, true
			}
		}
		s.retxLow.pop() // retransmitted, SACKed or acknowledged since
	}
	for k := max(s.retxHint, s.unaSeg); k < end; k++ {
		g := s.seg(k)
		if g.lost && !g.retrans && !g.sacked {
			s.retxHint = k
			return k, true
		}
	}
	s.retxHint = end
	if s.nxt >= s.total || !s.pendingRoom() {
		return -1, false
	}
	return s.nxtSeg(), false
}

// pendingRoom reports whether Config.PendingQueue leaves room for one more
// new segment. A full queue stops new data as the application would block
// on a full send buffer, so the sender counts as application-limited.
func (s *Sender) pendingRoom() bool {
	return s.cfg.PendingQueue == 0 || s.outBytes+min(s.cfg.MSS, units.Bytes(s.total-s.nxt)) <= s.cfg.PendingQueue
}

// retxHeap is a min-heap of segment numbers (Sender.retxLow): a few
// entries, one per retransmission lost in turn since the last timeout.
type retxHeap struct{ k []int64 }

func (h *retxHeap) len() int   { return len(h.k) }
func (h *retxHeap) min() int64 { return h.k[0] }
func (h *retxHeap) clear()     { h.k = h.k[:0] }

func (h *retxHeap) push(k int64) {
	h.k = append(h.k, k)
	i := len(h.k) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.k[p] <= k {
			break
		}
		h.k[i] = h.k[p]
		i = p
	}
	h.k[i] = k
}

func (h *retxHeap) pop() {
	n := len(h.k) - 1
	x := h.k[n]
	h.k = h.k[:n]
	if n == 0 {
		return
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.k[c+1] < h.k[c] {
			c++
		}
		if x <= h.k[c] {
			break
		}
		h.k[i] = h.k[c]
		i = c
	}
	h.k[i] = x
}
