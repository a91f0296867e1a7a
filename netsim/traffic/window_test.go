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
