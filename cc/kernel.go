package cc

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// HZ is a Linux kernel's CONFIG_HZ, for controllers that follow the
// kernel's arithmetic and so count time in its jiffies (Linux CUBIC's
// clock, Westwood+'s estimator).
type HZ int64

// Jiffies returns the jiffy counter at now, rounded down, counting from
// the run's time zero.
func (hz HZ) Jiffies(now clock.Time) int64 {
	return int64(now) * int64(hz) / int64(time.Second)
}

// FromDuration converts d to jiffies rounding up, as the kernel's
// usecs_to_jiffies does.
func (hz HZ) FromDuration(d time.Duration) int64 {
	return (int64(d)*int64(hz) + int64(time.Second) - 1) / int64(time.Second)
}

// CongAvoidAI is Linux's tcp_cong_avoid_ai in segments: cwnd grows by one
// segment per w acknowledged, *cnt (snd_cwnd_cnt) carrying the count, with
// credit earned at a larger w applied first. It returns the new cwnd.
func CongAvoidAI[T ~int64 | ~uint32](cwnd, w, acked T, cnt *T) T {
	if *cnt >= w {
		*cnt = 0
		cwnd++
	}
	*cnt += acked
	if *cnt >= w {
		delta := *cnt / w
		*cnt -= delta * w
		cwnd += delta
	}
	return cwnd
}
