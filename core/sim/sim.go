// Package sim is cclab's discrete-event engine: a virtual clock and a
// deterministic event queue. One Scheduler runs one simulation on one
// goroutine; independent simulations run in parallel on separate Schedulers.
//
// Events are ordered by (time, sequence number), so events at the same
// instant run in the order they were scheduled, whatever the heap layout:
// the same inputs always give the same run. Scheduling an event does not
// allocate once the heap has grown to its working size: handlers are
// interfaces holding pointers, and timers keep a fixed slot in the heap that
// is moved, not reallocated, when they are re-armed.
package sim

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/internal/prefetch"
)

// Handler receives events. arg is whatever was passed to At; passing a
// pointer does not allocate.
type Handler interface {
	Handle(now clock.Time, arg any)
}

// HandlerFunc adapts a function to Handler. Converting a func value to an
// interface may allocate: keep HandlerFuncs in fields, not in hot paths.
type HandlerFunc func(now clock.Time, arg any)

// Handle implements Handler.
func (f HandlerFunc) Handle(now clock.Time, arg any) { f(now, arg) }

// entry is a heap element. It holds no pointers, so moving entries costs no
// GC write barriers; the event's timer lives in timers[id], a one-shot
// call's handler in calls[call] (its id is 0, a timer id no timer has).
type entry struct {
	at   clock.Time
	seq  uint64
	id   int32
	call int32 // in the padding an entry would have anyway
}

func (e *entry) less(o *entry) bool {
	return e.at < o.at || e.at == o.at && e.seq < o.seq
}

// call is a scheduled one-shot handler call.
type call struct {
	h   Handler
	arg any
}

// Scheduler is the event queue and virtual clock. The zero value is not
// usable; call New.
//
// Events due soon live in a 4-ary heap ordered by (time, sequence number).
// Timers due later than the current wheel bucket wait in a timing wheel
// (Varghese and Lauck's hashed wheel; Linux and htsim keep their
// retransmission timers outside the event heap for the same reason): a
// timer that is re-armed on every ACK, or armed and stopped on every other
// segment, costs O(1) there and reaches the heap only when its bucket comes
// due. The heap therefore holds about one bucket's worth of events whatever
// the number of flows. Bucket order is irrelevant to determinism: a bucket
// is moved into the heap before any event at or after its start runs, and
// the heap orders by (time, sequence number) exactly. The few timers behind
// most events (HotTimer: a link's transmissions, shared delay lines) stay
// out of the heap altogether, and each event is the earliest of them and
// the heap's top.
type Scheduler struct {
	now  clock.Time
	seq  uint64
	heap []entry
	// A timer's id indexes two parallel arrays: its heap position (-1
	// when not in the heap) and the timer. They are separate so that
	// moving heap entries and re-arming timers, the engine's hottest work,
	// touch only the dense pos array, which stays in cache whatever the
	// number of flows. Id 0 is shared by every one-shot call (timers[0]
	// is nil, and nothing reads pos[0]): a call's handler is in calls,
	// which therefore holds only the calls pending at once (a few, or one
	// per flow while flows wait to start), not a slot per timer.
	pos       []int32
	timers    []*Timer
	calls     []call
	freeCalls []int32 // calls slots available for reuse
	events    uint64
	stopped   bool
	// firing is the timer whose callback is running: its entry stays in
	// the heap meanwhile, and settle moves it once the callback returns, so
	// a Reset from the callback (a pacing or probe timer re-arming itself)
	// only records the deadline.
	firing *Timer

	// The wheel's buckets hold timer ids in chunks of chunkIDs, not in
	// lists linked through the timers: moving a bucket into the heap then
	// loads its timers (each a cache miss once there are thousands of
	// flows) independently, prefetched ahead, instead of one after
	// another down a list. Chunks come from one arena with a free list,
	// so the wheel's memory follows the number of timers in it, however
	// they crowd into a few buckets. wheel[b] is the bucket's newest
	// chunk (+1; 0 for an empty bucket), the only one not full, or, for a
	// bucket holding one timer (most of them with few flows), -1 - its
	// id; a timer knows its place (chunk*chunkIDs + index, -1 when alone),
	// so that taking it out moves the bucket's newest id into that place.
	wheel     [wheelSize]int32
	chunks    []chunk
	freeChunk int32      // first free chunk (+1; 0 for none)
	horizon   clock.Time // every armed timer due before it is in the heap
	inWheel   int        // timers in the wheel

	// Hot timers (HotTimer) are kept out of the heap: the few timers that
	// fire for nearly every event (the bottleneck's transmissions, the
	// shared delay lines' heads) are re-armed by their own callbacks, and
	// in the heap each re-arm sifted the entry past the others. A hot
	// timer's deadline is only its own at and seq, which top compares
	// beside the heap's top (a few timers, always in cache). The order of
	// events is the same (time, sequence number) order either way.
	hot  [maxHot]*Timer
	nHot int
	// pick is the hot timer top chose to fire next, nil for the heap's
	// top; pickAt is that event's time.
	pick   *Timer
	pickAt clock.Time
}

