package link

import (
	"encoding/binary"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// rttTracker measures a TCP flow's round-trip times at the emulator, the
// way a sender does without timestamps: a data segment's time is taken
// when it enters the emulator, and the ACK whose cumulative number equals
// the segment's end yields a sample when it is handed to the sender.
// Retransmitted ranges give no sample (Karn's rule).
type rttTracker struct {
	ents    []rttEnt // ring of segments in sequence order
	head, n int
	high    uint32 // highest segment end seen
	started bool
}

type rttEnt struct {
	end  uint32
	at   clock.Time
	retx bool
}

// after reports a > b in 32-bit sequence space.
func after(a, b uint32) bool { return int32(a-b) > 0 }

func (r *rttTracker) onData(b []byte, now clock.Time) {
	plen := payloadLen(b)
	if plen == 0 {
		return
	}
	ihl := int(b[0]&0x0f) * 4
	seq := binary.BigEndian.Uint32(b[ihl+4:])
	end := seq + uint32(plen)
	if r.started && !after(end, r.high) {
		// A retransmission: every remembered segment ending inside it is
		// now ambiguous.
		for i := range r.n {
			e := &r.ents[(r.head+i)%len(r.ents)]
			if after(e.end, seq) && !after(e.end, end) {
				e.retx = true
			}
		}
		return
	}
	r.high, r.started = end, true
	if r.n == len(r.ents) {
		nb := make([]rttEnt, max(64, 2*len(r.ents)))
		for i := range r.n {
			nb[i] = r.ents[(r.head+i)%len(r.ents)]
		}
		r.ents, r.head = nb, 0
	}
	r.ents[(r.head+r.n)%len(r.ents)] = rttEnt{end: end, at: now}
	r.n++
}

func (r *rttTracker) onAck(b []byte, now clock.Time) (time.Duration, bool) {
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+14 || b[ihl+13]&0x10 == 0 || !r.started {
		return 0, false
	}
	ack := binary.BigEndian.Uint32(b[ihl+8:])
	var got rttEnt
	found := false
	for r.n > 0 && !after(r.ents[r.head].end, ack) {
		e := r.ents[r.head]
		r.head = (r.head + 1) % len(r.ents)
		r.n--
		if e.end == ack && !e.retx {
			got, found = e, true
		}
	}
	if !found {
		return 0, false
	}
	return now.Sub(got.at), true
}
