package prefetch

import (
	"strconv"
	"strings"
	"sync"
)

// L2Bytes returns the size of one core's second-level data cache in bytes,
// as the operating system reports it, or 0 where it does not (or reports
// something unreadable). It is read once per process.
//
// Whether prefetching a simulation's per-flow state pays depends on whether
// that state fits this cache: below it the state stays cached and
// prefetching is only overhead.
var L2Bytes = sync.OnceValue(l2Bytes)

// maxCacheSize is the largest size ParseCacheSize accepts.
const maxCacheSize = 1 << 30

// ParseCacheSize reads a cache size as Linux's sysfs prints it
// (/sys/devices/system/cpu/cpuN/cache/indexK/size: "2048K", also "1M" or
// a plain byte count), returning 0 and false for anything else.
func ParseCacheSize(s string) (int, bool) {
	s = strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	// Bound the value (1 GiB, more than any cache) so that the product
	// fits an int on 32-bit platforms too, whatever the suffix.
	if err != nil || n <= 0 || n > maxCacheSize/mult {
		return 0, false
	}
	return n * mult, true
}
