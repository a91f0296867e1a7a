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

	"github.com/cclab/cclab/core/clock"
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
// GC write barriers; the event's handler lives in slots[id].
type entry struct {
	at  clock.Time
	seq uint64
	id  int32
}

func (e *entry) less(o *entry) bool {
	return e.at < o.at || e.at == o.at && e.seq < o.seq
}

// slot describes a scheduled event: a timer, or a one-shot handler call.
type slot struct {
	timer *Timer
	h     Handler
	arg   any
	pos   int32 // index in the heap, -1 when not scheduled
}

// Scheduler is the event queue and virtual clock. The zero value is not
// usable; call New.
type Scheduler struct {
	now     clock.Time
	seq     uint64
	heap    []entry
	slots   []slot
	free    []int32 // one-shot slots available for reuse
	events  uint64
	stopped bool
}

var _ clock.Scheduler = (*Scheduler)(nil)

// New returns an empty scheduler at time 0.
func New() *Scheduler {
	return &Scheduler{heap: make([]entry, 0, 256)}
}

// Now returns the current simulated time.
func (s *Scheduler) Now() clock.Time { return s.now }

// Events returns the number of events executed so far.
func (s *Scheduler) Events() uint64 { return s.events }

// Pending returns the number of scheduled events.
func (s *Scheduler) Pending() int { return len(s.heap) }

// At schedules h.Handle(t, arg). Scheduling in the past is a programming
// error and panics.
func (s *Scheduler) At(t clock.Time, h Handler, arg any) {
	if t < s.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", t, s.now))
	}
	var id int32
	if n := len(s.free); n > 0 {
		id = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		id = int32(len(s.slots))
		s.slots = append(s.slots, slot{})
	}
	s.slots[id] = slot{h: h, arg: arg}
	s.seq++
	s.push(t, s.seq, id)
}

func (s *Scheduler) push(t clock.Time, seq uint64, id int32) {
	s.heap = append(s.heap, entry{at: t, seq: seq, id: id})
	i := len(s.heap) - 1
	s.slots[id].pos = int32(i)
	s.up(i)
}

// Next returns the time of the earliest scheduled event, or clock.Never.
// It may be earlier than the next event that actually runs (a timer pushed
// back is moved lazily), which only costs a real-time driver a spurious
// wake-up.
func (s *Scheduler) Next() clock.Time {
	if len(s.heap) == 0 {
		return clock.Never
	}
	return s.heap[0].at
}

// After schedules h.Handle after d.
func (s *Scheduler) After(d time.Duration, h Handler, arg any) { s.At(s.now.Add(d), h, arg) }

// Step executes the earliest event. It returns false if there is none or
// the scheduler was stopped.
func (s *Scheduler) Step() bool {
	for !s.stopped && len(s.heap) > 0 {
		e := s.heap[0]
		sl := &s.slots[e.id]
		if t := sl.timer; t != nil && t.at > e.at {
			// A deferred re-arm (see Timer.Reset): move the entry to the
			// real deadline, with the sequence number of the Reset that
			// set it, without running anything.
			s.heap[0].at, s.heap[0].seq = t.at, t.seq
			s.down(0)
			continue
		}
		s.removeAt(0)
		s.now = e.at
		s.events++
		if t := sl.timer; t != nil {
			t.at = clock.Never
			t.f(e.at)
			return true
		}
		h, arg := sl.h, sl.arg
		*sl = slot{pos: -1}
		s.free = append(s.free, e.id)
		h.Handle(e.at, arg)
		return true
	}
	return false
}

// RunUntil executes events up to and including time t, then sets the clock
// to t (unless stopped earlier).
func (s *Scheduler) RunUntil(t clock.Time) {
	for !s.stopped && len(s.heap) > 0 && s.heap[0].at <= t {
		s.Step()
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
// pushed back by every ACK) only records the new deadline: the heap entry is
// moved when it reaches the top, so the common case costs no heap work.
type Timer struct {
	s   *Scheduler
	f   func(now clock.Time)
	id  int32
	at  clock.Time // deadline, clock.Never when disarmed
	seq uint64     // sequence number of the last Reset
}

var _ clock.Timer = (*Timer)(nil)

// NewTimer returns a disarmed timer calling f when it fires.
func (s *Scheduler) NewTimer(f func(now clock.Time)) clock.Timer { return s.Timer(f) }

// Timer is NewTimer returning the concrete type.
func (s *Scheduler) Timer(f func(now clock.Time)) *Timer {
	t := &Timer{s: s, f: f, id: int32(len(s.slots)), at: clock.Never}
	s.slots = append(s.slots, slot{timer: t, pos: -1})
	return t
}

// Reset arms the timer at t (clamped to now), replacing any earlier
// deadline. A timer re-armed for an instant is ordered after events already
// scheduled for that instant.
func (t *Timer) Reset(at clock.Time) {
	s := t.s
	if at < s.now {
		at = s.now
	}
	t.at = at
	s.seq++
	t.seq = s.seq
	pos := s.slots[t.id].pos
	if pos < 0 {
		s.push(at, t.seq, t.id)
		return
	}
	e := &s.heap[pos]
	if at > e.at {
		return // deferred: Step moves the entry when it surfaces
	}
	e.at, e.seq = at, t.seq
	s.up(int(pos))
}

// Stop disarms the timer.
func (t *Timer) Stop() {
	if pos := t.s.slots[t.id].pos; pos >= 0 {
		t.s.removeAt(int(pos))
	}
	t.at = clock.Never
}

// Armed reports whether the timer will fire.
func (t *Timer) Armed() bool { return t.at != clock.Never }

// Deadline returns the time the timer fires, or clock.Never.
func (t *Timer) Deadline() clock.Time { return t.at }

// The heap is 4-ary: shallower than binary, and the four children of a node
// share a cache line or two, which is what dominates at the heap sizes of a
// many-flow simulation.
const arity = 4

func (s *Scheduler) swap(i, j int) {
	h := s.heap
	h[i], h[j] = h[j], h[i]
	s.slots[h[i].id].pos = int32(i)
	s.slots[h[j].id].pos = int32(j)
}

func (s *Scheduler) up(i int) {
	h := s.heap
	for i > 0 {
		p := (i - 1) / arity
		if !h[i].less(&h[p]) {
			break
		}
		s.swap(i, p)
		i = p
	}
}

func (s *Scheduler) down(i int) {
	h := s.heap
	n := len(h)
	for {
		c := i*arity + 1
		if c >= n {
			return
		}
		best := c
		for k := c + 1; k < c+arity && k < n; k++ {
			if h[k].less(&h[best]) {
				best = k
			}
		}
		if !h[best].less(&h[i]) {
			return
		}
		s.swap(i, best)
		i = best
	}
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
	if i != last {
		s.swap(i, last)
	}
	s.slots[s.heap[last].id].pos = -1
	s.heap = s.heap[:last]
	if i < last {
		s.fix(i)
	}
}
