// Package trainlog records per-iteration training statistics (losses,
// entropy, episode returns, ...) as CSV rows and drives a terminal progress
// bar. The CSV has a "step" column (environment steps so far) followed by
// the fields of the first row, in order; later rows must carry the same
// fields.
//
// The progress bar reads the wall clock for its rate and ETA display only;
// nothing recorded in the CSV depends on time.
package trainlog

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/cclab/cclab/internal/progress"
)

// Field is one named statistic.
type Field struct {
	Name  string
	Value float64
}

// F is shorthand for Field{name, value}.
func F(name string, value float64) Field { return Field{name, value} }

// Logger writes rows to a CSV writer and updates a progress bar; either may
// be absent. The zero Logger discards everything.
type Logger struct {
	csv    *csv.Writer
	header []string
	bar    *progressbar.ProgressBar
	lines  *lineProgress
	// Last holds the most recent row's fields.
	Last []Field
	row  []string
}

// New returns a logger writing CSV to csvOut (nil: none) and a progress bar
// over total steps to progressOut (nil: none).
func New(csvOut, progressOut io.Writer, total int64, description string) *Logger {
	l := &Logger{}
	if csvOut != nil {
		l.csv = csv.NewWriter(csvOut)
	}
	if progressOut != nil && total > 0 && !progress.IsTerminal(progressOut) {
		// Logs (nohup, SLURM, CI) get a plain line now and then instead of
		// a bar's carriage returns.
		l.lines = &lineProgress{w: progressOut, total: total, desc: description, start: time.Now()}
	} else if progressOut != nil && total > 0 {
		l.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(progressOut),
			progressbar.OptionSetDescription(description),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("steps"),
			progressbar.OptionThrottle(200_000_000), // 200 ms between redraws
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(progressOut) }),
		)
	}
	return l
}

// Log records a row at the given step count and moves the progress bar.
func (l *Logger) Log(step int64, fields ...Field) error {
	l.Last = append(l.Last[:0], fields...)
	l.Progress(step)
	if l.csv == nil {
		return nil
	}
	if l.header == nil {
		l.header = append(l.header, "step")
		for _, f := range fields {
			l.header = append(l.header, f.Name)
		}
		if err := l.csv.Write(l.header); err != nil {
			return fmt.Errorf("trainlog: %w", err)
		}
	}
	if len(fields)+1 != len(l.header) {
		return fmt.Errorf("trainlog: row has %d fields, header has %d", len(fields), len(l.header)-1)
	}
	l.row = append(l.row[:0], strconv.FormatInt(step, 10))
	for i, f := range fields {
		if f.Name != l.header[i+1] {
			return fmt.Errorf("trainlog: field %d is %q, header says %q", i, f.Name, l.header[i+1])
		}
		l.row = append(l.row, formatValue(f.Value))
	}
	if err := l.csv.Write(l.row); err != nil {
		return fmt.Errorf("trainlog: %w", err)
	}
	l.csv.Flush()
	return l.csv.Error()
}

func formatValue(v float64) string {
	if math.IsNaN(v) {
		return "" // e.g. no episode finished yet: an empty cell, not "NaN"
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

// Progress moves the progress bar without writing a row.
func (l *Logger) Progress(step int64) {
	if l.bar != nil {
		l.bar.Set64(step)
	}
	if l.lines != nil {
		l.lines.update(step, false)
	}
}

// Describe sets the progress bar's description (e.g. the latest return).
func (l *Logger) Describe(s string) {
	if l.bar != nil {
		l.bar.Describe(s)
	}
	if l.lines != nil {
		l.lines.note = s
	}
}

// LineEvery spaces the progress lines written when the progress output is
// not a terminal.
var LineEvery = 10 * time.Second

// lineProgress writes "desc: step/total (p%), rate steps/s, ETA d" lines.
type lineProgress struct {
	w           io.Writer
	total, step int64
	desc, note  string
	start, last time.Time
	done        bool
}

func (p *lineProgress) update(step int64, final bool) {
	p.step = step
	now := time.Now()
	if p.done || (!final && now.Sub(p.last) < LineEvery) {
		return
	}
	if p.last.IsZero() && !final {
		// The first call only starts the clock: no line at step 0.
		p.last = now
		return
	}
	p.last, p.done = now, final
	line := fmt.Sprintf("%s: %d/%d steps (%.1f%%)", p.desc, step, p.total, 100*float64(step)/float64(p.total))
	if el := now.Sub(p.start).Seconds(); el > 0 && step > 0 {
		rate := float64(step) / el
		line += fmt.Sprintf(", %.0f steps/s", rate)
		if left := p.total - step; left > 0 {
			line += fmt.Sprintf(", ETA %s", time.Duration(float64(left)/rate*1e9).Round(time.Second))
		}
	}
	if p.note != "" {
		line += " [" + p.note + "]"
	}
	fmt.Fprintln(p.w, line)
}

// Close completes the progress bar and flushes the CSV.
func (l *Logger) Close() error {
	if l.bar != nil {
		l.bar.Finish()
	}
	if l.lines != nil {
		l.lines.update(l.lines.step, true)
	}
	if l.csv != nil {
		l.csv.Flush()
		return l.csv.Error()
	}
	return nil
}
