// Package yamlguard checks YAML text for the two shapes that make a YAML
// library use memory out of all proportion to the input, before the
// library sees it: aliases (a 500-byte "billion laughs" document of nested
// anchors expands to gigabytes while decoding) and deep nesting (60 KB of
// "[" costs the parser gigabytes of stack and nodes).
//
// goccy/go-yaml has no limit of its own on either, and its lexer allocates
// a token of some hundred bytes per input byte of a nesting bomb, so the
// check is a small lexer of its own: one pass over the bytes, no
// allocation per token, aware of quoted strings, comments, plain scalars
// and block scalars, so that a '*' or '[' inside a string is not mistaken
// for an alias or a bracket.
package yamlguard

import "fmt"

// MaxDepth bounds the nesting of mappings and sequences. Scenario files
// nest about six levels; 64 leaves room for any hand-written file.
const MaxDepth = 64

// Error is a refused construct, with its 1-based line and column.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// Check returns an *Error for the first alias (*name) or for nesting
// deeper than MaxDepth, and nil otherwise. It does not validate the YAML
// otherwise: text it accepts may still be refused by the parser.
func Check(data []byte) error {
	c := checker{data: data, line: 1}
	return c.run()
}

type checker struct {
	data []byte
	i    int
	line int
	// lineStart is the offset of the current line, for columns.
	lineStart int
	// flow is the depth of [ and { brackets.
	flow int
	// block holds the indentation columns of the open block collections.
	block []int
}

func (c *checker) errf(at int, format string, args ...any) error {
	return &Error{Line: c.line, Column: at - c.lineStart + 1, Msg: fmt.Sprintf(format, args...)}
}

func (c *checker) depthErr(at int) error {
	return c.errf(at, "nesting deeper than %d levels (a scenario needs a handful)", MaxDepth)
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }

// endOrBlank reports whether offset i is the end of the input, a line
// break or a blank: what must follow an indicator such as "- " or ": ".
func (c *checker) endOrBlank(i int) bool {
	return i >= len(c.data) || isBlank(c.data[i]) || c.data[i] == '\n' || c.data[i] == '\r'
}

func (c *checker) newline() {
	c.i++
	c.line++
	c.lineStart = c.i
}

// pushBlock records a block collection starting at column col.
func (c *checker) pushBlock(col, at int) error {
	for len(c.block) > 0 && c.block[len(c.block)-1] > col {
		c.block = c.block[:len(c.block)-1]
	}
	if len(c.block) == 0 || c.block[len(c.block)-1] < col {
		if len(c.block)+c.flow >= MaxDepth {
			return c.depthErr(at)
		}
		c.block = append(c.block, col)
	}
	return nil
}

func (c *checker) run() error {
	d := c.data
	// A byte-order mark is not content.
	if len(d) >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF {
		c.i, c.lineStart = 3, 3
	}
	for c.i < len(d) {
		// Start of a line: measure the indentation.
		start := c.i
		for c.i < len(d) && d[c.i] == ' ' {
			c.i++
		}
		if c.i >= len(d) {
			break
		}
		if d[c.i] == '\n' || d[c.i] == '\r' || d[c.i] == '#' {
			c.skipLine()
			continue
		}
		if c.flow == 0 {
			if c.i-start == 0 {
				if done, err := c.directiveOrMarker(); err != nil || done {
					if err != nil {
						return err
					}
					continue
				}
			}
			// Leaving indentation closes deeper block collections.
			if err := c.pushBlock(c.i-c.lineStart, c.i); err != nil {
				return err
			}
		}
		if err := c.scanLine(); err != nil {
			return err
		}
	}
	return nil
}

// directiveOrMarker skips "---", "..." and "%" lines at column 0, and
// scans what follows a marker on its line ("--- [a, b]").
func (c *checker) directiveOrMarker() (bool, error) {
	d := c.data[c.i:]
	if d[0] == '%' {
		c.skipLine()
		return true, nil
	}
	if len(d) >= 3 && (string(d[:3]) == "---" || string(d[:3]) == "...") && c.endOrBlank(c.i+3) {
		c.block = c.block[:0]
		c.i += 3
		return true, c.scanLine()
	}
	return false, nil
}

func (c *checker) skipLine() {
	for c.i < len(c.data) && c.data[c.i] != '\n' {
		c.i++
	}
	if c.i < len(c.data) {
		c.newline()
	}
}

