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
	if round != f.cur {
		f.cur = round
		f.recompute()
		return
	}
	f.best = max(f.best, v)
}

// Get returns the windowed maximum, or 0 if there is no sample in the
// window.
func (f *MaxFilter) Get() units.Bandwidth { return f.best }

// Reset forgets every sample.
func (f *MaxFilter) Reset() {
	f.slots = [MaxWindowRounds + 1]filterSlot{}
	f.best = 0
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
