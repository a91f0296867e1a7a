// Package traffic generates background traffic with MGEN-like semantics:
// packet processes (periodic constant bit rate, Poisson), activity windows
// (on/off patterns, parts of a sequence repeating every period, mice bursts
// with exponential inter-arrival times) and flow-size distributions for
// random flow arrivals. It only computes times and sizes from a seeded
// random stream; the network turns them into packets and flows.
package traffic

import (
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Process decides when a UDP source sends.
type Process struct {
	// Poisson draws exponential gaps (mean = packet time at Rate) instead
	// of periodic ones.
	Poisson bool
	// Rate is the source rate while active.
	Rate units.Bandwidth
	// Size is the packet size.
	Size units.Bytes
	// Window restricts activity to periodic windows.
	Window Window
	// Mice, if non-zero, makes the source send bursts of BurstLen at Rate
	// whose starts form a Poisson process of mean gap MiceGap, inside the
	// windows.
	MiceGap, BurstLen time.Duration

	rnd        *rand.Rand
	scale      float64
	burstEnd   clock.Time
	burstStart clock.Time
}

// Window is a set of periodic activity intervals: [Start+k*Period+From,
// Start+k*Period+To) for k = 0, 1, ..., cut at Stop. A zero Period means the
// single interval [Start+From, Start+To); To = 0 means unbounded.
type Window struct {
	Start, Stop clock.Time
	Period      time.Duration
	From, To    time.Duration
}

// First returns when the window is next active at or after t: t itself
// inside a window, else the next window's start (clock.Never if none).
func (w Window) First(t clock.Time) clock.Time {
	_, at := w.Active(t)
	return at
}

// End returns when the interval holding t closes (t is inside one):
// clock.Never for an interval without an end, and Stop if that comes
// first.
func (w Window) End(t clock.Time) clock.Time {
	end := clock.Never
	switch {
	case w.Period > 0:
		to := w.To
		if to == 0 {
			to = w.Period
		}
		end = w.periodStart(t).Add(to)
	case w.To > 0:
		end = w.Start.Add(w.To)
	}
	if w.Stop > 0 && w.Stop < end {
		end = w.Stop
	}
	return end
}

// periodStart returns the start of the period t falls in, for a window
// with a Period; End and Active both count from it.
func (w Window) periodStart(t clock.Time) clock.Time {
	return w.Start.Add(t.Sub(w.Start) / w.Period * w.Period)
}

// Recur is the schedule of a flow started at t, inside an interval, that
// lasts until the interval closes: when it stops (End(t), after t) and
// when the next such flow starts, at the next interval's start (End(t)
// itself where intervals touch; clock.Never without a period or once the
// window has stopped). The simulator's and the emulator's background
// flows both follow it.
func (w Window) Recur(t clock.Time) (stop, next clock.Time) {
	stop = w.End(t)
	if w.Period == 0 {
		return stop, clock.Never
	}
	return stop, w.First(stop)
}

// Active reports whether t is inside a window, and if not, the next window
// start after t (clock.Never if none).
func (w Window) Active(t clock.Time) (bool, clock.Time) {
	if w.Stop > 0 && t >= w.Stop {
		return false, clock.Never
	}
	if t < w.Start.Add(w.From) {
		return false, w.Start.Add(w.From)
	}
	if w.Period == 0 {
		if w.To == 0 || t < w.Start.Add(w.To) {
			return true, t
		}
		return false, clock.Never
	}
	base := w.periodStart(t)
	if t >= base.Add(w.From) && (w.To == 0 || t < base.Add(w.To)) {
		return true, t
	}
	next := base.Add(w.From)
	if next <= t {
		next = base.Add(w.Period + w.From)
	}
	if w.Stop > 0 && next >= w.Stop {
		return false, clock.Never
	}
	return false, next
}

// NewProcess returns a process drawing from rnd.
func NewProcess(p Process, rnd *rand.Rand) *Process {
	if rnd == nil {
		panic("traffic: NewProcess needs a random source")
	}
	p.rnd, p.scale = rnd, 1
	return &p
}

// SetScale multiplies the rate from now on (background traffic adapting to
// a new link).
func (p *Process) SetScale(f float64) { p.scale = f }

// Scale returns the current rate multiplier.
func (p *Process) Scale() float64 { return p.scale }

// gap is the time between packets at the scaled rate, drawn exponential for
// a Poisson process.
func (p *Process) gap() time.Duration {
	rate := units.Bandwidth(float64(p.Rate) * p.scale)
	if rate <= 0 {
		return time.Duration(1<<62 - 1)
	}
	g := rate.TxTime(p.Size)
	if p.Poisson {
		return time.Duration(p.rnd.ExpFloat64() * float64(g))
	}
	return g
}

// First returns the first send time at or after t.
func (p *Process) First(t clock.Time) clock.Time {
	return p.align(t, true)
}

// Next returns the send time following a packet sent at t.
func (p *Process) Next(t clock.Time) clock.Time {
	return p.align(t.Add(p.gap()), false)
}

// align moves a candidate send time into the next active window (and burst,
// for mice).
func (p *Process) align(t clock.Time, first bool) clock.Time {
	for range 1 << 20 {
		ok, next := p.Window.Active(t)
		if !ok {
			if next == clock.Never {
				return clock.Never
			}
			t = next
			if p.Poisson && p.MiceGap == 0 {
				// A Poisson source restarts its process at a window
				// start, like a fresh MGEN flow.
				t = t.Add(time.Duration(p.rnd.ExpFloat64() * float64(p.gap())))
			}
			continue
		}
		if p.MiceGap == 0 {
			return t
		}
		if t < p.burstEnd && t >= p.burstStart {
			return t
		}
		// Start the next burst after an exponential gap.
		from := max(t, p.burstEnd)
		if first {
			from = t
			first = false
		}
		p.burstStart = from.Add(time.Duration(p.rnd.ExpFloat64() * float64(p.MiceGap)))
		p.burstEnd = p.burstStart.Add(p.BurstLen)
		t = p.burstStart
	}
	return clock.Never
}

// MeanRate returns the long-run offered rate of the process: Rate times the
// fraction of time active (windows, and bursts for mice), at scale 1.
func (p *Process) MeanRate() units.Bandwidth {
	f := 1.0
	if p.Window.Period > 0 {
		to := p.Window.To
		if to == 0 {
			to = p.Window.Period
		}
		f *= float64(to-p.Window.From) / float64(p.Window.Period)
	}
	if p.MiceGap > 0 && p.Rate > 0 {
		// A burst sends the packets that start within BurstLen at Rate
		// (ceil(BurstLen/gap), at least one), and the next burst starts
		// MiceGap (mean) after the previous one ends.
		gap := p.Rate.TxTime(p.Size)
		n := (p.BurstLen + gap - 1) / gap
		bits := float64(n) * float64(p.Size) * 8
		return units.Bandwidth(f * bits / (p.BurstLen + p.MiceGap).Seconds())
	}
	return units.Bandwidth(float64(p.Rate) * f)
}
