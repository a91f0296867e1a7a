// Package ipecn reads and sets the ECN field of the IP header (RFC 3168
// §5) on UDP sockets, for cclab's transport over UDP and the test relay
// that marks its datagrams: the received field comes in a control message
// (IP_RECVTOS, IPV6_RECVTCLASS), the sent one is the socket's TOS or
// traffic class. Linux only; elsewhere nothing carries ECN.
package ipecn

// Codepoint is the IP header's two ECN bits.
type Codepoint uint8

// ECN codepoints.
const (
	NotECT Codepoint = 0 // not ECN-capable
	ECT1   Codepoint = 1 // ECN-capable, ECT(1)
	ECT0   Codepoint = 2 // ECN-capable, ECT(0), what TCP sends
	CE     Codepoint = 3 // congestion experienced, set by a queue
)

// Capable reports whether a packet with this codepoint is ECN-capable
// (ECT(0), ECT(1) or already CE), so that a queue may mark it.
func (c Codepoint) Capable() bool { return c != NotECT }
