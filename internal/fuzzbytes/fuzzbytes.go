// Package fuzzbytes reads a fuzzer's input as a stream of choices, for
// fuzz tests that build what they exercise (a scenario, a sequence of
// events) from the bytes rather than decode the bytes themselves: each
// byte is one choice, so the fuzzer's mutations move one decision at a
// time, and past the end every choice is the first option (an input's
// meaning is its prefix's).
package fuzzbytes

import "encoding/binary"

// Choices is a fuzzer's input being read.
type Choices struct{ b []byte }

// New reads b.
func New(b []byte) *Choices { return &Choices{b: b} }

// More reports whether bytes are left.
func (c *Choices) More() bool { return len(c.b) > 0 }

// Byte is the next byte, 0 past the end.
func (c *Choices) Byte() byte {
	if len(c.b) == 0 {
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return v
}

// Pick is a choice among n (n >= 1) options: the next byte modulo n.
func (c *Choices) Pick(n int) int { return int(c.Byte()) % n }

// Of is one of opts, by Pick.
func (c *Choices) Of(opts ...string) string { return opts[c.Pick(len(opts))] }

// Uint64 is the next eight bytes, big-endian (zeros past the end).
func (c *Choices) Uint64() uint64 {
	var w [8]byte
	for i := range w {
		w[i] = c.Byte()
	}
	return binary.BigEndian.Uint64(w[:])
}
