// Package clock defines the time type shared by the simulator, transports,
// congestion controllers and real-network code, and the two clocks that
// produce it: the simulator's virtual clock and a real one.
//
// Time is an argument everywhere below the scheduler: controllers and
// transports receive the event time and never read a global clock, so the
// same code runs unchanged in simulation and on real sockets.
package clock

import (
	"strconv"
	"time"
)

// Time is an instant in nanoseconds since an arbitrary origin (the start of a
// simulation, or the creation of a Real clock). Integer nanoseconds keep
// simulations exact and reproducible; there is no float64 time in state.
type Time int64

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is strictly before u.
func (t Time) Before(u Time) bool { return t < u }

// After reports whether t is strictly after u.
func (t Time) After(u Time) bool { return t > u }

// Seconds returns t as float64 seconds since the origin, for reporting only.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Duration returns t as the duration since the origin.
func (t Time) Duration() time.Duration { return time.Duration(t) }

// String formats t as a duration since the origin, e.g. "1.5s".
func (t Time) String() string { return time.Duration(t).String() }

// Never is a time later than any event; a timer armed at Never never fires.
const Never Time = 1<<63 - 1

// FromSeconds converts float seconds to Time, for configuration input only.
func FromSeconds(s float64) Time { return Time(s * 1e9) }

// Clock reports the current time.
type Clock interface {
	Now() Time
}

// Timer is a one-shot timer owned by one component. Its callback runs on the
// scheduler's goroutine, never concurrently with other callbacks of the same
// scheduler, so components need no locks.
type Timer interface {
	// Reset arms the timer to fire at the absolute time at, replacing any
	// earlier deadline. Resetting to a time in the past fires as soon as
	// possible.
	Reset(at Time)
	// Stop disarms the timer; it is a no-op if the timer is not armed.
	Stop()
	// Armed reports whether the timer is armed.
	Armed() bool
	// Deadline returns the armed deadline, or Never.
	Deadline() Time
}

// Scheduler is a Clock that can also create timers. The simulator's event
// queue and the Real clock both satisfy it, which is how the same transport
// code runs in simulation and over real sockets.
type Scheduler interface {
	Clock
	// NewTimer returns a disarmed timer that calls f with the firing time.
	NewTimer(f func(now Time)) Timer
}

// FormatSeconds renders t as seconds with millisecond precision.
func FormatSeconds(t Time) string { return strconv.FormatFloat(t.Seconds(), 'f', 3, 64) }