// scanLine scans from c.i to the end of the line (or further, for quoted
// strings, flow collections and block scalars spanning lines).
func (c *checker) scanLine() error {
	d := c.data
	nodeStart := true // a node (scalar, collection, alias) may start here
	// nodeCol is the column of the last node started on this line: a block
	// scalar's lines are those indented more than it.
	nodeCol := c.i - c.lineStart
	for c.i < len(d) {
		b := d[c.i]
		switch {
		case b == '\n':
			c.newline()
			if c.flow == 0 {
				return nil
			}
			continue
		case b == '\r' || isBlank(b):
			c.i++
			continue
		case b == '#' && (c.i == c.lineStart || isBlank(d[c.i-1])):
			for c.i < len(d) && d[c.i] != '\n' {
				c.i++
			}
			continue
		}
		if nodeStart {
			switch {
			case b == '*':
				return c.errf(c.i, "YAML aliases (*name) are not accepted: write the value out (an alias can expand a small file into gigabytes)")
			case b == '&' || b == '!':
				// An anchor or tag precedes the node: skip its name.
				c.i++
				for c.i < len(d) && !c.endOrBlank(c.i) && (c.flow == 0 || !isFlowIndicator(d[c.i])) {
					c.i++
				}
				continue
			case b == '"' || b == '\'':
				nodeCol = c.i - c.lineStart
				c.quoted(b)
				nodeStart = false
				continue
			case b == '[' || b == '{':
				if len(c.block)+c.flow >= MaxDepth {
					return c.depthErr(c.i)
				}
				c.flow++
				c.i++
				continue
			case (b == '-' || b == '?') && c.flow == 0 && c.endOrBlank(c.i+1):
				// A block sequence entry or complex key: "- - - x" nests.
				if err := c.pushBlock(c.i-c.lineStart, c.i); err != nil {
					return err
				}
				nodeCol = c.i - c.lineStart
				c.i++
				continue
			case (b == '|' || b == '>') && c.flow == 0:
				c.blockScalar(nodeCol)
				return nil
			}
		}
		switch {
		case c.flow > 0 && (b == '[' || b == '{'):
			// Not valid YAML after a scalar, but count it: the parser's
			// recovery must not see deeper nesting than was checked.
			if len(c.block)+c.flow >= MaxDepth {
				return c.depthErr(c.i)
			}
			c.flow++
			c.i++
			nodeStart = true
		case c.flow > 0 && (b == ']' || b == '}'):
			c.flow--
			c.i++
			nodeStart = false
			if c.flow == 0 {
				// The rest of the line after a closed collection: at
				// most a comment.
				continue
			}
		case c.flow > 0 && b == ',':
			c.i++
			nodeStart = true
		case b == ':' && c.endOrBlank(c.i+1) || c.flow > 0 && b == ':' && c.i+1 < len(d) && isFlowIndicator(d[c.i+1]):
			c.i++
			nodeStart = true
		case b == '?' && c.flow > 0 && c.endOrBlank(c.i+1):
			c.i++
			nodeStart = true
		default:
			if nodeStart {
				nodeCol = c.i - c.lineStart
			}
			from := c.i
			c.plain()
			if c.i == from {
				c.i++ // a stray indicator: step over it
			}
			nodeStart = false
		}
	}
	return nil
}

func isFlowIndicator(b byte) bool { return b == ',' || b == '[' || b == ']' || b == '{' || b == '}' }

// plain skips a plain scalar up to what ends it: ": ", " #", a line break,
// and inside brackets also , [ ] { }.
func (c *checker) plain() {
	d := c.data
	for c.i < len(d) {
		b := d[c.i]
		if b == '\n' || b == '\r' {
			return
		}
		if b == ':' && (c.endOrBlank(c.i+1) || c.flow > 0 && c.i+1 < len(d) && isFlowIndicator(d[c.i+1])) {
			return
		}
		if b == '#' && c.i > 0 && isBlank(d[c.i-1]) {
			return
		}
		if c.flow > 0 && isFlowIndicator(b) {
			return
		}
		c.i++
	}
}

// quoted skips a quoted scalar, which may span lines. An unterminated
// one runs to the end of the input; the parser reports it.
func (c *checker) quoted(q byte) {
	d := c.data
	c.i++
	for c.i < len(d) {
		b := d[c.i]
		switch {
		case b == '\n':
			c.newline()
			continue
		case q == '"' && b == '\\':
			c.i += 2
			continue
		case b == q:
			if q == '\'' && c.i+1 < len(d) && d[c.i+1] == '\'' {
				c.i += 2 // '' is an escaped quote
				continue
			}
			c.i++
			return
		}
		c.i++
	}
}

// blockScalar skips a literal or folded scalar: the lines indented more
// than the line that introduced it (or blank).
func (c *checker) blockScalar(parentIndent int) {
	c.skipLine()
	d := c.data
	for c.i < len(d) {
		j := c.i
		for j < len(d) && d[j] == ' ' {
			j++
		}
		if j < len(d) && d[j] != '\n' && d[j] != '\r' && j-c.i <= parentIndent {
			return
		}
		c.skipLine()
		if j >= len(d) {
			c.i = len(d)
		}
	}
}
