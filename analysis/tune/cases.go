package tune

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/trace"
)

// Case is one setting a candidate is simulated in: a scenario, possibly
// with another trace or a piece of one, and a seed. A candidate's score is
// the mean of its metrics over the cases.
type Case struct {
	// Name identifies the case in outputs.
	Name string
	// Scenario is the validated scenario; every simulation runs a clone.
	Scenario *scenario.Scenario
	// Trace is the bottleneck's trace file as given ("" for a fixed
	// rate), Start and Length the piece of it used (Length 0: all of it).
	Trace         string
	Start, Length time.Duration
	// Seed is the scenario's seed.
	Seed uint64
}

// CaseOptions says how scenarios expand into cases.
type CaseOptions struct {
	// Traces, if not empty, replace each scenario's bottleneck with each of
	// these trace files in turn (a fixed rate is dropped).
	Traces []string
	// Piece, if positive, cuts each trace into consecutive pieces this
	// long, from its start, dropping a shorter remainder (the Vegas paper's
	// 120 s pieces), each piece a case; the scenario's trace_start and
	// trace_length are then ignored.
	Piece time.Duration
	// Seeds is the number of seeds per case: the scenario's seed, seed+1,
	// ... [1]. Only scenarios with random elements (loss, RED, background
	// traffic) need more than one.
	Seeds int
	// TraceMode, if set, overrides the scenarios' bottleneck.trace_mode:
	// "exact" or "average".
	TraceMode string
	// Dir, if set, receives copies of the trace pieces in use, so that a
	// simulation reads its piece (tens of thousands of lines) rather than
	// the whole trace file, which dominated the cost of short runs. The
	// results are identical. The caller creates and removes Dir.
	Dir string
}

// Cases expands validated scenarios into cases: scenarios x traces x
// pieces x seeds, in that nesting order.
func Cases(scenarios []*scenario.Scenario, o CaseOptions) ([]Case, error) {
	switch o.TraceMode {
	case "", "exact", "average":
	default:
		return nil, fmt.Errorf("trace mode %q: accepted: exact, average", o.TraceMode)
	}
	if o.Seeds == 0 {
		o.Seeds = 1
	}
	if o.Seeds < 0 {
		return nil, fmt.Errorf("seeds %d: want at least 1", o.Seeds)
	}
	if o.Piece < 0 || o.Piece%time.Millisecond != 0 {
		return nil, fmt.Errorf("piece length %v: want a positive whole number of milliseconds (traces have 1 ms resolution)", o.Piece)
	}
	if len(scenarios) == 0 {
		return nil, errors.New("no scenario")
	}
	c := &cutter{dir: o.Dir, periods: map[string]time.Duration{}}
	var cases []Case
	for si, s := range scenarios {
		traces := o.Traces
		if len(traces) == 0 {
			traces = []string{""} // the scenario's own bottleneck
		}
		for _, tr := range traces {
			base := s.Clone()
			if tr != "" {
				abs, err := filepath.Abs(tr)
				if err != nil {
					return nil, err
				}
				base.Bottleneck.Trace = abs
				base.Bottleneck.Rate = scenario.Rate{}
			}
			if o.TraceMode != "" {
				base.Bottleneck.TraceMode = o.TraceMode
			}
			pieces, err := c.pieces(base, o.Piece)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
			}
			for _, pc := range pieces {
				for k := range o.Seeds {
					cs := pc.s.Clone()
					cs.Seed = s.Seed + uint64(k)
					if err := cs.Validate(); err != nil {
						return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
					}
					var name []string
					if len(scenarios) > 1 || pc.trace == "" {
						name = append(name, s.Name)
						if len(scenarios) > 1 && duplicateName(scenarios, s.Name) {
							name[0] += "#" + strconv.Itoa(si+1)
						}
					}
					if pc.trace != "" {
						n := filepath.Base(pc.trace)
						if pc.length > 0 {
							n += "@" + pc.start.String()
							if o.Piece == 0 {
								n += "+" + pc.length.String()
							}
						}
						name = append(name, n)
					}
					if o.Seeds > 1 {
						name = append(name, "seed"+strconv.FormatUint(cs.Seed, 10))
					}
					cases = append(cases, Case{Name: strings.Join(name, " "), Scenario: cs, Trace: pc.trace, Start: pc.start, Length: pc.length, Seed: cs.Seed})
				}
			}
		}
	}
	return cases, nil
}

func duplicateName(ss []*scenario.Scenario, name string) bool {
	n := 0
	for _, s := range ss {
		if s.Name == name {
			n++
		}
	}
	return n > 1
}

// piece is a scenario set to one piece of its trace.
type piece struct {
	s             *scenario.Scenario
	trace         string
	start, length time.Duration
}

// cutter cuts trace pieces, remembering each trace's period.
type cutter struct {
	dir     string
	n       int // pieces written, for file names
	periods map[string]time.Duration
}