// maxHot is the most hot timers a scheduler keeps out of its heap; later
// ones are ordinary timers.
const maxHot = 8

// chunkIDs is the number of timer ids in a wheel chunk (256 bytes).
const chunkIDs = 62

// chunk is a piece of a wheel bucket: n ids and the bucket's next older
// chunk (+1; 0 for none), or the next free chunk. The count comes first:
// filing a timer reads it and writes ids[n], and a bucket's newest chunk
// mostly holds a few ids, which then share the count's cache line (with
// the count at the end, filing into a chunk cold in the cache missed twice,
// and with thousands of flows' timers it usually is).
type chunk struct {
	n    int32
	next int32
	ids  [chunkIDs]int32
}

// The wheel has wheelSize buckets of 2^wheelShift ns (262 µs): a span of
// 2.1 s holds minimum-RTO, delayed-ACK and pacing timers and the delay lines'
// heads; later deadlines (backed-off RTOs) go to the heap.
const (
	wheelShift = 18
	wheelSize  = 8192
	wheelSpan  = clock.Time(wheelSize) << wheelShift
)

var _ clock.Scheduler = (*Scheduler)(nil)

// New returns an empty scheduler at time 0.
func New() *Scheduler {
	return &Scheduler{heap: make([]entry, 0, 256), pos: []int32{-1}, timers: []*Timer{nil}}
}

// Now returns the current simulated time.
func (s *Scheduler) Now() clock.Time { return s.now }

// Events returns the number of events executed so far.
func (s *Scheduler) Events() uint64 { return s.events }

// Pending returns the number of queued entries: scheduled events and armed
// timers, plus stopped timers not yet swept (cancellation is lazy).
func (s *Scheduler) Pending() int {
	n := len(s.heap) + s.inWheel
	for _, t := range s.hot[:s.nHot] {
		if t.at != clock.Never {
			n++
		}
	}
	return n
}

// At schedules h.Handle(t, arg). Scheduling in the past is a programming
// error and panics.
func (s *Scheduler) At(t clock.Time, h Handler, arg any) {
	s.seq++
	s.AtSeq(t, s.seq, h, arg)
}

// AtSeq is At with the sequence number seq, from Seq: the call is ordered
// among the events of its instant as if At had scheduled it when Seq was
// called. A simulation with many events known in advance (thousands of
// flows' start times) can reserve their places at once and schedule each
// only when the one before it runs, which keeps them out of the heap,
// whose every event's sift would otherwise cross them.
func (s *Scheduler) AtSeq(t clock.Time, seq uint64, h Handler, arg any) {
	if t < s.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, s.now))
	}
	var c int32
	if n := len(s.freeCalls); n > 0 {
		c = s.freeCalls[n-1]
		s.freeCalls = s.freeCalls[:n-1]
	} else {
		c = int32(len(s.calls))
		s.calls = append(s.calls, call{})
	}
	s.calls[c] = call{h: h, arg: arg}
	s.push(t, seq, 0, c)
}

func (s *Scheduler) push(t clock.Time, seq uint64, id, c int32) {
	s.heap = append(s.heap, entry{at: t, seq: seq, id: id, call: c})
	i := len(s.heap) - 1
	s.pos[id] = int32(i)
	// Most pushes are later than their parent: no sift.
	if i > 0 && s.heap[i].less(&s.heap[(i-1)/arity]) {
		s.up(i)
	}
}

