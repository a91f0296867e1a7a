package scenario

import (
	"strings"

	"github.com/cclab/cclab/cc"

	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/cclab/cclab/internal/boundedio"
	"github.com/cclab/cclab/internal/yamlguard"
	"github.com/cclab/cclab/netsim/traffic"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxFileSize bounds scenario files: a scenario is a page of YAML, and the
// bound keeps a wrong path (a trace, a binary) from being parsed.
const MaxFileSize = 4 << 20

// Load reads, decodes and validates a scenario file. Errors name the file
// and, where possible, the line, column and field.
func Load(path string) (*Scenario, error) {
	data, err := boundedio.ReadFile(path, MaxFileSize, "scenario file")
	if err != nil {
		return nil, err
	}
	s, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// yamlPos matches goccy/go-yaml's "[line:col] message" error prefix.
var yamlPos = regexp.MustCompile(`^\[(\d+):(\d+)\] `)

// Parse decodes and validates a scenario from YAML; name is used in errors
// and its directory resolves relative paths.
func Parse(data []byte, name string) (*Scenario, error) {
	s, file, err := decode(data, name)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, Locate(err, file, name)
	}
	return s, nil
}

// Decode parses YAML into a Scenario without validating it, so that
// overrides can be applied first. The returned file locates later
// validation errors (see Locate).
func Decode(data []byte, name string) (*Scenario, *ast.File, error) {
	return decode(data, name)
}

// bom is the UTF-8 byte-order mark some editors write first; it is not
// part of the first key.
var bom = []byte{0xEF, 0xBB, 0xBF}

func decode(data []byte, name string) (s *Scenario, file *ast.File, err error) {
	// goccy/go-yaml panics on some malformed inputs (the fuzzer found a
	// tagged scalar where a list was expected): a bad file is an error,
	// never a crash.
	defer func() {
		if r := recover(); r != nil {
			s, file, err = nil, nil, fmt.Errorf("%s: malformed YAML that the YAML library cannot decode (%v); check the file's syntax", name, r)
		}
	}()
	return decodeUnguarded(data, name)
}

func decodeUnguarded(data []byte, name string) (*Scenario, *ast.File, error) {
	data = bytes.TrimPrefix(data, bom)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("%s: empty scenario file", name)
	}
	// Aliases and deep nesting cost the YAML library memory out of all
	// proportion to the input: refuse them before it sees them.
	if err := yamlguard.Check(data); err != nil {
		return nil, nil, fmt.Errorf("%s:%v", name, err)
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s", positioned(name, firstLine(yaml.FormatError(err, false, false))))
	}
	if len(file.Docs) == 0 || file.Docs[0] == nil || file.Docs[0].Body == nil {
		return nil, nil, fmt.Errorf("%s: empty scenario file (only comments or blank lines)", name)
	}
	for _, doc := range file.Docs[min(1, len(file.Docs)):] {
		if doc == nil || doc.Body == nil {
			continue // an empty document after a final "---"
		}
		line := 0
		if tk := doc.Body.GetToken(); tk != nil && tk.Position != nil {
			line = tk.Position.Line
		}
		return nil, nil, fmt.Errorf("%s:%d: a second YAML document (after ---): a scenario file holds one", name, line)
	}
	var s Scenario
	if err := yaml.UnmarshalWithOptions(data, &s, yaml.Strict()); err != nil {
		return nil, nil, decodeError(err, file, name)
	}
	if at, v := fractionalInt(file); at != nil {
		return nil, nil, fmt.Errorf("%s:%d:%d: %s: must be a whole number, got %s", name, at.line, at.col, at.path, v)
	}
	// An absent count means 1; an explicit 0 is a mistake, not 1.
	if at := zeroCount(file); at != nil {
		return nil, nil, fmt.Errorf("%s:%d:%d: %s: must be at least 1, got 0 (omit count for one)", name, at.line, at.col, at.path)
	}
	if name != "" {
		s.dir = filepath.Dir(name)
	}
	return &s, file, nil
}

// positioned turns goccy's "[L:C] msg" into "name:L:C: msg", the form of
// every other error.
func positioned(name, msg string) string {
	if m := yamlPos.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s:%s: %s", name, m[1], m[2], msg[len(m[0]):])
	}
	return fmt.Sprintf("%s: %s", name, msg)
}

