package progress

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Snapshot is a batch's progress: Done of Total runs finished, Resumed of
// them by an earlier invocation, Elapsed since this one started.
type Snapshot struct {
	Done, Total, Resumed int
	Elapsed              time.Duration
}

// LineEvery spaces the plain progress lines written when stderr is
// not a terminal (CI logs, kubectl logs, SLURM output files).
var LineEvery = 10 * time.Second

// Sweep shows a sweep's progress as a bar (terminal) or as
// occasional plain lines (logs).
type Sweep struct {
	mode    string
	w       io.Writer
	bar     *progressbar.ProgressBar
	resumed int
	last    time.Duration
	// finalShown stops a repeated 100% line.
	finalShown bool
}

// NewSweep returns a display in mode bar, lines or off.
func NewSweep(mode string, w io.Writer) *Sweep {
	return &Sweep{mode: mode, w: w, last: -LineEvery}
}

// Update shows a snapshot.
func (d *Sweep) Update(p Snapshot) {
	switch d.mode {
	case "bar":
		if d.bar == nil {
			d.resumed = p.Resumed
			desc := "sweep"
			if p.Resumed > 0 {
				desc = fmt.Sprintf("sweep (%d resumed)", p.Resumed)
			}
			// The bar counts this invocation's runs only, so that its
			// rate and ETA are not inflated by resumed ones.
			d.bar = progressbar.NewOptions(p.Total-p.Resumed,
				progressbar.OptionSetWriter(d.w),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("runs"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetWidth(40),
				progressbar.OptionSetRenderBlankState(true),
			)
		}
		d.bar.Set(p.Done - d.resumed)
	case "lines":
		final := p.Done == p.Total
		if d.finalShown || (!final && p.Elapsed-d.last < LineEvery) {
			return
		}
		d.last, d.finalShown = p.Elapsed, final
		line := fmt.Sprintf("sweep: %d/%d runs (%.1f%%)", p.Done, p.Total, 100*float64(p.Done)/float64(max(p.Total, 1)))
		if n := p.Done - p.Resumed; n > 0 && p.Elapsed > 0 {
			rate := float64(n) / p.Elapsed.Seconds()
			line += fmt.Sprintf(", %.1f runs/s", rate)
			if left := p.Total - p.Done; left > 0 {
				line += fmt.Sprintf(", ETA %s", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
			}
		}
		if p.Resumed > 0 {
			line += fmt.Sprintf(" [%d resumed]", p.Resumed)
		}
		fmt.Fprintln(d.w, line)
	}
}

// Warn shows a warning without breaking the bar.
func (d *Sweep) Warn(msg string) {
	if d.bar != nil {
		fmt.Fprintln(d.w)
	}
	fmt.Fprintln(d.w, "warning: "+msg)
}

// Finish ends the bar.
func (d *Sweep) Finish() {
	if d.bar != nil {
		d.bar.Close()
		fmt.Fprintln(d.w)
	}
}

// Mode resolves a --progress setting: "auto" is a bar on a terminal and
// plain lines otherwise; other values are returned as they are.
func Mode(mode string, w io.Writer) string {
	if mode != "auto" {
		return mode
	}
	if IsTerminal(w) {
		return "bar"
	}
	return "lines"
}