// Next returns the time of the earliest scheduled event, or clock.Never.
// It may be earlier than the next event that actually runs (a timer pushed
// back is moved lazily), which only costs a real-time driver a spurious
// wake-up.
func (s *Scheduler) Next() clock.Time {
	next := clock.Never
	if len(s.heap) > 0 {
		next = s.heap[0].at
	}
	for _, t := range s.hot[:s.nHot] {
		next = min(next, t.at)
	}
	return next
}

// After schedules h.Handle after d.
func (s *Scheduler) After(d time.Duration, h Handler, arg any) { s.At(s.now.Add(d), h, arg) }

// file queues an armed timer that is in neither the heap nor the wheel.
func (s *Scheduler) file(t *Timer) {
	if s.inWheel == 0 && s.horizon < s.now {
		// The wheel is empty: catch it up with the clock instead of
		// sweeping the empty buckets in between.
		s.horizon = s.now &^ (1<<wheelShift - 1)
	}
	if t.at < s.horizon || t.at-s.horizon >= wheelSpan {
		t.wslot = inHeap
		s.push(t.at, t.seq, t.id, 0)
		return
	}
	b := &s.wheel[int(t.at>>wheelShift)&(wheelSize-1)]
	switch {
	case *b == 0:
		*b = -1 - t.id
		t.wat, t.wslot = t.at, alone
		s.inWheel++
		return
	case *b < 0:
		// A second timer: the first moves into a chunk.
		first := -1 - *b
		*b = s.newChunk(0)
		s.chunks[*b-1].ids[0], s.chunks[*b-1].n = first, 1
		s.timers[first].wslot = (*b - 1) * chunkIDs
	case s.chunks[*b-1].n == chunkIDs:
		*b = s.newChunk(*b)
	}
	c := &s.chunks[*b-1]
	t.wat, t.wslot = t.at, (*b-1)*chunkIDs+c.n
	c.ids[c.n] = t.id
	c.n++
	s.inWheel++
}

// newChunk returns an empty chunk (+1) whose next is next. The arena
// grows to the most chunks ever in use at once, then stops allocating.
func (s *Scheduler) newChunk(next int32) int32 {
	k := s.freeChunk
	if k == 0 {
		s.chunks = append(s.chunks, chunk{})
		k = int32(len(s.chunks))
	} else {
		s.freeChunk = s.chunks[k-1].next
	}
	s.chunks[k-1].n, s.chunks[k-1].next = 0, next
	return k
}

// freeChunkAt returns chunk k (+1) to the free list.
func (s *Scheduler) freeChunkAt(k int32) {
	s.chunks[k-1].next = s.freeChunk
	s.freeChunk = k
}

// unwheel takes t out of its wheel bucket.
func (s *Scheduler) unwheel(t *Timer) {
	b := &s.wheel[int(t.wat>>wheelShift)&(wheelSize-1)]
	slot := t.wslot
	t.wslot = unqueued
	s.inWheel--
	if slot == alone {
		*b = 0
		return
	}
	c := &s.chunks[*b-1]
	c.n--
	if last := (*b-1)*chunkIDs + c.n; slot != last {
		moved := c.ids[c.n]
		s.chunks[slot/chunkIDs].ids[slot%chunkIDs] = moved
		s.timers[moved].wslot = slot
	}
	if c.n == 0 {
		k := *b
		*b = c.next
		s.freeChunkAt(k)
	}
}

// wheelAhead is how many timers ahead advance prefetches.
const wheelAhead = 8

