//go:build !linux

package clock

import "time"

func preciseThread() {}

func sleepPrecise(d time.Duration) { time.Sleep(d) }
