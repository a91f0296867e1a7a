package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSweepLines checks the plain-line display: a line at most every
// LineEvery, the final line once, with rate and ETA.
func TestSweepLines(t *testing.T) {
	var b bytes.Buffer
	d := NewSweep("lines", &b)
	for i, el := range []time.Duration{0, time.Second, 11 * time.Second, 12 * time.Second, 20 * time.Second, 20 * time.Second} {
		d.Update(Snapshot{Done: min(2*i, 10), Total: 10, Elapsed: el})
	}
	d.Finish()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"sweep: 0/10 runs (0.0%)", "sweep: 4/10 runs (40.0%), 0.4 runs/s, ETA 17s", "sweep: 10/10 runs (100.0%), 0.5 runs/s"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}

// TestRunsLines checks that off a terminal the final count is printed.
func TestRunsLines(t *testing.T) {
	var b bytes.Buffer
	p := NewRuns(&b, "study")
	for i := 1; i <= 3; i++ {
		p.Update(i, 3)
	}
	p.Finish()
	if !strings.Contains(b.String(), "study: 3/3 runs") {
		t.Errorf("output %q lacks the final line", b.String())
	}
}
