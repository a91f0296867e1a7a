package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cclab/cclab/internal/atomicfile"
)

// File names inside a sweep output directory.
const (
	ManifestFile      = "sweep.json"
	RowsFile          = "rows.jsonl"
	RowsCSVFile       = "rows.csv"
	AggregateCSVFile  = "aggregate.csv"
	AggregateJSONFile = "aggregate.json"
)

// tmpPrefix marks this package's temporary files, so that leftovers from a
// kill during a rewrite can be removed without touching anything else.
const tmpPrefix = atomicfile.TempPrefix

// maxLine bounds one row: a full Result of a few hundred flows. Longer
// lines are corrupt data, not rows.
const maxLine = 64 << 20

// ReadManifest reads DIR/sweep.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: not a sweep manifest: %v", path, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%s: format %d, this cclab reads format %d", path, m.Format, Format)
	}
	if m.Runs < 1 || m.Shard.Count < 1 || m.Shard.Index < 0 || m.Shard.Index >= m.Shard.Count {
		return nil, fmt.Errorf("%s: corrupt manifest (runs %d, shard %s)", path, m.Runs, m.Shard)
	}
	combos := 1
	for _, a := range m.Grid {
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("%s: corrupt grid: %v", path, err)
		}
		// Planning bounds a sweep at MaxJobs runs; a manifest beyond it
		// (edited by hand) would overflow the job count.
		if len(a.Values) > MaxJobs/combos {
			return nil, fmt.Errorf("%s: corrupt grid: more than %d combinations", path, MaxJobs)
		}
		combos *= len(a.Values)
	}
	if m.Runs > MaxJobs/combos {
		return nil, fmt.Errorf("%s: corrupt manifest: %d runs of %d combinations, more than the %d runs a sweep may have", path, m.Runs, combos, MaxJobs)
	}
	if combos != m.Combinations {
		return nil, fmt.Errorf("%s: corrupt manifest: %d combinations recorded, the grid gives %d", path, m.Combinations, combos)
	}
	if h := m.hash(); h != m.Hash {
		return nil, fmt.Errorf("%s: corrupt manifest: hash %s does not match its content (%s)", path, m.Hash, h)
	}
	return &m, nil
}

// extends reports whether want is have with more runs per combination
// and nothing else changed, which a whole (unsharded) sweep can take in
// place: row (combination, run) keeps its seed, and its index is computed
// from the manifest when read.
func extends(have, want *Manifest) bool {
	if have.Runs >= want.Runs || have.Shard.Count != 1 || want.Shard.Count != 1 {
		return false
	}
	h := *have
	h.Runs = want.Runs
	h.Hash = h.hash()
	return h.Hash == want.Hash
}

// checkSame explains how two manifests of what should be the same sweep
// differ, or returns nil.
func checkSame(dir string, have, want *Manifest) error {
	var diffs []string
	if have.Scenario != want.Scenario {
		diffs = append(diffs, fmt.Sprintf("the scenario file's content differs (recorded: %s)", have.ScenarioPath))
	}
	if !slices.Equal(have.Sets, want.Sets) {
		diffs = append(diffs, fmt.Sprintf("--set: recorded %q, now %q", have.Sets, want.Sets))
	}
	if a, b := gridText(have.Grid), gridText(want.Grid); a != b {
		diffs = append(diffs, fmt.Sprintf("--grid: recorded %s, now %s", a, b))
	}
	if have.FirstSeed != want.FirstSeed {
		diffs = append(diffs, fmt.Sprintf("first seed: recorded %d, now %d", have.FirstSeed, want.FirstSeed))
	}
	if have.Runs != want.Runs {
		diffs = append(diffs, fmt.Sprintf("--runs: recorded %d, now %d", have.Runs, want.Runs))
	}
	if have.Shard != want.Shard {
		diffs = append(diffs, fmt.Sprintf("--shard: recorded %s, now %s", have.Shard, want.Shard))
	}
	if len(diffs) == 0 && have.Hash != want.Hash {
		diffs = append(diffs, "the definition hash differs")
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s holds a different sweep: %s; resume with the same arguments or choose another --out", dir, strings.Join(diffs, "; "))
}

func gridText(g []Axis) string {
	if len(g) == 0 {
		return "(none)"
	}
	parts := make([]string, len(g))
	for i, a := range g {
		parts[i] = a.Key + "=" + strings.Join(a.Values, ",")
	}
	return strings.Join(parts, " ")
}

// Rows holds a directory's finished runs, indexed by job.
type Rows struct {
	m    *Manifest
	rows map[int]*Row
	raw  map[int][]byte
	// end is the file offset after the last complete line.
	end int64
}

func newRows(m *Manifest) *Rows {
	return &Rows{m: m, rows: map[int]*Row{}, raw: map[int][]byte{}}
}

// Len is the number of finished runs.
func (rs *Rows) Len() int { return len(rs.rows) }

// Has reports whether job index j has a row.
func (rs *Rows) Has(j int) bool { return rs.rows[j] != nil }

// Sorted returns the rows in (combination, run) order.
func (rs *Rows) Sorted() []*Row {
	keys := make([]int, 0, len(rs.rows))
	for k := range rs.rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*Row, len(keys))
	for i, k := range keys {
		out[i] = rs.rows[k]
	}
	return out
}

