// Package cputime reads the CPU time the current process has used, so that
// speed measurements on a shared machine can be stated per CPU-second (not
// inflated by time spent waiting for a core) next to wall-clock rates.
package cputime

import "time"

// Process returns the user plus system CPU time of the whole process so
// far, or 0 where the platform does not report it (then ok is false).
func Process() (d time.Duration, ok bool) { return process() }
