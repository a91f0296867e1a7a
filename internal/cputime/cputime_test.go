package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessAdvances: busy work on one goroutine must add some CPU time
// (how much depends on the machine's load) and never more than the wall
// time times the number of CPUs, plus the clock's granularity.
func TestProcessAdvances(t *testing.T) {
	t0, ok := Process()
	if !ok {
		t.Skip("no CPU time on this platform")
	}
	w0 := time.Now()
	x := 0.0
	for time.Since(w0) < 50*time.Millisecond {
		for i := 0; i < 1000; i++ {
			x += float64(i) * 1e-9
		}
	}
	wall := time.Since(w0)
	t1, _ := Process()
	used := t1 - t0
	if used <= 0 || used > wall*time.Duration(runtime.NumCPU())+50*time.Millisecond {
		t.Fatalf("CPU time %v for %v of busy wall time (x=%v)", used, wall, x)
	}
}