// advance moves the wheel's next bucket into the heap (or, for timers
// re-armed to later deadlines meanwhile, back into the wheel).
func (s *Scheduler) advance() {
	b := &s.wheel[int(s.horizon>>wheelShift)&(wheelSize-1)]
	s.horizon += 1 << wheelShift
	// Detach the bucket's chunks: a timer re-filed a wheel span later
	// lands in this same bucket, in new chunks.
	k := *b
	*b = 0
	if k < 0 {
		t := s.timers[-1-k]
		t.wslot = unqueued
		s.inWheel--
		if t.at != clock.Never {
			s.file(t)
		}
		return
	}
	for k != 0 {
		// s.chunks is indexed afresh each time: file may grow it.
		n := int(s.chunks[k-1].n)
		if n > 1 {
			// A lone timer is not worth the calls: with few flows it is
			// in cache.
			for i := range min(n, wheelAhead) {
				prefetch.Line(unsafe.Pointer(s.timers[s.chunks[k-1].ids[i]]))
			}
		}
		for i := range n {
			if i+wheelAhead < n {
				prefetch.Line(unsafe.Pointer(s.timers[s.chunks[k-1].ids[i+wheelAhead]]))
			}
			t := s.timers[s.chunks[k-1].ids[i]]
			t.wslot = unqueued
			s.inWheel--
			if t.at != clock.Never {
				s.file(t)
			}
		}
		next := s.chunks[k-1].next
		s.freeChunkAt(k)
		k = next
	}
}

// top finds the earliest event, a hot timer (pick) or the heap's top: it
// moves due wheel buckets in, drops stopped timers and moves re-armed ones
// until the heap's top is a live event. It sets pickAt to the event's time
// and returns false if nothing is scheduled.
func (s *Scheduler) top() bool {
	for {
		// The earliest hot timer, by (time, sequence number).
		var h *Timer
		hotNext := clock.Never
		for _, t := range s.hot[:s.nHot] {
			if t.at < hotNext || t.at == hotNext && h != nil && t.seq < h.seq {
				h, hotNext = t, t.at
			}
		}
		// Due wheel buckets come in before anything at or after their
		// start runs (a slow link's events are several buckets apart).
		for s.inWheel > 0 && hotNext >= s.horizon && (len(s.heap) == 0 || s.heap[0].at >= s.horizon) {
			s.advance()
		}
		if len(s.heap) == 0 {
			if h == nil {
				return false
			}
			s.pick, s.pickAt = h, hotNext
			return true
		}
		e := &s.heap[0]
		t := s.timers[e.id]
		switch {
		case t == nil || t.at == e.at:
			if h != nil && (hotNext < e.at || hotNext == e.at && h.seq < e.seq) {
				s.pick, s.pickAt = h, hotNext
			} else {
				s.pick, s.pickAt = nil, e.at
			}
			return true
		case t.at == clock.Never:
			t.wslot = unqueued
			s.removeAt(0) // stopped: swept here instead of in Stop
		case t.at < s.horizon:
			// A deferred re-arm (see Timer.Reset): move the entry to the
			// real deadline, with the sequence number of the Reset that
			// set it, without running anything.
			e.at, e.seq = t.at, t.seq
			s.down(0)
		default:
			t.wslot = unqueued
			s.removeAt(0)
			s.file(t)
		}
	}
}

// Step executes the earliest event. It returns false if there is none or
// the scheduler was stopped.
func (s *Scheduler) Step() bool {
	if s.stopped || !s.top() {
		return false
	}
	s.fire()
	return true
}

// fire executes the event top chose; top must have just returned true.
func (s *Scheduler) fire() {
	if t := s.pick; t != nil {
		s.pick = nil
		at := t.at
		s.now = at
		s.events++
		t.at = clock.Never
		t.f(at)
		return
	}
	e := &s.heap[0]
	at, id := e.at, e.id
	s.now = at
	s.events++
	if id != 0 {
		t := s.timers[id]
		// The entry stays in the heap while f runs, as if stopped: a timer
		// its own callback re-arms (a delay line's head, the bottleneck's
		// next transmission) is then moved once, by settle, instead of
		// removed now and pushed again, and one that is not re-armed is
		// dropped there. Either way it takes its place by (time, sequence
		// number) exactly as a fresh entry would.
		t.at = clock.Never
		s.firing = t
		t.f(at)
		s.firing = nil
		s.settle(t)
		return
	}
	k := e.call
	s.removeAt(0)
	c := &s.calls[k]
	h, arg := c.h, c.arg
	*c = call{}
	s.freeCalls = append(s.freeCalls, k)
	h.Handle(at, arg)
}

