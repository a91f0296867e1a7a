package ipecn

import (
	"encoding/binary"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported reports whether this platform's sockets can carry ECN.
const Supported = true

// Receive asks the kernel for each received datagram's ECN field: the
// IP_TOS control message (IPv4, and IPv4-mapped datagrams on an IPv6
// socket), or IPV6_TCLASS. It reports whether either option took.
func Receive(raw syscall.RawConn) bool {
	ok := false
	_ = raw.Control(func(fd uintptr) {
		if unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) == nil {
			ok = true
		}
		if unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1) == nil {
			ok = true
		}
	})
	return ok
}

// Setter returns a function for raw.Control that sets the ECN field of
// the datagrams sent after it to codepoint (IP_TOS, or IPV6_TCLASS on an
// IPv6 socket; Linux lets a datagram socket set the ECN bits, unlike a
// stream one) and records in *ok whether it could. Make one per codepoint
// and reuse it, so that switching codepoints does not allocate.
func Setter(codepoint Codepoint, ok *bool) func(fd uintptr) {
	return func(fd uintptr) {
		v4 := unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, int(codepoint)) == nil
		v6 := unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_TCLASS, int(codepoint)) == nil
		*ok = v4 || v6
	}
}

// OOBLen is the control-message buffer a read needs: an IP_TOS and an
// IPV6_TCLASS message.
var OOBLen = 2 * unix.CmsgSpace(4)

// FromOOB returns the ECN field (the low two bits of the TOS or traffic
// class) from a received datagram's control messages; NotECT if there is
// none. It does not allocate.
func FromOOB(oob []byte) Codepoint {
	for len(oob) > 0 {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return NotECT
		}
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TOS && len(data) >= 1:
			return Codepoint(data[0] & 3)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			return Codepoint(binary.NativeEndian.Uint32(data) & 3)
		}
		oob = rest
	}
	return NotECT
}
