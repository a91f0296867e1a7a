package expr

import (
	"errors"
	"math"
	"strings"
	"testing"
)

var names = []string{"vegas.alpha", "vegas.beta", "a", "b_2"}

func TestG(t *testing.T) {
	// x = (alpha, beta, a, b_2).
	x := []float64{3, 5, -2, 0.5}
	eps := func(m float64) float64 { return StrictEpsilon * m }
	tests := []struct {
		src  string
		want float64
	}{
		{"vegas.alpha < vegas.beta", 3 - 5},
		{"vegas.alpha < vegas.alpha", eps(3)}, // equality violates a strict comparison
		{"vegas.alpha<=vegas.beta", -2},
		{"vegas.alpha > vegas.beta", 2 + eps(5)},
		{"vegas.beta > vegas.alpha", -2},
		{"vegas.alpha >= vegas.beta", 2},
		{"vegas.alpha+2<=vegas.beta", 0},
		{"vegas.beta <= 3*vegas.alpha", 5 - 9},
		{"a * -2 >= 4", 0},                   // 4 - (-2 * -2): unary minus after an operator
		{"1 + 2 * 3 <= 7", 0},                // precedence: 7 - 7
		{"(1 + 2) * 3 <= 7", 2},              // parentheses: 9 - 7
		{"8 / 4 / 2 <= 0", 1},                // left associative: (8/4)/2
		{"10 - 4 - 3 <= 0", 3},               // left associative: (10-4)-3
		{"-a <= +2", 0},                      // unary signs
		{"--a <= 0", -2},                     // double negation
		{"b_2 <= .5", 0},                     // leading-dot number
		{"vegas.alpha <= 1.5e1", -12},        // exponent
		{"vegas.alpha <= 2E-1*10", 1},        // exponent, upper case
		{" \ta\t<\t0 ", -2},                  // whitespace, tabs
		{"a > 0", 2 + eps(2)},                // violated strict: difference plus margin
		{"vegas.alpha/0 < 1", math.Inf(1)},   // +Inf < 1 violated
		{"0/0 <= 1", math.Inf(1)},            // undefined: infeasible
		{"-vegas.alpha/0 < 1", math.Inf(-1)}, // -Inf < 1 holds
	}
	for _, tc := range tests {
		c, err := Parse(tc.src, names)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		got := c.G(x)
		if got != tc.want && math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%q: G = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestStrictIntegers checks the property the strict margin exists for:
// alpha < beta is violated at alpha = beta and satisfied at beta - 1, also
// for large values, while alpha <= beta accepts equality.
func TestStrictIntegers(t *testing.T) {
	lt, err := Parse("vegas.alpha < vegas.beta", names)
	if err != nil {
		t.Fatal(err)
	}
	le, err := Parse("vegas.alpha <= vegas.beta", names)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0, 1, 20, 1e6, 1e12} {
		eq := []float64{v, v, 0, 0}
		below := []float64{v - 1, v, 0, 0}
		if lt.Satisfied(eq) {
			t.Errorf("alpha < beta satisfied at alpha = beta = %v, want violated", v)
		}
		if !lt.Satisfied(below) {
			t.Errorf("alpha < beta violated at alpha = %v, beta = %v, want satisfied (G = %v)", v-1, v, lt.G(below))
		}
		if !le.Satisfied(eq) {
			t.Errorf("alpha <= beta violated at alpha = beta = %v, want satisfied", v)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		src     string
		pos     int
		contain string
	}{
		{"", 0, "empty constraint"},
		{"   ", 3, "empty constraint"},
		{"vegas.gamma < vegas.beta", 0, "unknown variable \"vegas.gamma\"; known variables: vegas.alpha, vegas.beta, a, b_2"},
		{"vegas.alpha < beta", 14, "unknown variable \"beta\""},
		{"vegas.alpha", 11, "expected a comparison (<, <=, >, >=), found the end"},
		{"vegas.alpha == vegas.beta", 12, "== is not supported"},
		{"vegas.alpha = vegas.beta", 12, "= is not supported"},
		{"vegas.alpha != vegas.beta", 12, "!= is not supported"},
		{"a < b_2 < 3", 8, "only one comparison"},
		{"a + < 3", 4, "expected a number, a variable name or '(', found \"<\""},
		{"(a + 1 < 3", 7, "expected ')' to close the '(' at column 1"},
		{"a + 1) < 3", 5, "expected a comparison"},
		{"2a < 3", 1, "missing operator between 2 and a (write 2*a)"},
		{"a # 3", 2, "unexpected character \"#\""},
		{"a < 1e999", 4, "out of range"},
		{"vegas. < 1", 0, "malformed name \"vegas.\""},
		{"vegas..alpha < 1", 0, "malformed name"},
		{"a < 3 4", 6, "expected an operator (+ - * /) or the end, found number 4"},
		{"é < 1", 0, "unexpected character \"é\""},
		{strings.Repeat("(", 70) + "a" + strings.Repeat(")", 70) + " < 1", 65, "nested more than 64"},
		{strings.Repeat("-", 70) + "a < 1", 65, "nested more than 64"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.src, names)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): got %v, want an *Error", tc.src, err)
			continue
		}
		if pe.Pos != tc.pos || !strings.Contains(pe.Msg, tc.contain) {
			t.Errorf("Parse(%q): got error at %d %q, want at %d containing %q", tc.src, pe.Pos, pe.Msg, tc.pos, tc.contain)
		}
	}
}

