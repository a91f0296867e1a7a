//go:build !linux

package prefetch

// l2Bytes is 0 where the cache's size is not read: the caller's default
// applies.
func l2Bytes() int { return 0 }