// settle does at once for a timer that has just fired what top would do
// when its entry surfaced: drop the entry if the callback did not re-arm
// the timer, move it to the new deadline if the re-arm was deferred, or
// hand the timer to the wheel. Done here, while the timer and its entry
// are in cache, it spares top a second pass over the heap's top for every
// event of a timer that is not hot. Where the entry goes changes nothing:
// the heap orders by unique (time, sequence number) keys.
func (s *Scheduler) settle(t *Timer) {
	if t.wslot != inHeap {
		return // defensive: only top takes a timer's entry out of the heap
	}
	i := int(s.pos[t.id])
	e := &s.heap[i]
	switch {
	case t.at == e.at:
		// Re-armed for the same instant: only its place among the
		// instant's events changes.
		if t.seq != e.seq {
			e.seq = t.seq
			s.fix(i)
		}
	case t.at == clock.Never:
		t.wslot = unqueued
		s.removeAt(i)
	case t.at < s.horizon:
		e.at, e.seq = t.at, t.seq
		s.fix(i)
	default:
		t.wslot = unqueued
		s.removeAt(i)
		s.file(t)
	}
}

// RunUntil executes events up to and including time t, then sets the clock
// to t (unless stopped earlier).
func (s *Scheduler) RunUntil(t clock.Time) {
	for !s.stopped && s.top() && s.pickAt <= t {
		s.fire()
	}
	if !s.stopped && s.now < t {
		s.now = t
	}
}

// Run executes events until none is left or Stop is called.
func (s *Scheduler) Run() {
	for s.Step() {
	}
}

// Stop makes Run and RunUntil return after the current event.
func (s *Scheduler) Stop() { s.stopped = true }

// Stopped reports whether Stop was called.
func (s *Scheduler) Stopped() bool { return s.stopped }

// Timer is a re-armable one-shot timer with a fixed callback and a fixed
// slot in the scheduler. Re-arming to a later time (a retransmission timer
// pushed back by every ACK) only records the new deadline, and Stop only
// marks the timer disarmed: the queued entry is moved or dropped when it
// comes due, so the common cases cost no heap work.
type Timer struct {
	s  *Scheduler
	f  func(now clock.Time)
	id int32
	// wslot is where the timer is queued: its place in its wheel bucket
	// (see Scheduler.wheel), alone in it, in the heap (pos[id] >= 0), or
	// nowhere; or that it is a hot timer, never queued (HotTimer). A timer
	// is in at most one of them, so one field says which,
	// and a Timer fits the 48-byte size class (with two flags it took 64
	// bytes: 0.8 MB at 10,000 flows of five timers).
	wslot int32
	at    clock.Time // deadline, clock.Never when disarmed
	wat   clock.Time // the deadline it was filed in the wheel with
	seq   uint64     // sequence number of the last Reset
}

// Timer.wslot's values besides a place in a bucket's chunks (>= 0).
const (
	alone    = -1 // alone in its wheel bucket
	unqueued = -2 // neither in the wheel nor in the heap
	inHeap   = -3 // its entry is in the heap
	hotSlot  = -4 // a hot timer (HotTimer), never queued: its id indexes Scheduler.hot
)

var _ clock.Timer = (*Timer)(nil)

// NewTimer returns a disarmed timer calling f when it fires.
func (s *Scheduler) NewTimer(f func(now clock.Time)) clock.Timer { return s.Timer(f) }

// Timer is NewTimer returning the concrete type.
func (s *Scheduler) Timer(f func(now clock.Time)) *Timer {
	t := new(Timer)
	s.InitTimer(t, f)
	return t
}

// InitTimer makes *t a disarmed timer of s calling f, as Timer would return
// it, in memory the caller chose: a simulation that keeps a flow's timers
// in one allocation with the rest of the flow's state touches fewer pages
// per event. t must not be a timer already (the scheduler keeps a pointer
// to it for ever); the scheduler keeps it reachable.
func (s *Scheduler) InitTimer(t *Timer, f func(now clock.Time)) {
	*t = Timer{s: s, f: f, id: int32(len(s.pos)), wslot: unqueued, at: clock.Never}
	s.pos = append(s.pos, -1)
	s.timers = append(s.timers, t)
}