// decodeError rewrites the YAML library's decoding errors in the
// scenario's terms: the field's path instead of Go type names, the
// nearest known field for an unknown one, and a position for errors of
// the cc field, which the library reports without one.
func decodeError(err error, file *ast.File, name string) error {
	var (
		te *yaml.TypeError
		ue *yaml.UnknownFieldError
		ne *yaml.UnexpectedNodeTypeError
		oe *yaml.OverflowError
	)
	switch {
	case errors.As(err, &oe) && oe.Token != nil && oe.Token.Position != nil:
		pos := oe.Token.Position
		path := pathAt(file, pos.Line, pos.Column)
		if path == "" {
			path = "value"
		}
		return fmt.Errorf("%s:%d:%d: %s: %s out of range for %s", name, pos.Line, pos.Column, path, oe.SrcNum, kindName(oe.DstType))
	case errors.As(err, &ne) && ne.Token != nil && ne.Token.Position != nil:
		pos := ne.Token.Position
		path := pathAt(file, pos.Line, pos.Column)
		if path == "" {
			path = "value"
		}
		return fmt.Errorf("%s:%d:%d: %s: want %s, got %s", name, pos.Line, pos.Column, path, nodeKind(ne.Expected), quoteValue(ne.Token.Value))
	case errors.As(err, &te) && te.Token != nil && te.Token.Position != nil:
		pos := te.Token.Position
		path := pathAt(file, pos.Line, pos.Column)
		if path == "" {
			path = "value"
		}
		return fmt.Errorf("%s:%d:%d: %s: want %s, got %s", name, pos.Line, pos.Column, path, kindName(te.DstType), quoteValue(te.Token.Value))
	case errors.As(err, &ue) && ue.Token != nil && ue.Token.Position != nil:
		pos := ue.Token.Position
		field := ue.Token.Value
		msg := fmt.Sprintf("%s:%d:%d: unknown field %q", name, pos.Line, pos.Column, field)
		if near := nearestField(pathAt(file, pos.Line, pos.Column), field); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return fmt.Errorf("%s (see docs/scenarios.md for the accepted fields)", msg)
	}
	msg := firstLine(yaml.FormatError(err, false, false))
	if !yamlPos.MatchString(msg) {
		if at := badCC(file); at != nil {
			return fmt.Errorf("%s:%d:%d: %s: %s", name, at.line, at.col, at.path, msg)
		}
	}
	return fmt.Errorf("%s", positioned(name, msg))
}
func firstLine(s string) string {
	if i := bytes.IndexByte([]byte(s), '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Locate adds file, line and column to a validation *Error using the YAML
// syntax tree; other errors are returned with the file name prefixed.
func Locate(err error, file *ast.File, name string) error {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%s: %w", name, err)
	}
	e.File = name
	if file == nil {
		return e
	}
	// Walk up the path until a node exists: a missing field is reported
	// at its parent mapping.
	for p := e.Path; p != ""; p = parentPath(p) {
		yp, perr := yaml.PathString("$." + p)
		if perr != nil {
			continue
		}
		node, nerr := yp.FilterFile(file)
		if nerr != nil || node == nil {
			continue
		}
		if tk := node.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
			return e
		}
	}
	return e
}

// Override is a value given on top of a scenario file (--set, --cc, a
// sweep's grid value, a tuner's parameter), for attributing errors.
type Override struct {
	// Path is the path given to Set.
	Path string
	// Origin names the override in messages ("--set cc=cubic").
	Origin string
}

// LocateOverrides is Locate for a scenario modified by overrides: an
// error in a field an override set is attributed to the override, not to
// the file line whose value it replaced.
func LocateOverrides(err error, file *ast.File, name string, ovs []Override) error {
	var e *Error
	if errors.As(err, &e) {
		for i := len(ovs) - 1; i >= 0; i-- {
			if overrides(ovs[i].Path, e.Path) {
				e.Origin = ovs[i].Origin
				return e
			}
		}
	}
	return Locate(err, file, name)
}

// overrides reports whether Set(path) changes the field at errPath
// ("flows[0].cc.beta") or one of its parents or children.
func overrides(path, errPath string) bool {
	norm := func(p string) []string {
		return strings.Split(strings.NewReplacer("[", ".", "]", "").Replace(strings.TrimSpace(p)), ".")
	}
	set, got := norm(path), norm(errPath)
	switch {
	case len(set) == 1 && set[0] == "cc", len(set) == 2 && set[0] == "cc":
		// Shorthands: every flow's controller.
		set = []string{"flows", "*", "cc"}
	case len(set) == 2:
		if _, err := cc.Lookup(set[0]); err == nil {
			set = []string{"flows", "*", "cc"}
		}
	}
	for i := 0; i < min(len(set), len(got)); i++ {
		if set[i] != got[i] && set[i] != "*" {
			return false
		}
	}
	return true
}

