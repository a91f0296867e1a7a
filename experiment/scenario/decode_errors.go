package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// pathAt returns the scenario path ("flows[0].count") of the mapping entry
// whose key or value starts at line:col, or "".
func pathAt(file *ast.File, line, col int) string {
	var found string
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		ast.Walk(visitor(func(n ast.Node) bool {
			mv, ok := n.(*ast.MappingValueNode)
			if !ok || found != "" {
				return found == ""
			}
			for _, part := range []ast.Node{mv.Key, mv.Value} {
				if part == nil {
					continue
				}
				if tk := part.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line == line && tk.Position.Column == col {
					found = strings.TrimPrefix(mv.Value.GetPath(), "$.")
					return false
				}
			}
			return true
		}), doc.Body)
	}
	return found
}

type visitor func(ast.Node) bool

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if n == nil || !v(n) {
		return nil
	}
	return v
}

// nearestField returns the known field closest in spelling to field in
// the mapping holding path, if one is close enough to be a typo.
func nearestField(path, field string) string {
	t := typeAt(reflect.TypeOf(Scenario{}), parentPath(path))
	if t == nil {
		return ""
	}
	best, bestD := "", len(field)/2+2
	for i := 0; i < t.NumField(); i++ {
		n := yamlName(t.Field(i))
		if n == "" {
			continue
		}
		if d := editDistance(field, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// typeAt follows a path ("flows[0].transport") through the scenario's
// types to a struct type, or returns nil.
func typeAt(t reflect.Type, path string) reflect.Type {
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	for _, seg := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if seg == "" {
			continue
		}
		if _, err := strconv.Atoi(seg); err == nil {
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		next := reflect.Type(nil)
		for i := 0; i < t.NumField(); i++ {
			if yamlName(t.Field(i)) == seg {
				next = t.Field(i).Type
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || rawTypes[t] || t == ccType {
		return nil
	}
	return t
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// kindName says in words what a field of type t accepts.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "a mapping of fields"
	}
	return "another kind of value"
}

// quoteValue quotes a value for an error message, cut to its first 60
// bytes: a file that is not YAML at all (cclab run /etc/passwd) decodes
// as one long plain scalar, and the error should name the file and line,
// not repeat the file.
func quoteValue(s string) string {
	const max = 60
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf(" (%d bytes more)", len(s)-cut)
}

type position struct {
	line, col int
	path      string
}

// badCC finds the first cc field whose value does not decode, for the
// errors of CC.UnmarshalYAML, which the library reports without a
// position.
func badCC(file *ast.File) *position {
	var found *position
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		ast.Walk(visitor(func(n ast.Node) bool {
			if found != nil {
				return false
			}
			mv, ok := n.(*ast.MappingValueNode)
			if !ok || mv.Key == nil || mv.Value == nil || mv.Key.String() != "cc" {
				return true
			}
			var c CC
			if err := yaml.NodeToValue(mv.Value, &c); err != nil {
				if tk := mv.Value.GetToken(); tk != nil && tk.Position != nil {
					found = &position{tk.Position.Line, tk.Position.Column, strings.TrimPrefix(mv.Value.GetPath(), "$.")}
				}
				return false
			}
			return true
		}), doc.Body)
	}
	return found
}

// nodeKind names a YAML node type in words.
func nodeKind(t ast.NodeType) string {
	switch t {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping of fields"
	case ast.SequenceType:
		return "a list"
	}
	return "a single value"
}

// zeroCount finds an explicit "count: 0", which decodes like an absent
// count.
func zeroCount(file *ast.File) *position {
	var found *position
	for _, doc := range file.Docs {
		if doc.Body == nil {
			continue
		}
		ast.Walk(visitor(func(n ast.Node) bool {
			if found != nil {
				return false
			}
			mv, ok := n.(*ast.MappingValueNode)
			if !ok || mv.Key == nil || mv.Value == nil || mv.Key.String() != "count" {
				return true
			}
			if tk := mv.Value.GetToken(); tk != nil && tk.Position != nil {
				if v, err := strconv.ParseFloat(strings.TrimSpace(tk.Value), 64); err == nil && v == 0 {
					found = &position{tk.Position.Line, tk.Position.Column, strings.TrimPrefix(mv.Value.GetPath(), "$.")}
				}
			}
			return true
		}), doc.Body)
	}
	return found
}

// fractionalInt finds a number with a fraction ("2.7", "25e-1") given
// for a whole-number field (count, loss_hops, seed...): the
// YAML library truncates it to an integer without a word, where --set
// refuses the same value. It returns the value's position and text.
func fractionalInt(file *ast.File) (*position, string) {
	var found *position
	var value string
	var walk func(n ast.Node, t reflect.Type)
	walk = func(n ast.Node, t reflect.Type) {
		for found == nil && n != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if found != nil || n == nil {
			return
		}
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			// The library reads "2.7" as a float and "25e-1" as a string,
			// and truncates both; 2.0 and 1e3 are whole and stand.
			tk := n.GetToken()
			if _, ok := n.(*ast.FloatNode); !ok {
				if _, ok := n.(*ast.StringNode); !ok {
					break
				}
			}
			if tk == nil || tk.Position == nil {
				break
			}
			if v, err := strconv.ParseFloat(tk.Value, 64); err == nil && v != math.Trunc(v) {
				found = &position{tk.Position.Line, tk.Position.Column, strings.TrimPrefix(n.GetPath(), "$.")}
				value = tk.Value
			}
		case reflect.Slice, reflect.Array:
			if sq, ok := n.(*ast.SequenceNode); ok {
				for _, v := range sq.Values {
					walk(v, t.Elem())
				}
			}
		case reflect.Struct:
			var values []*ast.MappingValueNode
			switch m := n.(type) {
			case *ast.MappingNode:
				values = m.Values
			case *ast.MappingValueNode:
				values = []*ast.MappingValueNode{m}
			}
			for _, mv := range values {
				if mv.Key == nil {
					continue
				}
				for i := range t.NumField() {
					if yamlName(t.Field(i)) == mv.Key.String() {
						walk(mv.Value, t.Field(i).Type)
					}
				}
			}
		}
	}
	for _, doc := range file.Docs {
		if doc != nil && doc.Body != nil {
			walk(doc.Body, reflect.TypeFor[Scenario]())
		}
	}
	return found, value
}
