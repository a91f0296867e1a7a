package sim

import "github.com/cclab/cclab/core/clock"

// RunUntilOr is RunUntil that asks stop every `every` events whether to
// return early, and reports whether it did. Interrupting by event count,
// not by simulated time, bounds the wall time between two checks however
// dense the events are (a nanosecond timer, a terabit link); the check
// itself is a counter compare, and stop is called rarely enough that a
// context's Err (a mutex) costs nothing measurable.
func (s *Scheduler) RunUntilOr(t clock.Time, every int, stop func() bool) bool {
	every = max(every, 1)
	n := every
	for !s.stopped && s.top() && s.pickAt <= t {
		s.fire()
		if n--; n == 0 {
			n = every
			if stop() {
				return true
			}
		}
	}
	if !s.stopped && s.now < t {
		s.now = t
	}
	return false
}