var lastSeg = regexp.MustCompile(`(\.[^.\[]+|\[\d+\])$`)

// parentPath drops the last segment: "flows[0].cc" -> "flows[0]" ->
// "flows" -> "".
func parentPath(p string) string {
	q := lastSeg.ReplaceAllString(p, "")
	if q == p {
		return ""
	}
	return q
}

// Marshal writes the scenario back as YAML (used to record the exact
// scenario of a run next to its results).
func (s *Scenario) Marshal() ([]byte, error) {
	return yaml.MarshalWithOptions(s, yaml.OmitEmpty(), yaml.OmitZero())
}

// MarshalFor is Marshal for a copy of the scenario written into dir: its
// relative file paths (the bottleneck's trace, background size CDFs) are
// rewritten to reach the same files from dir, so that the copy re-runs
// from where it is. A path that names no file on disk (a built-in trace,
// found by name anywhere) is kept as written.
func (s *Scenario) MarshalFor(dir string) ([]byte, error) {
	c := s.Clone()
	rebase := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if _, err := os.Stat(s.Path(p)); err != nil {
			return p
		}
		abs, err1 := filepath.Abs(s.Path(p))
		base, err2 := filepath.Abs(dir)
		if err1 != nil || err2 != nil {
			return p
		}
		if rel, err := filepath.Rel(base, abs); err == nil {
			return rel
		}
		return abs
	}
	c.Bottleneck.Trace = rebase(c.Bottleneck.Trace)
	for i := range c.Background {
		if b := &c.Background[i]; !slices.Contains(traffic.NamedDistributions(), b.Sizes) {
			b.Sizes = rebase(b.Sizes)
		}
	}
	return c.Marshal()
}

// Clone returns a deep copy, so that parallel runs can each modify their own.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Bottleneck.Loss = cloneLoss(s.Bottleneck.Loss)
	c.Bottleneck.AckReadShare = clonePtr(s.Bottleneck.AckReadShare, same[float64])
	c.Bottleneck.Queue = s.Bottleneck.Queue
	c.Bottleneck.Schedule = cloneSlice(s.Bottleneck.Schedule, cloneChange)
	c.Transport = cloneTransport(s.Transport)
	c.Flows = cloneSlice(s.Flows, cloneFlow)
	c.Background = cloneSlice(s.Background, cloneBackground)
	return &c
}

func cloneSlice[T any](in []T, f func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

func clonePtr[T any](p *T, f func(T) T) *T {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

func same[T any](v T) T { return v }

func cloneLoss(l Loss) Loss {
	l.LossBad = clonePtr(l.LossBad, same[float64])
	return l
}

func cloneChange(c Change) Change {
	c.Loss = clonePtr(c.Loss, cloneLoss)
	c.Queue = clonePtr(c.Queue, same[Queue])
	c.StopBackground = cloneSlice(c.StopBackground, same[string])
	return c
}

func cloneTransport(t Transport) Transport {
	t.DelayedAck = clonePtr(t.DelayedAck, same[bool])
	t.SACK = clonePtr(t.SACK, same[bool])
	t.QuickAck = clonePtr(t.QuickAck, same[bool])
	t.AckFirst = clonePtr(t.AckFirst, same[bool])
	t.HandshakeAck = clonePtr(t.HandshakeAck, same[bool])
	t.TLP = clonePtr(t.TLP, same[bool])
	t.RACK = clonePtr(t.RACK, same[bool])
	t.FRTO = clonePtr(t.FRTO, same[bool])
	t.ECN = clonePtr(t.ECN, same[bool])
	t.KernelHZ = clonePtr(t.KernelHZ, same[int])
	t.SACKCompression = clonePtr(t.SACKCompression, same[bool])
	t.Nagle = clonePtr(t.Nagle, same[bool])
	return t
}

func cloneCC(c CC) CC {
	if c.Params != nil {
		m := make(map[string]float64, len(c.Params))
		for k, v := range c.Params {
			m[k] = v
		}
		c.Params = m
	}
	return c
}

func cloneFlow(f Flow) Flow {
	f.CC = cloneCC(f.CC)
	f.Loss = clonePtr(f.Loss, cloneLoss)
	f.Transport = clonePtr(f.Transport, cloneTransport)
	f.Coding = clonePtr(f.Coding, same[Coding])
	return f
}

func cloneBackground(b Background) Background {
	b.CC = cloneCC(b.CC)
	b.Sequence = cloneSlice(b.Sequence, cloneBackground)
	return b
}
