package experiment

import (
	"os"
	"runtime"
	"testing"
)

// TestOneProcessor: a run's simulation goes on one processor and the
// previous setting comes back after it, unless GOMAXPROCS is in the
// environment, which wins.
func TestOneProcessor(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	restore := OneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("during the run: GOMAXPROCS %d, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("after the run: GOMAXPROCS %d, want 2 back", n)
	}
	t.Setenv("GOMAXPROCS", "2")
	restore = OneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("with GOMAXPROCS=2 in the environment: %d during the run, want 2", n)
	}
	restore()
}
