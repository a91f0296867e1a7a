// Package expr compiles the tune command's --constraint strings, such as
// "vegas.alpha < vegas.beta", "alpha + 2 <= beta" or "beta <= 3*alpha", into
// inequality constraints in the g(x) <= 0 form that moo uses.
//
// Grammar (whitespace is free between tokens):
//
//	constraint := sum cmp sum
//	cmp        := "<" | "<=" | ">" | ">="
//	sum        := product { ("+" | "-") product }
//	product    := unary { ("*" | "/") unary }
//	unary      := ("-" | "+") unary | primary
//	primary    := number | name | "(" sum ")"
//	number     := digits [ "." digits ] [ ("e" | "E") [ "+" | "-" ] digits ]   (also ".5")
//	name       := word { "." word },  word := letter-or-_ { letter | digit | _ }
//
// Names are the problem's variables; parameter paths with dots
// ("vegas.alpha") are single names. Operators follow the usual precedence and
// associate to the left. Equality and chained comparisons are rejected:
// a genetic algorithm cannot hit an equality by chance, and a chain is two
// constraints, to be given separately.
//
// Compilation: lhs <= rhs becomes g = lhs - rhs and lhs >= rhs becomes
// g = rhs - lhs, feasible when g <= 0. Strict comparisons stay exactly strict:
// lhs < rhs is satisfied when the computed lhs - rhs is negative, and
// otherwise g = lhs - rhs + StrictEpsilon * max(1, |lhs|, |rhs|), a violation
// even at equality (so vegas.alpha < vegas.beta rejects alpha = beta, at any
// magnitude) that grows with the difference as constrained domination needs.
// Wherever an expression is undefined (0/0, Inf - Inf), g is +Inf: the
// point is infeasible.
package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// StrictEpsilon is the relative margin added to the violation of a strict
// comparison, so that equality violates it; see the package documentation.
const StrictEpsilon = 1e-9

// maxDepth bounds the nesting of parentheses and unary signs, so that
// hostile input cannot exhaust the stack of the recursive parser or evaluator.
const maxDepth = 64

// Op is a comparison operator.
type Op int

// The comparison operators.
const (
	Less Op = iota
	LessEq
	Greater
	GreaterEq
)

