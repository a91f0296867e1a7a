package bbr

import "github.com/cclab/cclab/core/units"

// MaxWindowRounds is the largest bottleneck-bandwidth filter window, in
// round trips, that the filter can hold (and the range limit of the
// bw_window_rounds parameter).
const MaxWindowRounds = 100

// MaxFilter is an exact windowed maximum of bandwidth samples over round
// trips: Get returns the largest sample taken in the current round or in the
// Window rounds before it (a sample from round r counts until round
// r+Window, as with Linux's minmax_running_max(&bw, bbr_bw_rtts, rtt_cnt)).
//
// Linux approximates the windowed maximum with Kathleen Nichols' three-sample
// minmax; this filter keeps the maximum of each of the last MaxWindowRounds+1
// rounds instead, so it is exact and its window can change at run time with
// a well-defined result: after SetWindow(w) the estimate is the maximum over
// the last w rounds of the samples already taken, whatever the window was
// when they were taken. Like Linux's, it only moves on with samples: the
// current round is the latest round passed to Update.
//
// The zero value is not usable; use NewMaxFilter.
type MaxFilter struct {
	window uint64
	cur    uint64          // latest round seen
	best   units.Bandwidth // max over the window, kept up to date
	slots  [MaxWindowRounds + 1]filterSlot
	// With linux, Get returns Linux's approximation instead (mm, fed
	// with every sample either way, so the mode can change at any time).
	linux bool
	mm    [3]filterSlot
}

type filterSlot struct {
	round uint64
	v     units.Bandwidth
	set   bool
}

// NewMaxFilter returns an empty filter with the given window in rounds,
// clamped to [1, MaxWindowRounds].
func NewMaxFilter(window int) MaxFilter {
	var f MaxFilter
	f.SetWindow(window)
	return f
}

// Window returns the window in rounds.
func (f *MaxFilter) Window() int { return int(f.window) }

// SetWindow changes the window (clamped to [1, MaxWindowRounds]) and
// re-evaluates the maximum over the retained per-round maxima.
func (f *MaxFilter) SetWindow(w int) {
	f.window = uint64(min(max(w, 1), MaxWindowRounds))
	f.recompute()
}

// Update adds a sample taken in the given round. Rounds must not decrease.
func (f *MaxFilter) Update(round uint64, v units.Bandwidth) {
	s := &f.slots[round%uint64(len(f.slots))]
	if !s.set || s.round != round {
		*s = filterSlot{round: round, v: v, set: true}
	} else if v > s.v {
		s.v = v
	}
	f.runningMax(round, v)
	if round != f.cur {
		f.cur = round
		f.recompute()
		return
	}
	f.best = max(f.best, v)
}

// Get returns the windowed maximum, or 0 if there is no sample in the
// window; with SetLinux(true), Linux's estimate of it.
func (f *MaxFilter) Get() units.Bandwidth {
	if f.linux {
		return f.mm[0].v
	}
	return f.best
}

// SetLinux chooses what Get returns: Linux's windowed maximum
// (lib/win_minmax.c, Kathleen Nichols' algorithm: the best, second and
// third best samples, kept apart in time, which can lag the exact maximum
// as samples age out: a falling rate is followed in steps) or the exact one.
// Both are fed with every sample, so the choice can change at any time.
func (f *MaxFilter) SetLinux(on bool) { f.linux = on }

// Reset forgets every sample.
func (f *MaxFilter) Reset() {
	f.slots = [MaxWindowRounds + 1]filterSlot{}
	f.best = 0
	f.mm = [3]filterSlot{}
}

// runningMax is Linux's minmax_running_max with the window in rounds, as
// tcp_bbr.c's bbr_update_bw calls it (rtt_cnt as the time). An empty
// filter holds 0, so its first sample starts it over, as in Linux.
func (f *MaxFilter) runningMax(round uint64, v units.Bandwidth) {
	m := &f.mm
	val := filterSlot{round: round, v: v, set: true}
	if v >= m[0].v || round-m[2].round > f.window {
		m[0], m[1], m[2] = val, val, val // minmax_reset
		return
	}
	if v >= m[1].v {
		m[1], m[2] = val, val
	} else if v >= m[2].v {
		m[2] = val
	}
	// minmax_subwin_update: as rounds pass, move the choices along.
	dt := round - m[0].round
	switch {
	case dt > f.window:
		m[0], m[1], m[2] = m[1], m[2], val
		if round-m[0].round > f.window {
			m[0], m[1], m[2] = m[1], m[2], val
		}
	case m[1].round == m[0].round && dt > f.window/4:
		m[1], m[2] = val, val
	case m[2].round == m[1].round && dt > f.window/2:
		m[2] = val
	}
}

func (f *MaxFilter) recompute() {
	f.best = 0
	for i := range f.slots {
		s := &f.slots[i]
		if s.set && s.round <= f.cur && f.cur-s.round <= f.window {
			f.best = max(f.best, s.v)
		}
	}
}