// HotTimer is Timer for a timer that fires for a large share of all events
// and is mostly re-armed by its own callback (a link's transmissions, a
// delay line shared by many flows): the first few such timers of a
// scheduler are kept out of its heap (see Scheduler.hot), later ones are
// ordinary timers. The order of events does not depend on which kind a
// timer is.
func (s *Scheduler) HotTimer(f func(now clock.Time)) *Timer {
	if s.nHot == maxHot {
		return s.Timer(f)
	}
	i := s.nHot
	s.nHot++
	t := &Timer{s: s, f: f, id: int32(i), wslot: hotSlot, at: clock.Never}
	s.hot[i] = t
	return t
}

// Reset arms the timer at t (clamped to now), replacing any earlier
// deadline. A timer re-armed for an instant is ordered after events already
// scheduled for that instant.
func (t *Timer) Reset(at clock.Time) {
	t.s.seq++
	t.ResetSeq(at, t.s.seq)
}

// Seq reserves the next sequence number. A timer armed later with it
// (ResetSeq) is ordered among the events of its instant as if it had been
// scheduled when Seq was called: a FIFO shared by many senders (a delay
// line) keeps each packet's place in the order it would have had with a
// line of its own.
func (s *Scheduler) Seq() uint64 {
	s.seq++
	return s.seq
}

// ResetSeq is Reset with the sequence number seq, from Seq.
func (t *Timer) ResetSeq(at clock.Time, seq uint64) {
	s := t.s
	if at < s.now {
		at = s.now
	}
	t.at = at
	t.seq = seq
	if t.wslot == hotSlot {
		return // top reads its deadline
	}
	if t == s.firing {
		return // settle moves its entry when the callback returns
	}
	// wslot spares the wheel's re-arms a load from pos, which with
	// thousands of flows is out of cache.
	if t.wslot == inHeap {
		pos := s.pos[t.id]
		e := &s.heap[pos]
		if at > e.at {
			return // deferred: top moves the entry when it surfaces
		}
		// An equal deadline with a later sequence number may move the
		// entry down, an earlier deadline up.
		e.at, e.seq = at, t.seq
		s.fix(int(pos))
		return
	}
	if t.wslot >= alone { // in the wheel
		if at >= t.wat {
			return // deferred: advance re-files it when its bucket is due
		}
		s.unwheel(t)
	}
	s.file(t)
}

// Stop disarms the timer. Its queued entry, if any, is dropped when it
// comes due or re-used by the next Reset.
func (t *Timer) Stop() { t.at = clock.Never }

// Armed reports whether the timer will fire.
func (t *Timer) Armed() bool { return t.at != clock.Never }

// Deadline returns the time the timer fires, or clock.Never.
func (t *Timer) Deadline() clock.Time { return t.at }

// The heap is 4-ary: shallower than binary, and the four children of a node
// share a cache line or two, which is what dominates at the heap sizes of a
// many-flow simulation.
const arity = 4

// The sifts move a hole instead of swapping: each level costs one entry
// copy and one pos write instead of two of each.

func (s *Scheduler) up(i int) {
	h := s.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / arity
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		s.pos[h[i].id] = int32(i)
		i = p
	}
	h[i] = x
	s.pos[x.id] = int32(i)
}

func (s *Scheduler) down(i int) {
	h := s.heap
	n := len(h)
	x := h[i]
	for {
		c := i*arity + 1
		if c >= n {
			break
		}
		best := c
		for k := c + 1; k < c+arity && k < n; k++ {
			if h[k].less(&h[best]) {
				best = k
			}
		}
		if !h[best].less(&x) {
			break
		}
		h[i] = h[best]
		s.pos[h[i].id] = int32(i)
		i = best
	}
	h[i] = x
	s.pos[x.id] = int32(i)
}

func (s *Scheduler) fix(i int) {
	if i > 0 && s.heap[i].less(&s.heap[(i-1)/arity]) {
		s.up(i)
		return
	}
	s.down(i)
}

func (s *Scheduler) removeAt(i int) {
	last := len(s.heap) - 1
	s.pos[s.heap[i].id] = -1
	if i != last {
		s.heap[i] = s.heap[last]
	}
	s.heap = s.heap[:last]
	if i < last {
		s.fix(i)
	}
}
