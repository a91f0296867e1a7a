package cputime

import (
	"time"

	"golang.org/x/sys/windows"
)

func process() (time.Duration, bool) {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0, false
	}
	// Kernel and user times are durations in 100 ns units, not dates
	// (Filetime.Nanoseconds would subtract the 1601 epoch).
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100, true
}
