//go:build !amd64

package prefetch

import "unsafe"

// Line would start loading the cache line holding p; this processor has no
// implementation, so it does nothing.
func Line(p unsafe.Pointer) {}

// Lines would start loading n cache lines from p; this processor has no
// implementation, so it does nothing.
func Lines(p unsafe.Pointer, n int) {}
