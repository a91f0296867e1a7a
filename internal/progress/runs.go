// Package progress shows how far a batch of runs has got: a bar with an
// ETA on a terminal, plain lines otherwise (logs, CI, nohup, SLURM).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Runs reports the advance of a batch of runs: a bar with ETA on a
// terminal, plain lines at most every few seconds otherwise (logs, CI).
type Runs struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	bar   *progressbar.ProgressBar
	start time.Time
	last  time.Time
	done  int
	total int
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewRuns returns a display of a batch of runs on w.
func NewRuns(w io.Writer, label string) *Runs {
	return &Runs{w: w, label: label, start: time.Now()}
}

// Update records that done of total runs are finished; safe for concurrent
// use.
func (p *Runs) Update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.total = done, total
	if IsTerminal(p.w) {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(p.label),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("runs"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
		p.bar.Set(done)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= 5*time.Second || done == total {
		p.last = now
		el := now.Sub(p.start)
		eta := "?"
		if done > 0 {
			eta = (time.Duration(float64(el) / float64(done) * float64(total-done))).Round(time.Second).String()
		}
		fmt.Fprintf(p.w, "%s: %d/%d runs, %s elapsed, ETA %s\n", p.label, done, total, el.Round(time.Second), eta)
	}
}

// Finish clears the bar.
func (p *Runs) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}

// Evaluations is a bar of an optimiser's evaluations, described by the
// generation under way.
type Evaluations struct {
	bar   *progressbar.ProgressBar
	label string
}

// NewEvaluations returns a bar of total evaluations on w.
func NewEvaluations(w io.Writer, total int, label string) *Evaluations {
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("evaluations"),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return &Evaluations{bar: bar, label: label}
}

// Update shows done of total evaluations, in generation gen of gens.
func (e *Evaluations) Update(done, total, gen, gens int) {
	if total != e.bar.GetMax() {
		e.bar.ChangeMax(total)
	}
	e.bar.Describe(fmt.Sprintf("%s: generation %d/%d", e.label, gen, gens))
	e.bar.Set(done)
}

// Finish completes the bar.
func (e *Evaluations) Finish() { e.bar.Finish() }
