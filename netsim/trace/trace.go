// Package trace reads Mahimahi link traces ("packet-delivery-opportunity"
// traces, the format of mm-link) and answers the two questions the simulator
// asks of them: when is the next delivery opportunity after time t (exact
// mode), and what is the average rate over each window of N ms (averaged
// mode, as the Vegas/NSGA-II paper updates its ns-3 link every 100 ms).
//
// Format: one decimal integer per line, a time in milliseconds from the start
// of the trace at which one MTU-sized packet may leave; a time repeated k
// times is k opportunities in that millisecond; times never decrease; the
// last time is the period after which the trace repeats (mm-link adds it to
// its base time on wrap-around).
package trace

import (
	"github.com/cclab/cclab/internal/boundedio"

	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
)

// PacketSize is the bytes one opportunity carries, 1500 as in Mahimahi's
// traces/README (mm-link's implementation uses 1504, the TUN payload size).
const PacketSize units.Bytes = 1500

// Trace is a parsed trace: distinct millisecond times with their
// opportunity counts, and the period.
type Trace struct {
	// Name is the file name, for messages.
	Name string
	// ms holds distinct opportunity times in ms, increasing.
	ms []int64
	// count[i] is the number of opportunities at ms[i].
	count []int32
	// cum[i] is the number of opportunities before ms[i].
	cum []int64
	// period is the last timestamp, ms.
	period int64
}

// Load reads a trace file; a name ending in .gz is decompressed, so large
// traces can ship compressed.
func Load(path string) (*Trace, error) {
	f, err := boundedio.Open(path, "trace file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gunzip(f, path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	return Parse(r, path)
}

// gunzip opens a .gz trace, saying what is wrong with one that is not
// gzip data (the library's own word for a short file is "unexpected EOF").
func gunzip(r io.Reader, path string) (*gzip.Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not gzip data (%v): a trace named .gz must be gzip-compressed", path, err)
	}
	return zr, nil
}

// maxTime bounds a trace's times, 10^10 ms (116 days): simulated times
// are int64 nanoseconds, and a period of 2^40 ms overflowed them after
// eight loops (the cursor went backwards).
const maxTime = 1e10

// maxLines bounds a trace to keep a malformed input from exhausting memory:
// the largest public Mahimahi traces have about a million lines.
const maxLines = 50_000_000

// Parse reads a trace from r; name is used in error messages, which have the
// form "name:line: problem".
func Parse(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64), 64)
	line := 0
	prev := int64(-1)
	var total int64
	// A line-level error may be the last, partial line of a file that is
	// cut short (a truncated .gz): then the reader's own error, which the
	// scanner holds until the end, is the one to report.
	lineErr := func(format string, args ...any) (*Trace, error) {
		if _, err := io.Copy(io.Discard, io.LimitReader(r, 1<<16)); err != nil {
			return nil, fmt.Errorf("%s:%d: the file is cut short or corrupt (%v)", name, line, err)
		}
		return nil, fmt.Errorf(format, args...)
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		if len(b) == 0 {
			return lineErr("%s:%d: empty line (a Mahimahi trace has one integer per line: a time in ms)", name, line)
		}
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil || v < 0 {
			return lineErr("%s:%d: %q is not a non-negative integer time in ms", name, line, b)
		}
		if v > maxTime {
			return lineErr("%s:%d: time %d ms is implausibly large (limit %d ms, %v)", name, line, v, int64(maxTime), time.Duration(maxTime)*time.Millisecond)
		}
		if v < prev {
			return lineErr("%s:%d: time %d ms is before the previous line's %d ms (times must not decrease)", name, line, v, prev)
		}
		if line > maxLines {
			return lineErr("%s:%d: more than %d lines", name, line, maxLines)
		}
		if v == prev {
			t.count[len(t.count)-1]++
		} else {
			t.ms = append(t.ms, v)
			t.count = append(t.count, 1)
			t.cum = append(t.cum, total)
		}
		total++
		prev = v
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line too long (a Mahimahi trace has one integer per line)", name, line+1)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: empty trace (need at least one line)", name)
	}
	if prev <= 0 {
		return nil, fmt.Errorf("%s:%d: the last time is the trace's period and must be positive, got %d", name, line, prev)
	}
	t.period = prev
	return t, nil
}

// Period returns the trace's loop period.
func (t *Trace) Period() time.Duration { return time.Duration(t.period) * time.Millisecond }

// Opportunities returns the number of opportunities in one period.
func (t *Trace) Opportunities() int64 {
	return t.cum[len(t.cum)-1] + int64(t.count[len(t.count)-1])
}