// String returns the operator as written.
func (op Op) String() string {
	switch op {
	case Less:
		return "<"
	case LessEq:
		return "<="
	case Greater:
		return ">"
	case GreaterEq:
		return ">="
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

// Constraint is a compiled constraint. It is immutable and safe for
// concurrent use.
type Constraint struct {
	src      string
	lhs, rhs *node
	op       Op
	names    []string // the problem's variable names, for String
}

// Source returns the text the constraint was parsed from, trimmed of
// surrounding space.
func (c *Constraint) Source() string { return c.src }

// Op returns the comparison operator.
func (c *Constraint) Op() Op { return c.op }

// G returns g(x): at most zero when the constraint holds at x, otherwise the
// amount by which it is violated (see the package documentation). x holds the
// variables in the order of the names given to Parse.
func (c *Constraint) G(x []float64) float64 {
	l, r := c.lhs.eval(x), c.rhs.eval(x)
	var g float64
	switch c.op {
	case Less, LessEq:
		g = l - r
	default:
		g = r - l
	}
	if (c.op == Less || c.op == Greater) && g >= 0 {
		// Violated strict comparison: equality must count as a violation.
		g += StrictEpsilon * max(1, math.Abs(l), math.Abs(r))
	}
	if math.IsNaN(g) {
		return math.Inf(1)
	}
	return g
}

// Satisfied reports whether the constraint holds at x, G(x) <= 0.
func (c *Constraint) Satisfied(x []float64) bool { return c.G(x) <= 0 }

// String returns the constraint in canonical form, every binary operation
// parenthesised, with numbers printed exactly; parsing it again gives a
// constraint with the same G.
func (c *Constraint) String() string {
	var b strings.Builder
	c.lhs.format(&b, c.names, true)
	b.WriteString(" " + c.op.String() + " ")
	c.rhs.format(&b, c.names, true)
	return b.String()
}

// Variables returns the names of the variables the constraint refers to, in
// order of first appearance.
func (c *Constraint) Variables() []string {
	var out []string
	seen := make(map[int]bool)
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if n.kind == kVar && !seen[n.idx] {
			seen[n.idx] = true
			out = append(out, c.names[n.idx])
		}
		walk(n.l)
		walk(n.r)
	}
	walk(c.lhs)
	walk(c.rhs)
	return out
}

type nodeKind uint8

const (
	kNum nodeKind = iota
	kVar
	kNeg
	kAdd
	kSub
	kMul
	kDiv
)

type node struct {
	kind nodeKind
	val  float64 // kNum
	idx  int     // kVar
	l, r *node   // operands (kNeg uses l)
}

func (n *node) eval(x []float64) float64 {
	switch n.kind {
	case kNum:
		return n.val
	case kVar:
		return x[n.idx]
	case kNeg:
		return -n.l.eval(x)
	case kAdd:
		return n.l.eval(x) + n.r.eval(x)
	case kSub:
		return n.l.eval(x) - n.r.eval(x)
	case kMul:
		return n.l.eval(x) * n.r.eval(x)
	}
	return n.l.eval(x) / n.r.eval(x)
}

func (n *node) format(b *strings.Builder, names []string, top bool) {
	switch n.kind {
	case kNum:
		b.WriteString(strconv.FormatFloat(n.val, 'g', -1, 64))
		return
	case kVar:
		b.WriteString(names[n.idx])
		return
	case kNeg:
		b.WriteString("-")
		n.l.format(b, names, false)
		return
	}
	if !top {
		b.WriteByte('(')
	}
	n.l.format(b, names, false)
	b.WriteString(" " + [...]string{kAdd: "+", kSub: "-", kMul: "*", kDiv: "/"}[n.kind] + " ")
	n.r.format(b, names, false)
	if !top {
		b.WriteByte(')')
	}
}

// Error is a parse error, pointing at the offending position.
type Error struct {
	// Src is the constraint as given.
	Src string
	// Pos is the byte offset of the problem in Src (len(Src) for "at the
	// end").
	Pos int
	// Msg says what is wrong and what is accepted.
	Msg string
}

// Error formats the message with the constraint and, when it fits on one
// line, a caret under the offending position.
func (e *Error) Error() string {
	col := utf8.RuneCountInString(e.Src[:e.Pos]) + 1
	msg := fmt.Sprintf("constraint %q: column %d: %s", e.Src, col, e.Msg)
	if strings.ContainsFunc(e.Src, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return msg
	}
	return msg + "\n    " + e.Src + "\n    " + strings.Repeat(" ", col-1) + "^"
}

// Parse compiles src, whose variables must be among names (the problem's
// variables, in the order G's argument will hold them).
func Parse(src string, names []string) (*Constraint, error) {
	p := &parser{src: src, names: names}
	p.next()
	if p.tok.kind == tEOF {
		return nil, p.errAt(p.tok.pos, "empty constraint; want a comparison such as %s", example(names))
	}
	lhs, err := p.sum(0)
	if err != nil {
		return nil, err
	}
	op, ok := p.tok.cmp()
	if !ok {
		return nil, p.unexpected("a comparison (<, <=, >, >=)")
	}
	p.next()
	rhs, err := p.sum(0)
	if err != nil {
		return nil, err
	}
	if _, ok := p.tok.cmp(); ok {
		return nil, p.errAt(p.tok.pos, "only one comparison per constraint; give a chain such as a < b < c as two constraints")
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("an operator (+ - * /) or the end")
	}
	return &Constraint{src: strings.TrimSpace(src), lhs: lhs, rhs: rhs, op: op, names: names}, nil
}

func example(names []string) string {
	if len(names) >= 2 {
		return names[0] + " < " + names[1]
	}
	return "x < 3"
}

// IsName reports whether s is a valid variable name in constraints: words
// of letters, digits and underscores, not starting with a digit, joined by
// single dots ("vegas.alpha", "bbr.probe_rtt_ms").
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for _, w := range strings.Split(s, ".") {
		if w == "" || isDigit(w[0]) {
			return false
		}
		for i := 0; i < len(w); i++ {
			if !isWordByte(w[i]) {
				return false
			}
		}
	}
	return true
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isWordByte(c byte) bool { return c == '_' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }

type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tName
	tPlus
	tMinus
	tStar
	tSlash
	tLParen
	tRParen
	tLT
	tLE
	tGT
	tGE
	tBad // an unexpected character or an unsupported operator
)

type token struct {
	kind tokKind
	pos  int
	text string
}

func (t token) cmp() (Op, bool) {
	switch t.kind {
	case tLT:
		return Less, true
	case tLE:
		return LessEq, true
	case tGT:
		return Greater, true
	case tGE:
		return GreaterEq, true
	}
	return 0, false
}

// describe names a token for "found ..." in error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the constraint"
	case tNum:
		return "number " + t.text
	case tName:
		return "name " + t.text
	}
	return fmt.Sprintf("%q", t.text)
}

type parser struct {
	src   string
	names []string
	off   int
	tok   token
	prev  token
}

