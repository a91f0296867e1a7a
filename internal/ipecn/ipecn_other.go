//go:build !linux

package ipecn

import "syscall"

// Supported reports whether this platform's sockets can carry ECN: the
// control messages are implemented on Linux only.
const Supported = false

// Receive reports false: received datagrams carry no ECN field here.
func Receive(syscall.RawConn) bool { return false }

// Setter returns a setter that always fails.
func Setter(_ Codepoint, ok *bool) func(fd uintptr) {
	return func(uintptr) { *ok = false }
}

// OOBLen is 0: no control messages are read.
var OOBLen = 0

// FromOOB returns NotECT.
func FromOOB([]byte) Codepoint { return NotECT }