// MeanRate returns the average capacity over one period.
func (t *Trace) MeanRate() units.Bandwidth {
	return units.BandwidthFromDelta(units.Bytes(t.Opportunities())*PacketSize, t.Period())
}

// Cursor walks the delivery opportunities of a looping trace.
type Cursor struct {
	t    *Trace
	loop int64 // completed periods
	i    int   // index into t.ms
}

// CursorAt returns a cursor at the first opportunity at or after time at
// (measured from the trace's start).
func (t *Trace) CursorAt(at time.Duration) Cursor {
	ms := int64(at / time.Millisecond)
	if at%time.Millisecond != 0 {
		ms++ // the first opportunity at a whole millisecond at or after at
	}
	loop := ms / t.period
	off := ms % t.period
	i := sort.Search(len(t.ms), func(k int) bool { return t.ms[k] >= off })
	if i == len(t.ms) {
		loop, i = loop+1, 0
	}
	// A timestamp equal to the period belongs to this loop and to the
	// start of the next (mm-link's base advances by the period); handled
	// by normal ordering since ms[last] == period.
	return Cursor{t: t, loop: loop, i: i}
}

// Time returns the cursor's opportunity time from the trace's start.
func (c *Cursor) Time() time.Duration {
	return time.Duration(c.loop*c.t.period+c.t.ms[c.i]) * time.Millisecond
}

// Count returns the number of opportunities at the cursor's time.
func (c *Cursor) Count() int { return int(c.t.count[c.i]) }

// Next advances to the next distinct opportunity time.
func (c *Cursor) Next() {
	c.i++
	if c.i == len(c.t.ms) {
		c.i = 0
		c.loop++
	}
}

// MaxWindows bounds the windows of WindowRates: 2^22 windows of 100 ms
// cover a period of 4.8 days, and take 64 MiB.
const MaxWindows = 1 << 22

// WindowRates returns the average rate of each consecutive window of the
// given length over one period, (opportunities in window) x PacketSize x 8 /
// window. A trailing partial window is averaged over its own length.
func (t *Trace) WindowRates(window time.Duration) ([]units.Bandwidth, error) {
	if window < time.Millisecond || window%time.Millisecond != 0 {
		return nil, fmt.Errorf("trace window must be a positive whole number of ms, got %v", window)
	}
	w := int64(window / time.Millisecond)
	n := (t.period + w - 1) / w
	if n > MaxWindows {
		return nil, fmt.Errorf("%s: a period of %v in windows of %v is %d windows, more than %d (%v of memory); use trace_mode exact or a longer trace_window",
			t.Name, t.Period(), window, n, MaxWindows, units.Bytes(n*16))
	}
	counts := make([]int64, n)
	for i, ms := range t.ms {
		// An opportunity at exactly the period falls in the last window.
		k := min(ms/w, n-1)
		counts[k] += int64(t.count[i])
	}
	rates := make([]units.Bandwidth, n)
	for k, c := range counts {
		length := w
		if k == int(n-1) && t.period%w != 0 {
			length = t.period % w
		}
		rates[k] = units.BandwidthFromDelta(units.Bytes(c)*PacketSize, time.Duration(length)*time.Millisecond)
	}
	return rates, nil
}

// Slice returns the part of the trace in [from, from+length), re-based to
// start at 0, with period length: the paper's "cut into 120 s pieces". It
// errors if the piece holds no opportunity.
func (t *Trace) Slice(from, length time.Duration) (*Trace, error) {
	f := int64(from / time.Millisecond)
	l := int64(length / time.Millisecond)
	if f < 0 || l <= 0 {
		return nil, fmt.Errorf("%s: bad slice [%v, +%v)", t.Name, from, length)
	}
	// A piece is looped with its own length as the period, so a piece
	// past the trace's end would loop a stretch with no opportunity: a
	// link switched off for part of every loop.
	if f+l > t.period {
		return nil, fmt.Errorf("%s: the piece [%v, %v) runs past the trace's end (it is %v long): trace_start + trace_length must be at most that", t.Name, from, from+length, t.Period())
	}
	out := &Trace{Name: fmt.Sprintf("%s[%v+%v]", t.Name, from, length), period: l}
	var total int64
	for i, ms := range t.ms {
		if ms < f || ms >= f+l {
			continue
		}
		out.ms = append(out.ms, ms-f)
		out.count = append(out.count, t.count[i])
		out.cum = append(out.cum, total)
		total += int64(t.count[i])
	}
	if total == 0 {
		return nil, fmt.Errorf("%s: no delivery opportunity in [%v, %v)", t.Name, from, from+length)
	}
	return out, nil
}
