package yamlguard

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// billionLaughs is the audit's 488-byte alias bomb (nine levels of nine
// aliases).
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [\"lol\"]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name, in, want string
		line, col      int
	}{
		{"billion laughs", billionLaughs(), "aliases", 2, 10},
		{"alias value", "a: &x 1\nb: *x\n", "aliases", 2, 4},
		{"alias in known field", "bottleneck:\n  schedule:\n    - at: 1s\n      stop_background: [&b x, *b]\n", "aliases", 4, 31},
		{"alias entry", "x: &l [1]\ny:\n  - *l\n", "aliases", 3, 5},
		{"merge key", "a: &m {x: 1}\nb:\n  <<: *m\n", "aliases", 3, 7},
		{"flow bomb", "flows: " + strings.Repeat("[", 30000) + strings.Repeat("]", 30000), "nesting", 1, 7 + MaxDepth},
		{"map bomb", "a: " + strings.Repeat("{a: ", 50000) + "1" + strings.Repeat("}", 50000), "nesting", 1, 4 * MaxDepth},
		{"compact sequence bomb", "a:\n" + strings.Repeat("- ", 50000) + "1\n", "nesting", 2, 1 + 2*MaxDepth},
	}
	for _, tt := range tests {
		err := Check([]byte(tt.in))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tt.want) {
			t.Errorf("%s: got %v, want an error about %s", tt.name, err, tt.want)
			continue
		}
		if e.Line != tt.line || e.Column != tt.col {
			t.Errorf("%s: at %d:%d, want %d:%d", tt.name, e.Line, e.Column, tt.line, tt.col)
		}
	}
}

func TestIndentationBomb(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	if err := Check([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Errorf("100 nested block mappings: got %v", err)
	}
}

func TestAccepted(t *testing.T) {
	for _, in := range []string{
		"name: \"*x\"\n",
		"name: '*x [ { '\n",
		"name: 'it''s *x'\n",
		"name: \"a \\\" *x [\"\n",
		"name: a *b [c\n",
		"path: flows.*.extra_delay\n",
		"# *x [[[[\nname: x # *y {{{\n",
		"text: |\n  *x [[[[ {{{\n  \"unterminated\nnext: 1\n",
		"- text: >-\n    *x\n  other: 2\n",
		"a: &anchor 1\n",
		"flows: [{name: \"a,*b\", cc: cubic}, {name: it's}]\n",
		"a: " + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "\n",
		"\xEF\xBB\xBFname: x\n",
		"---\nname: x\n...\n",
		"k: [a,\n  b]\n",
		"2*3: x\n",
	} {
		if err := Check([]byte(in)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestBlockScalarEndsAtSibling: an alias on the line after a block scalar,
// at the key's indentation, is outside the scalar and must be seen.
func TestBlockScalarEndsAtSibling(t *testing.T) {
	in := "- key: |\n    text\n  other: *a\n"
	if err := Check([]byte(in)); err == nil {
		t.Errorf("alias after a block scalar was missed")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(billionLaughs())
	f.Add("flows: " + strings.Repeat("[", 100) + strings.Repeat("]", 100))
	f.Add("a:\n" + strings.Repeat("- ", 100) + "1\n")
	f.Add("text: |\n  *x\nb: 'q''*'\n")
	f.Add("a: {b: [c, \"*d\"], e: 'f'}\n")
	f.Fuzz(func(t *testing.T, s string) {
		err := Check([]byte(s))
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Line < 1 || e.Column < 1 || e.Line > strings.Count(s, "\n")+1) {
			t.Fatalf("bad error %v", err)
		}
		if e != nil && strings.Contains(e.Msg, "aliases") && !strings.Contains(s, "*") {
			t.Fatalf("alias reported without '*': %v", err)
		}
		// Any text inside a double-quoted scalar is a string: never an
		// alias or a bracket.
		q := "name: " + strconv.Quote(s) + "\n"
		if err := Check([]byte(q)); err != nil {
			t.Fatalf("quoted %q: %v", q, err)
		}
	})
}