// check validates a decoded row against the manifest and returns its job
// index.
func (rs *Rows) check(r *Row) (int, error) {
	m := rs.m
	if r.Combo < 0 || r.Combo >= m.Combinations {
		return 0, fmt.Errorf("combination %d is outside the sweep's %d combinations", r.Combo, m.Combinations)
	}
	if r.Run < 0 || r.Run >= m.Runs {
		return 0, fmt.Errorf("run %d is outside the sweep's %d runs", r.Run, m.Runs)
	}
	j := r.Combo*m.Runs + r.Run
	if !m.InShard(j) {
		return 0, fmt.Errorf("combination %d run %d belongs to another shard than %s", r.Combo, r.Run, m.Shard)
	}
	if want := m.Seed(r.Run); r.Seed != want {
		return 0, fmt.Errorf("combination %d run %d has seed %d, the sweep gives it seed %d", r.Combo, r.Run, r.Seed, want)
	}
	params := m.ComboParams(r.Combo)
	if len(r.Params) != len(params) {
		return 0, fmt.Errorf("combination %d has %d parameters, the grid has %d", r.Combo, len(r.Params), len(params))
	}
	for _, p := range params {
		if v, ok := r.Params[p.Key]; !ok || v != p.Value {
			return 0, fmt.Errorf("combination %d has %s=%q, the grid gives %q", r.Combo, p.Key, v, p.Value)
		}
	}
	if r.Result == nil {
		return 0, fmt.Errorf("combination %d run %d has no result", r.Combo, r.Run)
	}
	return j, nil
}

// add records a checked row.
func (rs *Rows) add(j int, r *Row, raw []byte) {
	rs.rows[j] = r
	rs.raw[j] = raw
}

// readRows reads rows.jsonl. A final line without its newline is what a
// kill during a write leaves: it is dropped (the run is redone) and
// rs.end marks where it starts, so that a writer can cut it off. Any other bad line is an
// error naming the file and line, since silently skipping it would lose or
// corrupt a finished row.
func readRows(path string, m *Manifest, warn func(string)) (*Rows, error) {
	rs := newRows(m)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rs, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	lineOf := map[int]int{}
	for line := 1; ; line++ {
		b, err := readLine(br)
		if err == io.EOF && len(b) == 0 {
			return rs, nil
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if err == io.EOF {
			// No newline: the write of this row was cut short.
			warn(fmt.Sprintf("%s:%d: dropping an incomplete last line (%d bytes; a run interrupted while writing), its run will be redone", path, line, len(b)))
			return rs, nil
		}
		body := bytes.TrimSuffix(b, []byte("\n"))
		var r Row
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: corrupt row (%v); the file was modified or damaged: fix or remove that line to resume", path, line, err)
		}
		j, err := rs.check(&r)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: row does not belong to this sweep: %v", path, line, err)
		}
		if prev, dup := lineOf[j]; dup {
			return nil, fmt.Errorf("%s:%d: combination %d run %d is already recorded at line %d", path, line, r.Combo, r.Run, prev)
		}
		lineOf[j] = line
		rs.add(j, &r, body)
		rs.end += int64(len(b))
	}
}

// readLine returns one line including its newline, or the unterminated rest
// with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes: not a row", maxLine)
		}
		switch err {
		case nil:
			return buf, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, err
		}
	}
}

// removeTemps deletes temporary files a killed rewrite left behind.
func removeTemps(dir string) {
	matches, _ := filepath.Glob(filepath.Join(dir, tmpPrefix+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

func writeManifest(dir string, m *Manifest) error {
	return atomicfile.Write(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
}

// writeRowsJSONL rewrites rows.jsonl in key order, keeping each line's
// bytes as recorded.
func writeRowsJSONL(path string, rs *Rows) error {
	keys := make([]int, 0, len(rs.raw))
	for k := range rs.raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return atomicfile.Write(path, func(w io.Writer) error {
		for _, k := range keys {
			if _, err := w.Write(rs.raw[k]); err != nil {
				return err
			}
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
		return nil
	})
}
