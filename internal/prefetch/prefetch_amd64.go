package prefetch

import "unsafe"

// Line starts loading the cache line holding p into all cache levels
// (PREFETCHT0). p may be nil or invalid: a prefetch never faults.
//
//go:noescape
func Line(p unsafe.Pointer)

// Lines starts loading n consecutive cache lines from p: a whole struct
// that the code about to run reads most of.
//
//go:noescape
func Lines(p unsafe.Pointer, n int)
