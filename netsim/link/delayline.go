package link

import (
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/internal/prefetch"
	"github.com/cclab/cclab/netsim/packet"
)

// DelayLine models propagation: each packet pushed in comes out after its
// delay. Packets are kept in arrival order in a ring with one timer for the
// head, so a path with thousands of packets in flight costs one heap entry,
// not thousands, and flows with the same delay can share one line. When
// the delay drops (a link switch), a later packet can arrive before an
// earlier one, as on a real re-routed path and as in ns-3; it is then
// inserted in order, which is the only non-O(1) case.
type DelayLine struct {
	sched *sim.Scheduler
	out   packet.Receiver
	pf    Prefetcher // told about the next packets out, if set
	timer *sim.Timer
	buf   []inflight
	head  int
	n     int
}

type inflight struct {
	at  clock.Time
	seq uint64 // the scheduler's sequence number at the push
	p   *packet.Packet
}

// NewDelayLine returns a delay line delivering to out.
func NewDelayLine(s *sim.Scheduler, out packet.Receiver) *DelayLine {
	d := &DelayLine{sched: s, out: out, buf: make([]inflight, 8)}
	d.timer = s.HotTimer(d.fire)
	return d
}

// Len returns the number of packets in flight on the line.
func (d *DelayLine) Len() int { return d.n }

// Push sends p, to arrive at now+delay.
func (d *DelayLine) Push(now clock.Time, p *packet.Packet, delay time.Duration) {
	at := now.Add(delay)
	if d.n == len(d.buf) {
		nb := make([]inflight, 2*len(d.buf))
		for i := range d.n {
			nb[i] = d.buf[(d.head+i)&(len(d.buf)-1)]
		}
		d.buf, d.head = nb, 0
	}
	// Insert from the tail; ties keep push order. The buffer's length is a
	// power of two, so indices wrap with a mask.
	i := d.n
	mask := len(d.buf) - 1
	for i > 0 {
		prev := d.buf[(d.head+i-1)&mask]
		if prev.at <= at {
			break
		}
		d.buf[(d.head+i)&mask] = prev
		i--
	}
	seq := d.sched.Seq()
	d.buf[(d.head+i)&mask] = inflight{at, seq, p}
	d.n++
	if i == 0 {
		d.timer.ResetSeq(at, seq)
	}
}

// A Prefetcher is a Receiver that can prepare for packets before they
// arrive. Before each delivery a delay line calls Prefetch once with its
// next three packets out (near is delivered next, far third; nil where
// fewer are in flight), so each packet is announced PrefetchStages times,
// as far, then mid, then near, one stage per packet delivered, and the
// line has started loading the packet itself a stage before. Reading what
// the previous stage prefetched and prefetching the next pointer in the
// chain (packet, then flow, then endpoint, then the endpoint's own
// objects) hides the memory latency of a many-flow simulation's state
// behind the events in between. One call serves the three stages (one per
// stage took 31 more instructions per event at a thousand flows, 2.7% of
// them). It must not change any state.
type Prefetcher interface {
	Prefetch(near, mid, far *packet.Packet)
}

// SetPrefetcher makes the line tell pf about its next packets out (nil:
// nobody). Prefetching pays when the state the packets lead to does not fit
// in the caches; on a small simulation it is overhead.
func (d *DelayLine) SetPrefetcher(pf Prefetcher) { d.pf = pf }

// PrefetchStages is the depth of a delay line's prefetch pipeline.
const PrefetchStages = 3

// packetLines is the cache lines of a packet (line-aligned by the
// allocator): the receiver reads fields on both.
const packetLines = int(unsafe.Sizeof(packet.Packet{})+63) / 64

// ringAhead is how many entries beyond the packets being prefetched a
// prefetching line loads its ring: about six cache lines.
const ringAhead = 16

func (d *DelayLine) fire(now clock.Time) {
	// One packet per event, ordered by its push, as a simulator scheduling
	// one arrival event per packet at send time (ns-3) orders it: flows
	// sharing the line keep the places among same-instant events that
	// lines of their own would give them.
	mask := len(d.buf) - 1
	e := d.buf[d.head]
	d.buf[d.head] = inflight{}
	d.head = (d.head + 1) & mask
	d.n--
	if d.n > 0 {
		next := &d.buf[d.head]
		d.timer.ResetSeq(next.at, next.seq)
		// Packets come out of a line long after they went in, out of
		// cache: start loading the next ones, one stage further along
		// for each (see Prefetcher).
		if d.n > PrefetchStages {
			prefetch.Lines(unsafe.Pointer(d.buf[(d.head+PrefetchStages)&mask].p), packetLines)
		}
		if d.pf != nil {
			// The line's own ring, where the packet pointers above are
			// read: written when the packets went in, it has left the
			// caches too, and the hardware's stream prefetcher does not
			// keep up with it among the flows' random accesses.
			prefetch.Line(unsafe.Pointer(&d.buf[(d.head+PrefetchStages+ringAhead)&mask]))
			var mid, far *packet.Packet
			if d.n > 1 {
				mid = d.buf[(d.head+1)&mask].p
			}
			if d.n > 2 {
				far = d.buf[(d.head+2)&mask].p
			}
			d.pf.Prefetch(next.p, mid, far)
		}
	}
	d.out.Receive(now, e.p)
}

// Drain removes every packet in flight and hands it to f (end-of-run
// accounting).
func (d *DelayLine) Drain(f func(p *packet.Packet)) {
	for d.n > 0 {
		f(d.buf[d.head].p)
		d.buf[d.head] = inflight{}
		d.head = (d.head + 1) & (len(d.buf) - 1)
		d.n--
	}
	d.timer.Stop()
}
