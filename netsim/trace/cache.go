package trace

import (
	"github.com/cclab/cclab/internal/boundedio"

	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cclab/cclab/core/units"
)

// Cache keeps parsed traces and their derived forms (pieces, window rates)
// so that sweeps and tuners, which build the same trace-driven link
// thousands of times, parse each file once. Traces are immutable, so cached
// values are shared between goroutines. Entries are keyed by the file's
// path, size and modification time: an edited file is read again.
type Cache struct {
	mu    sync.Mutex
	files map[fileKey]*Trace
	parts map[partKey]*Trace
	rates map[rateKey][]units.Bandwidth
}

type fileKey struct {
	path  string
	size  int64
	mtime time.Time
}

type partKey struct {
	file         fileKey
	from, length time.Duration
}

type rateKey struct {
	part   partKey
	window time.Duration
}

// Shared is the process-wide cache.
var Shared = &Cache{}

func (c *Cache) key(path string) (fileKey, error) {
	path, err := Find(path)
	if err != nil {
		return fileKey{}, err
	}
	if name, ok := strings.CutPrefix(path, builtinPrefix); ok {
		return fileKey{path: builtinPrefix + name}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fileKey{}, err
	}
	return fileKey{path, st.Size(), st.ModTime()}, nil
}

// Find resolves a trace name as the loaders do: the path on disk, else the
// path with ".gz" added, else a built-in trace of that base name (with or
// without ".gz"), which it returns as "builtin:NAME". A trace found
// nowhere is an error listing the built-in traces.
func Find(path string) (string, error) {
	_, err := os.Stat(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return path, err
	}
	if !strings.HasSuffix(path, ".gz") {
		if _, gzErr := os.Stat(path + ".gz"); gzErr == nil {
			return path + ".gz", nil
		}
	}
	if name, ok := builtinName(filepath.Base(path)); ok {
		return builtinPrefix + name, nil
	}
	if names := BuiltinNames(); len(names) > 0 {
		return "", fmt.Errorf("%w (built-in traces: %s)", err, strings.Join(names, ", "))
	}
	return "", err
}

// builtinName returns the built-in trace file called name or name.gz.
func builtinName(name string) (string, bool) {
	for _, n := range []string{name, name + ".gz"} {
		if _, ok := builtinBytes(n); ok {
			return n, true
		}
	}
	return "", false
}

// BuiltinNames lists the built-in trace files.
func BuiltinNames() []string {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	var names []string
	for _, f := range builtin {
		ents, _ := fs.ReadDir(f, ".")
		for _, e := range ents {
			if !e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	return names
}

// builtinPrefix marks cache keys of built-in traces.
const builtinPrefix = "builtin:"

// builtin holds trace files shipped inside the binary (see RegisterFS).
var (
	builtinMu sync.Mutex
	builtin   []fs.FS
)

// RegisterFS makes the traces in fsys available by base name when a path
// does not exist on disk, so built-in scenarios find the traces the
// repository ships wherever cclab runs.
func RegisterFS(fsys fs.FS) {
	builtinMu.Lock()
	builtin = append(builtin, fsys)
	builtinMu.Unlock()
}

// Open opens the trace file at path for reading its text (decompressed if
// the name ends in .gz). A path that does not exist on disk is looked up
// among the built-in traces by name, as Cache.Load does.
func Open(path string) (io.ReadCloser, error) {
	var raw io.ReadCloser
	path, err := Find(path)
	if err != nil {
		return nil, err
	}
	if name, ok := strings.CutPrefix(path, builtinPrefix); ok {
		data, _ := builtinBytes(name)
		raw, path = io.NopCloser(bytes.NewReader(data)), name
	} else {
		f, err := boundedio.Open(path, "trace file")
		if err != nil {
			return nil, err
		}
		raw = f
	}
	if !strings.HasSuffix(path, ".gz") {
		return raw, nil
	}
	zr, err := gunzip(raw, path)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, raw}, nil
}

// builtinBytes returns the raw bytes of the built-in trace file name.
func builtinBytes(name string) ([]byte, bool) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	for _, f := range builtin {
		if data, err := fs.ReadFile(f, name); err == nil {
			return data, true
		}
	}
	return nil, false
}

// loadBuiltin parses a built-in trace by the base name of path (with or
// without ".gz").
func loadBuiltin(path string) (*Trace, bool, error) {
	name, ok := builtinName(filepath.Base(path))
	if !ok {
		return nil, false, nil
	}
	data, ok := builtinBytes(name)
	if !ok {
		return nil, false, nil
	}
	var r io.Reader = bytes.NewReader(data)
	if strings.HasSuffix(name, ".gz") {
		zr, err := gunzip(r, path)
		if err != nil {
			return nil, true, err
		}
		r = zr
	}
	t, err := Parse(r, path)
	return t, true, err
}

// Load returns the trace at path, parsing it on first use. A path that
// does not exist on disk is looked up among the built-in traces by name.
func (c *Cache) Load(path string) (*Trace, error) {
	k, err := c.key(path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	t, ok := c.files[k]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	if strings.HasPrefix(k.path, builtinPrefix) {
		t, _, err = loadBuiltin(path)
	} else {
		t, err = Load(k.path)
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.files == nil {
		c.files = map[fileKey]*Trace{}
	}
	c.files[k] = t
	c.mu.Unlock()
	return t, nil
}

// Piece returns the trace at path cut to [from, from+length) (the whole
// trace if length is 0), cached.
func (c *Cache) Piece(path string, from, length time.Duration) (*Trace, error) {
	t, err := c.Load(path)
	if err != nil {
		return nil, err
	}
	if from >= t.Period() {
		return nil, fmt.Errorf("%s: trace_start %v is not before the trace's end (it is %v long)", t.Name, from, t.Period())
	}
	if length <= 0 {
		return t, nil
	}
	fk, _ := c.key(path)
	k := partKey{fk, from, length}
	c.mu.Lock()
	p, ok := c.parts[k]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err = t.Slice(from, length)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.parts == nil {
		c.parts = map[partKey]*Trace{}
	}
	c.parts[k] = p
	c.mu.Unlock()
	return p, nil
}

// WindowRates returns Piece(path, from, length).WindowRates(window),
// cached; callers must not modify the slice.
func (c *Cache) WindowRates(path string, from, length, window time.Duration) ([]units.Bandwidth, error) {
	fk, err := c.key(path)
	if err != nil {
		return nil, err
	}
	k := rateKey{partKey{fk, from, length}, window}
	c.mu.Lock()
	r, ok := c.rates[k]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	t, err := c.Piece(path, from, length)
	if err != nil {
		return nil, err
	}
	r, err = t.WindowRates(window)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.mu.Lock()
	if c.rates == nil {
		c.rates = map[rateKey][]units.Bandwidth{}
	}
	c.rates[k] = r
	c.mu.Unlock()
	return r, nil
}
