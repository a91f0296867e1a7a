package clock

import (
	"sync"
	"time"
)

// Real is a Scheduler backed by the operating system's monotonic clock.
// Timer callbacks are not run on timer goroutines: they are queued and run by
// Run, one at a time, so that code written for the simulator's single
// goroutine (no locks) is also correct on a real clock.
type Real struct {
	start time.Time
	mu    sync.Mutex
	ready []func()
	wake  chan struct{}
}

// NewReal returns a real clock whose origin is the moment of the call.
func NewReal() *Real {
	return &Real{start: time.Now(), wake: make(chan struct{}, 1)}
}

// Now returns the time since the clock was created.
func (r *Real) Now() Time { return Time(time.Since(r.start)) }

// NewTimer returns a disarmed timer whose callback is run by Run.
func (r *Real) NewTimer(f func(now Time)) Timer {
	return &realTimer{clock: r, f: f, deadline: Never}
}

// Post queues f to run on the Run goroutine, e.g. for a received datagram.
func (r *Real) Post(f func()) {
	r.mu.Lock()
	r.ready = append(r.ready, f)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run executes queued callbacks until stop is closed.
func (r *Real) Run(stop <-chan struct{}) {
	for {
		r.mu.Lock()
		batch := r.ready
		r.ready = nil
		r.mu.Unlock()
		for _, f := range batch {
			f()
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-stop:
			return
		case <-r.wake:
		}
	}
}

type realTimer struct {
	clock    *Real
	f        func(Time)
	t        *time.Timer
	gen      uint64 // invalidates callbacks of earlier Resets
	deadline Time
}

func (t *realTimer) Reset(at Time) {
	t.Stop()
	t.gen++
	gen := t.gen
	t.deadline = at
	d := at.Sub(t.clock.Now())
	t.t = time.AfterFunc(d, func() {
		t.clock.Post(func() {
			// A Reset or Stop after this firing was queued wins.
			if t.gen != gen || t.deadline == Never {
				return
			}
			t.deadline = Never
			t.f(t.clock.Now())
		})
	})
}

func (t *realTimer) Stop() {
	if t.t != nil {
		t.t.Stop()
		t.t = nil
	}
	t.gen++
	t.deadline = Never
}

func (t *realTimer) Armed() bool    { return t.deadline != Never }
func (t *realTimer) Deadline() Time { return t.deadline }
