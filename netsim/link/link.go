// Package link models the bottleneck: a queue discipline feeding a
// serialiser that sends packets at the link's rate (or at the delivery
// opportunities of a Mahimahi trace), a random-loss model applied to packets
// as they leave the serialiser (they consumed capacity, as on a radio link
// and as ns-3's receive error models do), and delay lines for propagation.
// Rate, delay, loss and queue can change at any time (a link schedule).
package link

import (
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/loss"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/queue"
	"github.com/cclab/cclab/netsim/trace"
)

// Observer receives the link's per-packet outcomes; the simulation uses it
// for per-flow accounting and packet capture. Implementations must not
// retain p.
type Observer interface {
	// Dropped is called for a packet the queue refused or dropped (the link
	// frees it afterwards).
	Dropped(now clock.Time, p *packet.Packet)
	// Lost is called for a packet the loss model erased after
	// transmission (the link frees it afterwards).
	Lost(now clock.Time, p *packet.Packet)
	// Sent is called when a packet finishes transmission and will
	// propagate.
	Sent(now clock.Time, p *packet.Packet)
}

// Link is a bottleneck link. Packets enter with Receive; packets that
// finish transmission and survive the loss model go to Output with the
// link's current propagation delay.
type Link struct {
	s     *sim.Scheduler
	pool  *packet.Pool
	q     queue.Queue
	rate  units.Bandwidth
	delay time.Duration
	loss  loss.Model
	obs   Observer
	pf    Prefetcher // told about each packet it starts sending, if set
	// arrive, if set, sees each packet as it reaches the queue (a capture
	// before the queue).
	arrive func(now clock.Time, p *packet.Packet)
	// Output receives transmitted packets with the delay they must
	// propagate for; the simulation routes them to the flow's path.
	Output func(now clock.Time, p *packet.Packet, delay time.Duration)

	timer *sim.Timer
	head  *packet.Packet // packet being transmitted
	// Rate mode: head finishes at done; when the rate is 0 the remaining
	// bits are parked in stalledBits.
	done        clock.Time
	stalledBits float64
	// txTime is the transmission time of a txSize-byte packet at the
	// current rate: nearly every packet has the size of the one before, and
	// the division costs more than the comparison. 0 bytes take 0 ns at
	// any positive rate, so the zero value is valid.
	txSize units.Bytes
	txTime time.Duration
	// Trace mode.
	tr         *trace.Trace
	trStart    clock.Time // simulation time of the trace's origin
	cursor     trace.Cursor
	headSent   units.Bytes // bytes of head already carried by opportunities
	trWaiting  bool        // timer armed for the cursor's opportunity
	perOpp     units.Bytes
	capBits    float64    // capacity offered up to capAt, rate mode
	capAt      clock.Time // time of the last capacity integration
	statsStart clock.Time

	// Counters.
	TxPackets, Drops, Losses int64
	TxBytes                  units.Bytes

	// marksBefore counts the CE marks of queues SetQueue replaced;
	// marking says whether any queue of the link marks (Marks).
	marksBefore int64
	marking     bool
}

// Config configures a link.
type Config struct {
	// Rate is the serialisation rate; ignored when Trace is set.
	Rate units.Bandwidth
	// Delay is the one-way propagation delay.
	Delay time.Duration
	// Queue is the queue discipline (required).
	Queue queue.Queue
	// Loss is the random-loss model; nil means none.
	Loss loss.Model
	// Trace, if set, makes the link deliver at the trace's opportunities
	// (exact Mahimahi semantics) instead of at Rate.
	Trace *trace.Trace
	// TraceOffset starts the trace this far into its period.
	TraceOffset time.Duration
	// TracePacket is the bytes per opportunity [trace.PacketSize].
	TracePacket units.Bytes
}

// New returns a link.
func New(s *sim.Scheduler, pool *packet.Pool, cfg Config, obs Observer) (*Link, error) {
	if cfg.Queue == nil {
		return nil, fmt.Errorf("link: no queue")
	}
	if cfg.Trace == nil && cfg.Rate <= 0 {
		return nil, fmt.Errorf("link: rate must be positive, got %v", cfg.Rate)
	}
	if cfg.Loss == nil {
		cfg.Loss = loss.None{}
	}
	l := &Link{s: s, pool: pool, q: cfg.Queue, rate: cfg.Rate, delay: cfg.Delay, loss: cfg.Loss, obs: obs}
	l.timer = s.HotTimer(l.fire)
	if cfg.Trace != nil {
		l.tr = cfg.Trace
		l.perOpp = cfg.TracePacket
		if l.perOpp == 0 {
			l.perOpp = trace.PacketSize
		}
		l.trStart = s.Now().Add(-cfg.TraceOffset)
	}
	l.capAt = s.Now()
	l.statsStart = s.Now()
	return l, nil
}

