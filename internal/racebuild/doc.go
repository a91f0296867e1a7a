// Package racebuild reports whether the binary was built with the race
// detector (go test -race). Tests whose property the detector itself
// changes consult it: under -race, sync.Pool drops a random share of what is
// Put and hands out fresh objects on Get, so code that reuses pooled buffers
// allocates again, and a test asserting zero allocations per call cannot
// hold there.
package racebuild
