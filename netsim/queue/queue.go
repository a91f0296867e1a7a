// Package queue implements the bottleneck's queue disciplines: DropTail
// (limit in packets or bytes), RED (Floyd and Jacobson 1993, with the gentle
// variant) and CoDel (RFC 8289). Queues hold packets in a ring buffer that
// grows to the working size and is then reused: no allocation per packet.
package queue

import (
	"fmt"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/prefetch"
	"github.com/cclab/cclab/netsim/packet"
)

// Queue is a queue discipline.
type Queue interface {
	// Enqueue offers p at time now. It returns false if the discipline
	// drops it; the caller then owns p again.
	Enqueue(p *packet.Packet, now clock.Time) bool
	// Dequeue returns the next packet to transmit, or nil if none. A
	// discipline that drops at dequeue (CoDel) hands dropped packets to the
	// drop function given to its constructor.
	Dequeue(now clock.Time) *packet.Packet
	// Len returns the number of queued packets.
	Len() int
	// Bytes returns the number of queued bytes.
	Bytes() units.Bytes
}

// ring is a FIFO of packets.
type ring struct {
	buf     []*packet.Packet
	head, n int
	bytes   units.Bytes
}

// The buffer's length is a power of two, so indices wrap with a mask.
func (r *ring) push(p *packet.Packet) {
	if r.n == len(r.buf) {
		nb := make([]*packet.Packet, max(16, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = p
	r.n++
	r.bytes += p.Size
}

func (r *ring) pop() *packet.Packet {
	if r.n == 0 {
		return nil
	}
	p := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.bytes -= p.Size
	if r.n > 0 {
		// The next packet out has waited its queueing delay and is likely
		// no longer cached: start loading it now, a transmission time
		// before the link reads it.
		prefetch.Line(unsafe.Pointer(r.buf[r.head]))
	}
	return p
}

// Limit bounds a queue in packets or bytes; exactly one is positive.
type Limit struct {
	Packets int
	Bytes   units.Bytes
}

func (l Limit) validate() error {
	if (l.Packets > 0) == (l.Bytes > 0) {
		return fmt.Errorf("queue limit must be a positive packet count or byte size, got %d packets, %d bytes", l.Packets, l.Bytes)
	}
	return nil
}

// admits reports whether a packet of size fits with n packets and b bytes
// already queued.
func (l Limit) admits(n int, b, size units.Bytes) bool {
	if l.Packets > 0 {
		return n < l.Packets
	}
	return b+size <= l.Bytes
}

// reached reports whether n packets and b bytes are at least the limit.
func (l Limit) reached(n int, b units.Bytes) bool {
	if l.Packets > 0 {
		return n >= l.Packets
	}
	return b >= l.Bytes
}

// String formats the limit as in scenario files.
func (l Limit) String() string {
	if l.Packets > 0 {
		return fmt.Sprintf("%d packets", l.Packets)
	}
	return l.Bytes.String()
}

// Marker is implemented by queues that can mark packets CE (RFC 3168)
// instead of dropping them: Marks counts the packets marked so far, and
// Marking reports whether marking is configured.
type Marker interface {
	Marks() int
	Marking() bool
}

// DropTail is a FIFO that drops arrivals when full. With a marking
// threshold it also marks an ECN-capable arrival CE when the queue it
// joins holds at least the threshold, the step marking DCTCP asks of a
// switch (RFC 8257 §3.1; ns-3's and Linux's RED with min_th = max_th and
// no averaging do the same).
type DropTail struct {
	q      ring
	limit  Limit
	markAt Limit // zero: no marking
	marks  int
}

// NewDropTail returns a DropTail queue.
func NewDropTail(limit Limit) (*DropTail, error) {
	if err := limit.validate(); err != nil {
		return nil, err
	}
	return &DropTail{limit: limit}, nil
}

// Enqueue implements Queue.
func (d *DropTail) Enqueue(p *packet.Packet, now clock.Time) bool {
	if !d.limit.admits(d.q.n, d.q.bytes, p.Size) {
		return false
	}
	if d.markAt != (Limit{}) && d.markAt.reached(d.q.n, d.q.bytes) && p.Mark() {
		d.marks++
	}
	p.EnqueuedAt = now
	d.q.push(p)
	return true
}

// SetMarkThreshold makes the queue mark ECN-capable arrivals CE when it
// holds at least t (packets or bytes) on their arrival; a zero Limit
// turns marking off.
func (d *DropTail) SetMarkThreshold(t Limit) error {
	if t != (Limit{}) {
		if err := t.validate(); err != nil {
			return fmt.Errorf("mark threshold: %w", err)
		}
	}
	d.markAt = t
	return nil
}

// Marks implements Marker.
func (d *DropTail) Marks() int { return d.marks }

// Marking implements Marker.
func (d *DropTail) Marking() bool { return d.markAt != (Limit{}) }

// Dequeue implements Queue.
func (d *DropTail) Dequeue(clock.Time) *packet.Packet { return d.q.pop() }

// Len implements Queue.
func (d *DropTail) Len() int { return d.q.n }

// Bytes implements Queue.
func (d *DropTail) Bytes() units.Bytes { return d.q.bytes }

// Limit returns the queue's limit.
func (d *DropTail) Limit() Limit { return d.limit }

// SetLimit changes the limit; packets already queued stay.
func (d *DropTail) SetLimit(l Limit) error {
	if err := l.validate(); err != nil {
		return err
	}
	d.limit = l
	return nil
}