// pieces returns the pieces of s's trace: consecutive pieces of length
// piece if positive, otherwise the scenario's own trace_start and
// trace_length (one piece; the whole trace if trace_length is unset).
func (c *cutter) pieces(s *scenario.Scenario, pieceLen time.Duration) ([]piece, error) {
	b := &s.Bottleneck
	if b.Trace == "" {
		if pieceLen > 0 {
			return nil, fmt.Errorf("cutting into %v pieces needs a trace, and the bottleneck has a fixed rate (give trace files)", pieceLen)
		}
		return []piece{{s: s}}, nil
	}
	// Absolute, so that setting it back into the scenario does not
	// resolve it against the scenario's directory a second time.
	path, err := filepath.Abs(s.Path(b.Trace))
	if err != nil {
		return nil, err
	}
	var starts []time.Duration
	length := b.TraceLength.V
	switch {
	case pieceLen > 0:
		period, err := c.period(path)
		if err != nil {
			return nil, err
		}
		n := int(period / pieceLen)
		if n == 0 {
			return nil, fmt.Errorf("trace %s is %v long, shorter than one %v piece", path, period, pieceLen)
		}
		for k := range n {
			starts = append(starts, time.Duration(k)*pieceLen)
		}
		length = pieceLen
	case length > 0:
		starts = []time.Duration{b.TraceStart.V}
	default:
		// Parsed now (the cache keeps it for the runs): a malformed
		// held-out trace would otherwise fail only after the whole search.
		if _, err := trace.Shared.Load(path); err != nil {
			return nil, err
		}
		s.Bottleneck.Trace = path
		return []piece{{s: s, trace: path, start: b.TraceStart.V}}, nil
	}
	files := make([]string, len(starts))
	if c.dir != "" {
		if files, err = c.cut(path, starts, length); err != nil {
			return nil, err
		}
	}
	out := make([]piece, len(starts))
	for k, st := range starts {
		ps := s.Clone()
		if files[k] != "" {
			// The copy starts at the piece's start; slicing it from 0 gives
			// exactly the piece the original would.
			ps.Bottleneck.Trace = files[k]
			ps.Bottleneck.TraceStart = scenario.Dur(0)
		} else {
			ps.Bottleneck.Trace = path
			ps.Bottleneck.TraceStart = scenario.Dur(st)
		}
		ps.Bottleneck.TraceLength = scenario.Dur(length)
		out[k] = piece{s: ps, trace: path, start: st, length: length}
	}
	return out, nil
}

func (c *cutter) period(path string) (time.Duration, error) {
	if p, ok := c.periods[path]; ok {
		return p, nil
	}
	tr, err := trace.Shared.Load(path)
	if err != nil {
		return 0, err
	}
	c.periods[path] = tr.Period()
	return tr.Period(), nil
}

// cut writes, for each start, the opportunities of [start, start+length)
// re-based to start at 0, as a Mahimahi trace file in c.dir, and returns
// the files' paths. Each file ends with one extra line at exactly length
// ms: it gives the file a positive period even when the piece's
// opportunities all fall at 0, and slicing the file to [0, length), as the
// case's scenario does, leaves it out again.
func (c *cutter) cut(path string, starts []time.Duration, length time.Duration) ([]string, error) {
	if _, err := trace.Shared.Load(path); err != nil {
		return nil, err // a clear message for a malformed trace
	}
	// trace.Open, like the cache, finds the traces cclab ships by name.
	r, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return nil, err
	}
	lenMs := int64(length / time.Millisecond)
	from := make([]int64, len(starts))
	count := make([]int64, len(starts))
	outs := make([]*os.File, len(starts))
	ws := make([]*bufio.Writer, len(starts))
	paths := make([]string, len(starts))
	defer func() {
		for _, o := range outs {
			if o != nil {
				o.Close()
			}
		}
	}()
	for k, st := range starts {
		from[k] = int64(st / time.Millisecond)
		c.n++
		paths[k] = filepath.Join(dir, fmt.Sprintf("piece-%04d-%s", c.n, filepath.Base(strings.TrimSuffix(path, ".gz"))))
		if outs[k], err = os.Create(paths[k]); err != nil {
			return nil, err
		}
		ws[k] = bufio.NewWriter(outs[k])
	}
	sc := bufio.NewScanner(r)
	line := 0
	buf := make([]byte, 0, 24)
	for sc.Scan() {
		line++
		v, err := strconv.ParseInt(strings.TrimSuffix(sc.Text(), "\r"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		for k, f0 := range from {
			if v >= f0 && v < f0+lenMs {
				buf = strconv.AppendInt(buf[:0], v-f0, 10)
				buf = append(buf, '\n')
				ws[k].Write(buf)
				count[k]++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for k := range outs {
		if count[k] == 0 {
			return nil, fmt.Errorf("%s: no delivery opportunity in [%v, %v): the link would carry nothing", path, starts[k], starts[k]+length)
		}
		fmt.Fprintf(ws[k], "%d\n", lenMs)
		if err := ws[k].Flush(); err != nil {
			return nil, err
		}
		if err := outs[k].Close(); err != nil {
			return nil, err
		}
		outs[k] = nil
	}
	return paths, nil
}
