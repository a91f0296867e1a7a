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

	"github.com/cclab/cclab/clock"
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

type entry struct {
	at    clock.Time
	seq   uint64
	h     Handler
	arg   any
	timer *Timer // non-nil for timer entries; its idx tracks the entry
}

func (e *entry) less(o *entry) bool {
	return e.at < o.at || e.at == o.at && e.seq < o.seq
}

// Scheduler is the event queue and virtual clock. The zero value is not
// usable; call New.
type Scheduler struct {
	now     clock.Time
	seq     uint64
	heap    []entry
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
	s.seq++
	s.heap = append(s.heap, entry{at: t, seq: s.seq, h: h, arg: arg})
	s.up(len(s.heap) - 1)
}

// After schedules h.Handle after d.
func (s *Scheduler) After(d time.Duration, h Handler, arg any) { s.At(s.now.Add(d), h, arg) }

// Step executes the earliest event. It returns false if there is none or
// the scheduler was stopped.
func (s *Scheduler) Step() bool {
	if s.stopped || len(s.heap) == 0 {
		return false
	}
	e := s.heap[0]
	s.removeAt(0)
	s.now = e.at
	s.events++
	if e.timer != nil {
		e.timer.idx = -1
		e.timer.f(e.at)
		return true
	}
	e.h.Handle(e.at, e.arg)
	return true
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

// Timer is a re-armable one-shot timer with a fixed callback. It holds at
// most one heap entry, updated in place on Reset, so a transport can re-arm
// its retransmission timer on every ACK without filling the heap with stale
// events.
type Timer struct {
	s   *Scheduler
	f   func(now clock.Time)
	idx int // position in s.heap, -1 when disarmed
	at  clock.Time
}

var _ clock.Timer = (*Timer)(nil)

// NewTimer returns a disarmed timer calling f when it fires.
func (s *Scheduler) NewTimer(f func(now clock.Time)) clock.Timer { return s.Timer(f) }

// Timer is NewTimer returning the concrete type.
func (s *Scheduler) Timer(f func(now clock.Time)) *Timer {
	return &Timer{s: s, f: f, idx: -1, at: clock.Never}
}

// Reset arms the timer at t (clamped to now), replacing any earlier
// deadline. A re-armed timer is ordered after events already scheduled for
// the same instant.
func (t *Timer) Reset(at clock.Time) {
	s := t.s
	if at < s.now {
		at = s.now
	}
	s.seq++
	t.at = at
	if t.idx >= 0 {
		e := &s.heap[t.idx]
		e.at, e.seq = at, s.seq
		s.fix(t.idx)
		return
	}
	s.heap = append(s.heap, entry{at: at, seq: s.seq, timer: t})
	t.idx = len(s.heap) - 1
	s.up(t.idx)
}

// Stop disarms the timer.
func (t *Timer) Stop() {
	if t.idx >= 0 {
		t.s.removeAt(t.idx)
		t.idx = -1
	}
	t.at = clock.Never
}

// Armed reports whether the timer will fire.
func (t *Timer) Armed() bool { return t.idx >= 0 }

// Deadline returns the time the timer fires, or clock.Never.
func (t *Timer) Deadline() clock.Time {
	if t.idx < 0 {
		return clock.Never
	}
	return t.at
}

// The heap is 4-ary: shallower than binary, and the four children of a node
// share a cache line or two, which is what dominates at the heap sizes of a
// many-flow simulation.
const arity = 4

func (s *Scheduler) swap(i, j int) {
	h := s.heap
	h[i], h[j] = h[j], h[i]
	if h[i].timer != nil {
		h[i].timer.idx = i
	}
	if h[j].timer != nil {
		h[j].timer.idx = j
	}
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
	s.heap[last] = entry{} // drop references for the GC
	s.heap = s.heap[:last]
	if i < last {
		s.fix(i)
	}
}
