package clock

import (
	"container/heap"
	"runtime"
	"sync"
	"time"
)

// Real is a Scheduler backed by the operating system's monotonic clock.
// Timer callbacks are not run on timer goroutines: one goroutine (the one in
// Run or Loop) runs them one at a time, together with queued functions and
// input values, so that code written for the simulator's single goroutine
// (no locks) is also correct on a real clock.
//
// Timers live in a heap owned by that goroutine: Reset and Stop must be
// called from it (or before it starts), as in the simulator. Deadlines
// closer than a millisecond are waited for with a precise sleep of the
// loop's locked OS thread instead of the Go runtime's timers, which round
// sub-millisecond waits up to about a millisecond on Linux: a pacer that
// spaces 1500-byte packets at 50 Mbit/s needs 240 µs gaps.
type Real struct {
	start time.Time
	mu    sync.Mutex
	ready []func()
	spare []func()
	wake  chan struct{}
	heap  timerHeap
}

// NewReal returns a real clock whose origin is the moment of the call.
func NewReal() *Real {
	return &Real{start: time.Now(), wake: make(chan struct{}, 1)}
}

// Now returns the time since the clock was created.
func (r *Real) Now() Time { return Time(time.Since(r.start)) }

// NewTimer returns a disarmed timer whose callback is run by Run or Loop.
func (r *Real) NewTimer(f func(now Time)) Timer {
	return &realTimer{clock: r, f: f, deadline: Never, index: -1}
}

// Post queues f to run on the loop goroutine. It is safe to call from any
// goroutine; it is meant for rare events (an agent's action, a stop
// request), not per packet: use Loop's input channel for those.
func (r *Real) Post(f func()) {
	r.mu.Lock()
	r.ready = append(r.ready, f)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run executes timers and queued callbacks until stop is closed.
func (r *Real) Run(stop <-chan struct{}) {
	Loop[struct{}](r, stop, nil, nil)
}

// precise is the horizon below which Loop sleeps precisely (see Real).
const precise = 1500 * time.Microsecond

// spin is how long before a deadline Loop stops sleeping and polls.
const spin = 60 * time.Microsecond

// slice bounds one precise sleep, so that input arriving meanwhile waits
// at most this long.
const slice = 100 * time.Microsecond

// Loop runs r's timers and queued callbacks, and calls handle for every
// value received from in, all on the calling goroutine, until stop is
// closed. A nil in means no input. Loop locks the goroutine to its OS
// thread while it runs.
func Loop[T any](r *Real, stop <-chan struct{}, in <-chan T, handle func(T)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	preciseThread()
	var sleeper *time.Timer
	defer func() {
		if sleeper != nil {
			sleeper.Stop()
		}
	}()
	for {
		select {
		case <-stop:
			return
		default:
		}
		r.runQueued()
		next := r.runDue()
		// Input first: handle everything already waiting without sleeping.
		if in != nil {
			select {
			case v := <-in:
				handle(v)
				continue
			default:
			}
		}
		if next != Never {
			if d := next.Sub(r.Now()); d <= 0 {
				continue
			} else if d < precise {
				if r.hasQueued() {
					continue
				}
				// Sleep until shortly before the deadline, then spin:
				// a sleep overshoots by tens of microseconds, more than
				// a fast pacer's whole gap.
				if d > spin {
					sleepPrecise(min(d-spin, slice))
				} else {
					runtime.Gosched()
				}
				continue
			}
		}
		var fire <-chan time.Time
		if next != Never {
			d := next.Sub(r.Now()) - precise/2
			if sleeper == nil {
				sleeper = time.NewTimer(d)
			} else {
				sleeper.Reset(d)
			}
			fire = sleeper.C
		}
		select {
		case <-stop:
			return
		case <-r.wake:
		case <-fire:
		case v := <-in:
			handle(v)
		}
		if sleeper != nil {
			sleeper.Stop()
		}
	}
}

func (r *Real) hasQueued() bool {
	r.mu.Lock()
	n := len(r.ready)
	r.mu.Unlock()
	return n > 0
}

// runQueued runs the functions queued by Post so far.
func (r *Real) runQueued() {
	r.mu.Lock()
	batch := r.ready
	r.ready = r.spare[:0]
	r.mu.Unlock()
	for i, f := range batch {
		f()
		batch[i] = nil
	}
	r.spare = batch
}

// runDue fires every timer whose deadline has passed and returns the next
// deadline, or Never.
func (r *Real) runDue() Time {
	for len(r.heap) > 0 {
		t := r.heap[0]
		now := r.Now()
		if t.deadline > now {
			return t.deadline
		}
		heap.Pop(&r.heap)
		t.deadline = Never
		t.f(now)
	}
	return Never
}

type realTimer struct {
	clock    *Real
	f        func(Time)
	deadline Time
	index    int // position in the heap, -1 when disarmed
}

func (t *realTimer) Reset(at Time) {
	if at == Never {
		t.Stop()
		return
	}
	t.deadline = at
	if t.index >= 0 {
		heap.Fix(&t.clock.heap, t.index)
		return
	}
	heap.Push(&t.clock.heap, t)
}

func (t *realTimer) Stop() {
	if t.index >= 0 {
		heap.Remove(&t.clock.heap, t.index)
	}
	t.deadline = Never
}

func (t *realTimer) Armed() bool    { return t.deadline != Never }
func (t *realTimer) Deadline() Time { return t.deadline }

// timerHeap orders armed timers by deadline.
type timerHeap []*realTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*realTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
