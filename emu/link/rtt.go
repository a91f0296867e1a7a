package link

import (
	"encoding/binary"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// rttTracker measures a TCP flow's round-trip times at the emulator from
// the TCP timestamp option (RFC 7323), the way the simulator's sender does
// with its echoed send time: each data segment's TSval is remembered with
// the time the segment entered the emulator (the first segment of each
// TSval tick, Linux ticks being 1 ms), and an ACK handed to the sender
// yields the time since its TSecr's segment entered. The receiver echoes
// the segment that advanced its window (RFC 7323 section 4.3), so a segment
// held behind a hole gives no inflated sample, and a retransmission gives
// its own sample, as in Linux. Segments without the option give none.
//
// Duplicate ACKs that SACK new data give a sample too, as Linux's
// sack_rtt does: the time since the segment ending at the new highest SACK
// edge entered the emulator, unless that segment was retransmitted.
// Without them a lossy period, where most ACKs are duplicates, would be
// under-sampled.
type rttTracker struct {
	ts      [8192]tsEnt // ring of distinct TSvals in sending order
	head, n int
	// highAck is the highest cumulative ACK seen: like Linux
	// (tcp_ack_update_rtt needs FLAG_ACKED) only ACKs that acknowledge new
	// data give samples, because duplicate ACKs echo the TSval of the
	// last in-order segment, from before the hole.
	highAck uint32
	acked   bool

	// Segments by sequence, for SACK samples.
	segs      []segEnt
	sHead, sN int
	highSent  uint32 // highest segment end seen
	highSack  uint32
	sacked    bool
}

type segEnt struct {
	end  uint32
	at   clock.Time
	retx bool
}

// sackEdge returns the highest right edge among a segment's SACK blocks.
func sackEdge(b []byte, ihl int) (edge uint32, ok bool) {
	end := ihl + int(b[ihl+12]>>4)*4
	if end > len(b) {
		return 0, false
	}
	for i := ihl + 20; i < end; {
		switch kind := b[i]; kind {
		case 0:
			return edge, ok
		case 1:
			i++
		default:
			if i+1 >= end {
				return edge, ok
			}
			l := int(b[i+1])
			if l < 2 || i+l > end {
				return edge, ok
			}
			if kind == 5 {
				for j := i + 2; j+8 <= i+l; j += 8 {
					if e := binary.BigEndian.Uint32(b[j+4:]); !ok || after(e, edge) {
						edge, ok = e, true
					}
				}
			}
			i += l
		}
	}
	return edge, ok
}

// onSegment remembers a data segment by sequence, or marks the segments
// a retransmission covers.
func (r *rttTracker) onSegment(seq, end uint32, now clock.Time) {
	if r.sN > 0 && !after(end, r.highSent) {
		for i := range r.sN {
			e := &r.segs[(r.sHead+i)%len(r.segs)]
			if after(e.end, seq) && !after(e.end, end) {
				e.retx = true
			}
		}
		return
	}
	r.highSent = end
	if r.sN == len(r.segs) {
		nb := make([]segEnt, max(64, 2*len(r.segs)))
		for i := range r.sN {
			nb[i] = r.segs[(r.sHead+i)%len(r.segs)]
		}
		r.segs, r.sHead = nb, 0
	}
	r.segs[(r.sHead+r.sN)%len(r.segs)] = segEnt{end: end, at: now}
	r.sN++
}

// forget drops the segments a cumulative ACK covers.
func (r *rttTracker) forget(ack uint32) {
	for r.sN > 0 && !after(r.segs[r.sHead].end, ack) {
		r.segs[r.sHead] = segEnt{}
		r.sHead = (r.sHead + 1) % len(r.segs)
		r.sN--
	}
}

// sackSample is the SACK RTT of a duplicate ACK whose highest SACK edge
// advanced.
func (r *rttTracker) sackSample(b []byte, ihl int, now clock.Time) (time.Duration, bool) {
	edge, ok := sackEdge(b, ihl)
	if !ok || (r.sacked && !after(edge, r.highSack)) {
		return 0, false
	}
	r.highSack, r.sacked = edge, true
	for i := range r.sN {
		e := r.segs[(r.sHead+i)%len(r.segs)]
		if e.end == edge {
			if e.retx {
				return 0, false
			}
			return now.Sub(e.at), true
		}
		if after(e.end, edge) {
			break
		}
	}
	return 0, false
}

type tsEnt struct {
	val uint32
	at  clock.Time
}

// timestamps returns the TSval and TSecr of a TCP segment whose header
// starts at ihl.
func timestamps(b []byte, ihl int) (val, ecr uint32, ok bool) {
	if len(b) < ihl+20 {
		return 0, 0, false
	}
	end := ihl + int(b[ihl+12]>>4)*4
	if end > len(b) {
		return 0, 0, false
	}
	for i := ihl + 20; i < end; {
		switch kind := b[i]; kind {
		case 0:
			return 0, 0, false
		case 1:
			i++
		default:
			if i+1 >= end {
				return 0, 0, false
			}
			l := int(b[i+1])
			if l < 2 || i+l > end {
				return 0, 0, false
			}
			if kind == 8 && l == 10 {
				return binary.BigEndian.Uint32(b[i+2:]), binary.BigEndian.Uint32(b[i+6:]), true
			}
			i += l
		}
	}
	return 0, 0, false
}

func (r *rttTracker) onData(b []byte, now clock.Time) {
	plen := payloadLen(b)
	if plen == 0 {
		return
	}
	ihl := int(b[0]&0x0f) * 4
	seq := binary.BigEndian.Uint32(b[ihl+4:])
	r.onSegment(seq, seq+uint32(plen), now)
	val, _, ok := timestamps(b, ihl)
	if !ok {
		return
	}
	if r.n > 0 && r.ts[(r.head+r.n-1)%len(r.ts)].val == val {
		return // same tick: keep its first segment's time
	}
	if r.n == len(r.ts) {
		r.head = (r.head + 1) % len(r.ts)
		r.n--
	}
	r.ts[(r.head+r.n)%len(r.ts)] = tsEnt{val, now}
	r.n++
}

func (r *rttTracker) onAck(b []byte, now clock.Time) (time.Duration, bool) {
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+14 || b[ihl+13]&0x10 == 0 || r.n == 0 {
		return 0, false
	}
	ack := binary.BigEndian.Uint32(b[ihl+8:])
	if r.acked && !after(ack, r.highAck) {
		return r.sackSample(b, ihl, now)
	}
	r.highAck, r.acked = ack, true
	r.forget(ack)
	_, ecr, ok := timestamps(b, ihl)
	if !ok {
		return 0, false
	}
	// Binary search over the ring in sending order (TSvals only grow,
	// modulo 2^32).
	lo, hi := 0, r.n
	for lo < hi {
		mid := (lo + hi) / 2
		if after(ecr, r.ts[(r.head+mid)%len(r.ts)].val) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == r.n {
		return 0, false
	}
	e := r.ts[(r.head+lo)%len(r.ts)]
	if e.val != ecr {
		return 0, false
	}
	return now.Sub(e.at), true
}

// after reports a > b in 32-bit sequence space.
func after(a, b uint32) bool { return int32(a-b) > 0 }
