package traffic

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// TestWindowFirst: First is t inside an interval, the next interval's
// start before or between intervals, and clock.Never once the window has
// stopped or its one interval has ended.
func TestWindowFirst(t *testing.T) {
	s := clock.Time(time.Second)
	periodic := Window{Start: s, Stop: 10 * s, Period: 2 * time.Second, From: 0, To: time.Second}
	once := Window{Start: s, From: time.Second, To: 2 * time.Second}
	for _, c := range []struct {
		name string
		w    Window
		at   clock.Time
		want clock.Time
	}{
		{"before the first interval", periodic, 0, s},
		{"inside an interval", periodic, s + s/2, s + s/2},
		{"between intervals", periodic, 2*s + s/2, 3 * s},
		{"after the stop", periodic, 10 * s, clock.Never},
		{"next start at the stop", Window{Start: s, Stop: 9 * s, Period: 2 * time.Second, To: time.Second}, 8*s + s/2, clock.Never},
		{"one interval, before it", once, 0, 2 * s},
		{"one interval, after it", once, 3 * s, clock.Never},
		{"always", Window{}, 0, 0},
	} {
		if got := c.w.First(c.at); got != c.want {
			t.Errorf("%s: First(%v) = %v, want %v", c.name, c.at, got, c.want)
		}
	}
}

// TestWindowEndAndRecur: on windows of small integer times whose intervals
// are separated by gaps, End(t) is the first instant after t outside every
// interval, and Recur's next the first instant inside one from the later
// of End(t) and t+1, found by trying every instant; on windows without
// gaps and without ends, the cases are written out.
func TestWindowEndAndRecur(t *testing.T) {
	const horizon = 400
	firstWhere := func(from clock.Time, inside bool, w Window) clock.Time {
		for u := from; u < horizon; u++ {
			if ok, _ := w.Active(u); ok == inside {
				return u
			}
		}
		return clock.Never
	}
	checked := 0
	for start := clock.Time(0); start < 4; start++ {
		for _, stop := range []clock.Time{0, 37, 90} {
			for period := time.Duration(0); period <= 12; period += 3 {
				for from := time.Duration(0); from <= 4; from += 2 {
					for to := time.Duration(0); to <= 12; to += 5 {
						w := Window{Start: start, Stop: stop, Period: period, From: from, To: to}
						if to != 0 && to <= from || period > 0 && (to > period || from == 0 && (to == 0 || to == period)) || period == 0 && (stop == 0 && to == 0) {
							continue // empty intervals, or ones that touch: below
						}
						for at := clock.Time(0); at < 120; at++ {
							if ok, _ := w.Active(at); !ok {
								continue
							}
							end := w.End(at)
							if want := firstWhere(at, false, w); end != want {
								t.Fatalf("%+v: End(%d) = %v, want %v", w, at, end, want)
							}
							stopAt, next := w.Recur(at)
							want := clock.Never
							if period > 0 {
								want = firstWhere(max(end, at+1), true, w)
							}
							if stopAt != end || next != want {
								t.Fatalf("%+v: Recur(%d) = %v, %v, want %v, %v", w, at, stopAt, next, end, want)
							}
							checked++
						}
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d instants checked", checked)
	}
	s := clock.Time(time.Second)
	for _, c := range []struct {
		name       string
		w          Window
		at         clock.Time
		stop, next clock.Time
	}{
		{"always", Window{}, 5 * s, clock.Never, clock.Never},
		{"from a start on", Window{Start: s}, 5 * s, clock.Never, clock.Never},
		{"until a stop", Window{Stop: 8 * s}, 5 * s, 8 * s, clock.Never},
		{"whole periods", Window{Period: 2 * time.Second}, 3 * s, 4 * s, 4 * s},
		{"whole periods, To = Period", Window{Period: 2 * time.Second, To: 2 * time.Second}, 3 * s, 4 * s, 4 * s},
		{"whole periods, cut at a stop", Window{Stop: 5 * s, Period: 2 * time.Second}, 4 * s, 5 * s, clock.Never},
	} {
		stop, next := c.w.Recur(c.at)
		if stop != c.stop || next != c.next || c.w.End(c.at) != c.stop {
			t.Errorf("%s: Recur(%v) = %v, %v and End = %v; want %v, %v", c.name, c.at, stop, next, c.w.End(c.at), c.stop, c.next)
		}
	}
}