// Rate returns the current rate (0 in trace mode).
func (l *Link) Rate() units.Bandwidth { return l.rate }

// Delay returns the current propagation delay.
func (l *Link) Delay() time.Duration { return l.delay }

// Marks returns the packets the link's queues have marked CE so far, and
// whether any of them marks (ECN is configured): a link whose queues never
// mark reports false, and its summary no marks.
func (l *Link) Marks() (int64, bool) {
	n, on := l.marksBefore, l.marking
	if m, ok := l.q.(queue.Marker); ok {
		n += int64(m.Marks())
		on = on || m.Marking()
	}
	return n, on || n > 0
}

// Queue returns the queue discipline.
func (l *Link) Queue() queue.Queue { return l.q }

// LossRate returns the loss model's long-run loss probability.
func (l *Link) LossRate() float64 { return l.loss.Rate() }

// Receive implements packet.Receiver: the packet joins the queue.
func (l *Link) Receive(now clock.Time, p *packet.Packet) {
	if l.arrive != nil {
		l.arrive(now, p)
	}
	if l.trWaiting && l.trStart.Add(l.cursor.Time()) == now {
		// An opportunity falls due at this very instant: mm-link serves
		// it before it queues the packet (LinkQueue::read_packet calls
		// rationalize first), so the packet finds the room it freed.
		l.opportunity(now)
	}
	if !l.q.Enqueue(p, now) {
		l.drop(now, p)
		return
	}
	if l.head == nil {
		l.startNext(now)
	}
}

// drop is also the CoDel drop callback.
func (l *Link) drop(now clock.Time, p *packet.Packet) {
	l.Drops++
	if l.obs != nil {
		l.obs.Dropped(now, p)
	}
	l.pool.Put(p)
}

// DropFunc returns the function queue disciplines that drop at dequeue
// (CoDel) must call.
func (l *Link) DropFunc() func(*packet.Packet, clock.Time) {
	return func(p *packet.Packet, now clock.Time) { l.drop(now, p) }
}

// OnArrival makes the link call f with each packet that reaches it, before
// the queue admits or drops it (nil: nobody); f must not retain p.
func (l *Link) OnArrival(f func(now clock.Time, p *packet.Packet)) { l.arrive = f }

// SetPrefetcher makes the link tell pf about each packet when it starts
// sending it, a transmission time before the packet is handed on (nil:
// nobody): one stage, the packet as near, mid and far nil; see
// DelayLine.SetPrefetcher.
func (l *Link) SetPrefetcher(pf Prefetcher) { l.pf = pf }

// startNext begins transmitting the next queued packet, if any.
func (l *Link) startNext(now clock.Time) {
	if l.tr != nil {
		if !l.trWaiting && l.q.Len() > 0 {
			l.armOpportunity(now)
		}
		return
	}
	l.head = l.q.Dequeue(now)
	if l.head == nil {
		return
	}
	if l.rate <= 0 {
		l.stalledBits = float64(l.head.Size) * 8
		l.done = clock.Never
		return
	}
	if l.head.Size != l.txSize {
		l.txSize, l.txTime = l.head.Size, l.rate.TxTime(l.head.Size)
	}
	l.done = now.Add(l.txTime)
	l.timer.Reset(l.done)
	if l.pf != nil {
		// The observer and the output read the packet's flow when its
		// transmission ends: let them start loading it now.
		l.pf.Prefetch(l.head, nil, nil)
	}
}

func (l *Link) fire(now clock.Time) {
	if l.tr != nil {
		l.opportunity(now)
		return
	}
	p := l.head
	l.head = nil
	l.transmitted(now, p)
	l.startNext(now)
}

// transmitted applies the loss model and hands a finished packet on.
func (l *Link) transmitted(now clock.Time, p *packet.Packet) {
	l.TxPackets++
	l.TxBytes += p.Size
	// A lossless link (the usual case) skips the model's call.
	if _, none := l.loss.(loss.None); !none && l.loss.Lose() {
		l.Losses++
		if l.obs != nil {
			l.obs.Lost(now, p)
		}
		l.pool.Put(p)
		return
	}
	if l.obs != nil {
		l.obs.Sent(now, p)
	}
	l.Output(now, p, l.delay)
}