func TestErrorMessagePointsAtPosition(t *testing.T) {
	_, err := Parse("vegas.alpha < vegas.gamma", names)
	want := "constraint \"vegas.alpha < vegas.gamma\": column 15: unknown variable \"vegas.gamma\"; known variables: vegas.alpha, vegas.beta, a, b_2\n" +
		"    vegas.alpha < vegas.gamma\n" +
		"                  ^"
	if err == nil || err.Error() != want {
		t.Errorf("got error\n%v\nwant\n%s", err, want)
	}
	_, err = Parse("a < b", nil)
	if err == nil || !strings.Contains(err.Error(), "no variables are being tuned") {
		t.Errorf("with no variables: got %v, want a message saying none are tuned", err)
	}
}

func TestStringRoundTrip(t *testing.T) {
	tests := []struct{ src, want string }{
		{"vegas.alpha<vegas.beta", "vegas.alpha < vegas.beta"},
		{"a+2*b_2-1>=-(a)", "(a + (2 * b_2)) - 1 >= -a"},
		{"(a+2)*b_2 <= 0.1", "(a + 2) * b_2 <= 0.1"},
		{"a <= 1e6", "a <= 1e+06"},
		{"--a > +1", "--a > 1"},
	}
	for _, tc := range tests {
		c, err := Parse(tc.src, names)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		if got := c.String(); got != tc.want {
			t.Errorf("String of %q: got %q, want %q", tc.src, got, tc.want)
		}
		if _, err := Parse(c.String(), names); err != nil {
			t.Errorf("reparsing %q: %v", c.String(), err)
		}
	}
}

func TestVariablesAndSource(t *testing.T) {
	c, err := Parse("  b_2 + vegas.beta*b_2 < 2*a  ", names)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.Variables(), ",")
	if got != "b_2,vegas.beta,a" {
		t.Errorf("Variables: got %s, want b_2,vegas.beta,a", got)
	}
	if c.Source() != "b_2 + vegas.beta*b_2 < 2*a" || c.Op() != Less {
		t.Errorf("Source %q Op %v", c.Source(), c.Op())
	}
}

func TestIsName(t *testing.T) {
	good := []string{"a", "vegas.alpha", "_x", "bbr.probe_rtt_ms", "x2.y3", "A.B.C"}
	bad := []string{"", "2x", "a.", ".a", "a..b", "a-b", "a b", "vegas.2x", "é"}
	for _, s := range good {
		if !IsName(s) {
			t.Errorf("IsName(%q) = false, want true", s)
		}
	}
	for _, s := range bad {
		if IsName(s) {
			t.Errorf("IsName(%q) = true, want false", s)
		}
	}
}

// FuzzParse checks that Parse never panics, that errors point inside the
// input, and that an accepted constraint's canonical form parses to a
// constraint with bit-identical G at a few points.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"vegas.alpha < vegas.beta", "a+2<=b_2", "vegas.beta<=3*vegas.alpha", "-(a)/(b_2-1) > 1e-3",
		"a == b_2", "(((a)))<1", "2a<1", ".5*a>=.25", "a < b_2 < 1", "", "é<1", "1e400<a",
	} {
		f.Add(s)
	}
	points := [][]float64{{0, 0, 0, 0}, {1, 2, 3, 4}, {-1.5, 1e9, 0.25, -7}, {20, 30, 1, 1}}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Parse(src, names)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): error of type %T, want *Error", src, err)
			}
			if pe.Pos < 0 || pe.Pos > len(src) {
				t.Fatalf("Parse(%q): error position %d outside [0, %d]", src, pe.Pos, len(src))
			}
			_ = err.Error()
			return
		}
		again, err := Parse(c.String(), names)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c.String(), src, err)
		}
		for _, x := range points {
			g1, g2 := c.G(x), again.G(x)
			if math.IsNaN(g1) || math.Float64bits(g1) != math.Float64bits(g2) {
				t.Fatalf("%q and its canonical form %q: G(%v) = %v and %v", src, c.String(), x, g1, g2)
			}
		}
	})
}
