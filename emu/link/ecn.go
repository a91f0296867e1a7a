package link

import (
	"encoding/binary"

	"github.com/cclab/cclab/netsim/packet"
)

// The IPv4 header's ECN field (RFC 3168 §5): the low two bits of the
// second byte (the former TOS byte).
const (
	ecnMask = 0x03
	ecnCE   = 0x03 // Congestion Experienced; 01 and 10 are ECT(1) and ECT(0)
	// tcpCWR is the TCP header's Congestion Window Reduced flag, in the
	// flags byte (offset 13).
	tcpCWR = 0x80
	tcpSYN = 0x02
)

// ecnBits returns the packet.ECNBits of a raw IPv4 header: ECT for ECT(0)
// or ECT(1), ECT and CE for CE, none for Not-ECT or a packet too short or
// not IPv4.
func ecnBits(b []byte) packet.ECNBits {
	if len(b) < 20 || b[0]>>4 != 4 {
		return 0
	}
	return packet.ECNFromField(b[1])
}

// setCE rewrites a raw IPv4 header's ECN field to CE and updates its
// header checksum incrementally (RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'),
// m the 16-bit word holding the field). It reports whether it changed the
// header: not for a header already CE, a Not-ECT one (which a queue never
// marks: RFC 3168 §5 says drop it instead), or one too short, not IPv4
// or with a header length under 20 bytes.
func setCE(b []byte) bool {
	if len(b) < 20 || b[0]>>4 != 4 || b[0]&0x0f < 5 {
		return false
	}
	if f := b[1] & ecnMask; f == 0 || f == ecnCE {
		return false
	}
	m := uint32(binary.BigEndian.Uint16(b[0:]))
	b[1] |= ecnCE
	m2 := uint32(binary.BigEndian.Uint16(b[0:]))
	sum := uint32(^binary.BigEndian.Uint16(b[10:])) + (^m & 0xffff) + m2
	sum = sum&0xffff + sum>>16
	sum = sum&0xffff + sum>>16
	binary.BigEndian.PutUint16(b[10:], ^uint16(sum))
	return true
}