func (p *parser) errAt(pos int, format string, args ...any) error {
	return &Error{Src: p.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// unexpected reports the current token where want was expected, with hints
// for the usual mistakes.
func (p *parser) unexpected(want string) error {
	t := p.tok
	switch {
	case t.kind == tBad && (t.text == "=" || t.text == "==" || t.text == "!="):
		return p.errAt(t.pos, "%s is not supported: constraints are inequalities; use <, <=, > or >=", t.text)
	case t.kind == tBad:
		return p.errAt(t.pos, "unexpected character %q; accepted: names, numbers, + - * / ( ) and < <= > >=", t.text)
	case (t.kind == tName || t.kind == tLParen) && p.prev.kind == tNum && p.prev.pos+len(p.prev.text) == t.pos:
		return p.errAt(t.pos, "missing operator between %s and %s (write %s*%s)", p.prev.text, t.text, p.prev.text, t.text)
	}
	return p.errAt(t.pos, "expected %s, found %s", want, t.describe())
}

// next advances to the next token.
func (p *parser) next() {
	p.prev = p.tok
	s := p.src
	for p.off < len(s) && (s[p.off] == ' ' || s[p.off] == '\t') {
		p.off++
	}
	start := p.off
	if start == len(s) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := s[start]
	kind := tBad
	end := start + 1
	switch {
	case isDigit(c) || (c == '.' && start+1 < len(s) && isDigit(s[start+1])):
		kind, end = tNum, scanNumber(s, start)
	case isWordByte(c):
		kind = tName
		for end < len(s) && (isWordByte(s[end]) || s[end] == '.') {
			end++
		}
	case c == '+':
		kind = tPlus
	case c == '-':
		kind = tMinus
	case c == '*':
		kind = tStar
	case c == '/':
		kind = tSlash
	case c == '(':
		kind = tLParen
	case c == ')':
		kind = tRParen
	case c == '<' || c == '>':
		kind = tLT
		if c == '>' {
			kind = tGT
		}
		if end < len(s) && s[end] == '=' {
			kind++ // tLE or tGE
			end++
		}
	case c == '=' || c == '!':
		if end < len(s) && s[end] == '=' {
			end++
		}
	default:
		_, size := utf8.DecodeRuneInString(s[start:])
		end = start + size
	}
	p.off = end
	p.tok = token{kind: kind, pos: start, text: s[start:end]}
}

// scanNumber returns the end of the number starting at i.
func scanNumber(s string, i int) int {
	digits := func() {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	digits()
	if i < len(s) && s[i] == '.' {
		i++
		digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			i = j
			digits()
		}
	}
	return i
}

func (p *parser) sum(depth int) (*node, error) {
	l, err := p.product(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tPlus || p.tok.kind == tMinus {
		kind := kAdd
		if p.tok.kind == tMinus {
			kind = kSub
		}
		p.next()
		r, err := p.product(depth)
		if err != nil {
			return nil, err
		}
		l = &node{kind: kind, l: l, r: r}
	}
	return l, nil
}

func (p *parser) product(depth int) (*node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tStar || p.tok.kind == tSlash {
		kind := kMul
		if p.tok.kind == tSlash {
			kind = kDiv
		}
		p.next()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &node{kind: kind, l: l, r: r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errAt(p.tok.pos, "expression nested more than %d deep", maxDepth)
	}
	switch p.tok.kind {
	case tMinus:
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &node{kind: kNeg, l: x}, nil
	case tPlus:
		p.next()
		return p.unary(depth + 1)
	}
	return p.primary(depth)
}

func (p *parser) primary(depth int) (*node, error) {
	t := p.tok
	switch t.kind {
	case tNum:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, p.errAt(t.pos, "number %s is out of range", t.text)
		}
		p.next()
		return &node{kind: kNum, val: v}, nil
	case tName:
		if !IsName(t.text) {
			return nil, p.errAt(t.pos, "malformed name %q: want words of letters, digits and _ joined by single dots, such as %s", t.text, example(p.names))
		}
		for i, name := range p.names {
			if name == t.text {
				p.next()
				return &node{kind: kVar, idx: i}, nil
			}
		}
		if len(p.names) == 0 {
			return nil, p.errAt(t.pos, "unknown variable %q: no variables are being tuned", t.text)
		}
		return nil, p.errAt(t.pos, "unknown variable %q; known variables: %s", t.text, strings.Join(p.names, ", "))
	case tLParen:
		p.next()
		x, err := p.sum(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.unexpected("')' to close the '(' at column " + strconv.Itoa(utf8.RuneCountInString(p.src[:t.pos])+1))
		}
		p.next()
		return x, nil
	}
	return nil, p.unexpected("a number, a variable name or '('")
}
