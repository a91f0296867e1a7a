package cc

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// TestHZ: jiffies round down, durations convert rounding up
// (usecs_to_jiffies), at Debian's 250 Hz.
func TestHZ(t *testing.T) {
	hz := HZ(250)
	if got := hz.Jiffies(clock.Time(7999 * time.Microsecond)); got != 1 {
		t.Errorf("Jiffies(7.999 ms) = %d, want 1", got)
	}
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {time.Nanosecond, 1}, {4 * time.Millisecond, 1}, {4*time.Millisecond + 1, 2}, {time.Second, 250}} {
		if got := hz.FromDuration(c.d); got != c.want {
			t.Errorf("FromDuration(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

// TestCongAvoidAI follows tcp_cong_avoid_ai: one segment per w acked,
// the count carried, and credit from a larger w applied at once.
func TestCongAvoidAI(t *testing.T) {
	var cnt int64
	cwnd := int64(10)
	for range 9 {
		cwnd = CongAvoidAI(cwnd, 10, 1, &cnt)
	}
	if cwnd != 10 || cnt != 9 {
		t.Fatalf("after 9 of 10: cwnd %d, cnt %d", cwnd, cnt)
	}
	if cwnd = CongAvoidAI(cwnd, 10, 25, &cnt); cwnd != 13 || cnt != 4 {
		t.Fatalf("34 acked at w 10: cwnd %d, cnt %d; want 13, 4", cwnd, cnt)
	}
	var c32 uint32 = 8
	if got := CongAvoidAI(uint32(20), 5, 1, &c32); got != 21 || c32 != 1 {
		t.Fatalf("credit 8 at w 5: cwnd %d, cnt %d; want 21, 1", got, c32)
	}
}
