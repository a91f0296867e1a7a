package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// maxFileSize bounds scenario files: a scenario is a page of YAML, and the
// bound keeps a wrong path (a trace, a binary) from being parsed.
const maxFileSize = 4 << 20

// Load reads, decodes and validates a scenario file. Errors name the file
// and, where possible, the line, column and field.
func Load(path string) (*Scenario, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%s: %d bytes is too large for a scenario file (limit %d)", path, st.Size(), maxFileSize)
	}
	data, err := os.ReadFile(path)
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

func decode(data []byte, name string) (*Scenario, *ast.File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("%s: empty scenario file", name)
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s", name, firstLine(yaml.FormatError(err, false, false)))
	}
	var s Scenario
	if err := yaml.UnmarshalWithOptions(data, &s, yaml.Strict()); err != nil {
		msg := firstLine(yaml.FormatError(err, false, false))
		if m := yamlPos.FindStringSubmatch(msg); m != nil {
			return nil, nil, fmt.Errorf("%s:%s:%s: %s", name, m[1], m[2], hint(msg[len(m[0]):]))
		}
		return nil, nil, fmt.Errorf("%s: %s", name, hint(msg))
	}
	if name != "" {
		s.dir = filepath.Dir(name)
	}
	return &s, file, nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// hint adds the list of accepted fields to goccy's "unknown field" errors.
func hint(msg string) string {
	if unknownField.MatchString(msg) {
		return msg + " (see docs/scenarios.md for the accepted fields)"
	}
	return msg
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
	return yaml.MarshalWithOptions(s, yaml.OmitEmpty())
}

// Clone returns a deep copy, so that parallel runs can each modify their own.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Bottleneck.Loss = cloneLoss(s.Bottleneck.Loss)
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
	t.TLP = clonePtr(t.TLP, same[bool])
	t.RACK = clonePtr(t.RACK, same[bool])
	t.FRTO = clonePtr(t.FRTO, same[bool])
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