func (l *Link) armOpportunity(now clock.Time) {
	// The first opportunity after now, not at it: mm-link burns the
	// opportunities due by a packet's arrival (LinkQueue::rationalize)
	// before it queues the packet, so one that arrives at an
	// opportunity's instant waits for the next. That also keeps an
	// opportunity that has just found the queue empty from serving a
	// packet arriving at the same instant a second time.
	l.cursor = l.tr.CursorAt(now.Sub(l.trStart) + 1)
	l.trWaiting = true
	l.timer.Reset(l.trStart.Add(l.cursor.Time()))
}

// opportunity serves the queue at a trace delivery opportunity with mm-link's
// semantics: each opportunity carries up to perOpp bytes, a packet may span
// opportunities, several small packets may share one, and bytes that find
// the queue empty are wasted.
func (l *Link) opportunity(now clock.Time) {
	budget := units.Bytes(l.cursor.Count()) * l.perOpp
	for budget > 0 {
		if l.head == nil {
			l.head = l.q.Dequeue(now)
			if l.head == nil {
				break
			}
			l.headSent = 0
		}
		need := l.head.Size - l.headSent
		if need > budget {
			l.headSent += budget
			break
		}
		budget -= need
		p := l.head
		l.head = nil
		l.transmitted(now, p)
	}
	if l.head == nil && l.q.Len() == 0 {
		l.trWaiting = false
		// Served ahead of its timer (Receive), the timer still waits for
		// this instant; from the timer itself this does nothing.
		l.timer.Stop()
		return
	}
	l.cursor.Next()
	l.timer.Reset(l.trStart.Add(l.cursor.Time()))
}

// SetRate changes the rate at now. A packet being transmitted keeps the
// bits already sent and finishes its remaining bits at the new rate.
func (l *Link) SetRate(now clock.Time, r units.Bandwidth) {
	if l.tr != nil {
		return
	}
	l.integrateCapacity(now)
	old := l.rate
	l.rate = r
	l.txSize, l.txTime = 0, 0
	if l.head == nil {
		return
	}
	var bits float64
	if old > 0 {
		bits = float64(l.done-now) * float64(old) / 1e9
	} else {
		bits = l.stalledBits
	}
	if r <= 0 {
		l.stalledBits = bits
		l.done = clock.Never
		l.timer.Stop()
		return
	}
	l.done = now.Add(time.Duration(math.Ceil(bits * 1e9 / float64(r))))
	l.timer.Reset(l.done)
}

// SetDelay changes the propagation delay for packets finishing transmission
// from now on; packets already propagating keep theirs.
func (l *Link) SetDelay(d time.Duration) { l.delay = d }

// SetLoss replaces the loss model.
func (l *Link) SetLoss(m loss.Model) {
	if m == nil {
		m = loss.None{}
	}
	l.loss = m
}

// SetQueue replaces the queue discipline, moving queued packets into the new
// one in order; those it refuses are dropped.
func (l *Link) SetQueue(now clock.Time, q queue.Queue) {
	old := l.q
	if m, ok := old.(queue.Marker); ok {
		l.marksBefore += int64(m.Marks())
		l.marking = l.marking || m.Marking()
	}
	l.q = q
	for p := old.Dequeue(now); p != nil; p = old.Dequeue(now) {
		if !q.Enqueue(p, p.EnqueuedAt) {
			l.drop(now, p)
		}
	}
}

func (l *Link) integrateCapacity(now clock.Time) {
	l.capBits += float64(l.rate) * now.Sub(l.capAt).Seconds()
	l.capAt = now
}

// Capacity returns the bytes the link could have carried from its creation
// (or the last ResetStats) until now.
func (l *Link) Capacity(now clock.Time) units.Bytes {
	if l.tr != nil {
		return l.traceCapacity(l.statsStart, now)
	}
	l.integrateCapacity(now)
	return units.Bytes(l.capBits / 8)
}

// traceCapacity counts the opportunity bytes in [from, to].
func (l *Link) traceCapacity(from, to clock.Time) units.Bytes {
	var n int64
	c := l.tr.CursorAt(from.Sub(l.trStart))
	for end := to.Sub(l.trStart); c.Time() <= end; c.Next() {
		n += int64(c.Count())
	}
	return units.Bytes(n) * l.perOpp
}

// Busy reports whether a packet is being transmitted.
func (l *Link) Busy() bool { return l.head != nil }

// Drain frees every packet in the queue and on the serialiser (end of run).
func (l *Link) Drain(now clock.Time, f func(p *packet.Packet)) {
	if l.head != nil {
		f(l.head)
		l.head = nil
	}
	for p := l.q.Dequeue(now); p != nil; p = l.q.Dequeue(now) {
		f(p)
	}
	l.timer.Stop()
}
