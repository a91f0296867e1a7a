// Package packet defines the simulated packet and a per-simulation free list,
// so that steady-state simulation allocates no packets: a packet dropped or
// delivered goes back to the pool and is reused by the next send.
package packet

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Kind says what a packet carries.
type Kind uint8

// Packet kinds.
const (
	// Data is a transport data segment.
	Data Kind = iota
	// Ack is a transport acknowledgement.
	Ack
	// Datagram is an unacknowledged datagram (background UDP traffic).
	Datagram
	// Syn opens a transport connection.
	Syn
	// SynAck answers a Syn.
	SynAck
)

// ECNBits are a packet's Explicit Congestion Notification bits (RFC 3168).
type ECNBits uint8

// ECN bits.
const (
	// ECT marks an ECN-capable transport's packet (the IP header's
	// ECT(0) codepoint): a queue may mark it CE instead of dropping it.
	ECT ECNBits = 1 << iota
	// CE is the IP header's Congestion Experienced codepoint, set by a
	// queue on an ECT packet.
	CE
	// ECE is the TCP header's ECN-Echo flag: the receiver saw CE.
	ECE
	// CWR is the TCP header's Congestion Window Reduced flag: the
	// sender has reduced its window in response to ECE.
	CWR
)

// ECNFromField returns the ECN bits of an IP header's ECN field, its two
// low bits (RFC 3168 §5): ECT for ECT(0) or ECT(1), ECT and CE for CE,
// none for Not-ECT.
func ECNFromField(f uint8) ECNBits {
	switch f & 3 {
	case 0:
		return 0
	case 3:
		return ECT | CE
	}
	return ECT
}

// Field returns the IP header's ECN field for the bits: CE (11), ECT(0)
// (10) or Not-ECT (00).
func (b ECNBits) Field() uint8 {
	switch {
	case b&CE != 0:
		return 3
	case b&ECT != 0:
		return 2
	}
	return 0
}

// Mark sets CE on an ECT packet and reports whether it did; a queue
// that marks drops the packet when Mark returns false (RFC 3168 §5).
func (p *Packet) Mark() bool {
	if p.ECN&ECT == 0 {
		return false
	}
	p.ECN |= CE
	return true
}

// MaxSACK is the number of SACK blocks an ACK carries: three, as TCP with
// timestamps can fit in its 40 option bytes (RFC 2018 §3).
const MaxSACK = 3

// Block is a byte range [Start, End) of received data, as in a SACK option.
type Block struct {
	Start, End int64
}

// Packet is a simulated packet. Sequence numbers are byte offsets from the
// start of the flow (the initial sequence number is 0), which keeps pcap
// export simple.
type Packet struct {
	// Flow is the flow index in the simulation.
	Flow int32
	// Kind is Data, Ack or Datagram.
	Kind Kind
	// Retransmission marks a data segment sent more than once.
	Retransmission bool
	// NSACK is the number of valid SACK blocks.
	NSACK uint8
	// ECN holds the packet's ECN bits (ECT, CE in the IP header; ECE,
	// CWR in the TCP header), in the byte the fields above leave free.
	ECN ECNBits
	// Size is the packet's size on the wire in bytes, headers included.
	Size units.Bytes
	// Len is the payload length in bytes.
	Len units.Bytes
	// Seq is the first payload byte's offset (Data), or the datagram's
	// sequence number (Datagram). An Ack or SynAck carries no sequence
	// number of its own: its Seq holds the receive window it advertises,
	// if any (Window, SetWindow), which keeps a packet at two cache lines.
	Seq int64
	// AckNo is the cumulative acknowledgement: the next byte expected.
	AckNo int64
	// SACK holds NSACK blocks, the first covering the most recently received
	// segment (RFC 2018).
	SACK [MaxSACK]Block
	// SentAt is when the sender put the packet on the wire (a timestamp
	// option's TSval).
	SentAt clock.Time
	// EchoAt echoes the SentAt of the segment that triggered an ACK (TSecr).
	EchoAt clock.Time
	// AckDelay is how long the receiver held the newest segment before this
	// ACK (timer-driven acknowledgements only), which the sender removes
	// from its RTT sample, as QUIC does with its ack_delay field.
	AckDelay time.Duration
	// EnqueuedAt is when the packet entered the queue it is in.
	EnqueuedAt clock.Time

	// body holds the rarely used variable-length fields (Body); nil until
	// first asked for, so a plain TCP packet is two cache lines (128 bytes),
	// which is what a many-flow simulation's memory traffic is made of.
	body *Body
}

// Body is the part of a packet only some traffic uses: a network-coding
// header (TCP/NC) and payload bytes (the emulator's raw packets, coded
// payloads). The pool keeps a packet's Body, and the slices' storage, with
// the packet, so traffic that uses it allocates nothing in steady state.
type Body struct {
	// CodeStart, Coeffs and Payload are a network-coding header: the first
	// packet of the combination's window, its coefficients, and (in the
	// payload-checking mode) the coded bytes. On an ACK, CodeStart carries
	// the decoder's limit. The emulator keeps a packet's raw bytes in
	// Payload.
	CodeStart uint64
	Coeffs    []byte
	Payload   []byte
}

// Body returns the packet's body, creating an empty one on first use.
func (p *Packet) Body() *Body {
	if p.body == nil {
		p.body = &Body{}
	}
	return p.body
}

// SetWindow makes an Ack or SynAck advertise a receive window of w bytes
// beyond AckNo (w >= 0).
func (p *Packet) SetWindow(w units.Bytes) { p.Seq = int64(w) + 1 }

// Window returns the receive window an Ack or SynAck advertises, in bytes
// beyond AckNo; ok is false when it advertises none (cclab's default
// receiver), and the sender is then limited only by its configured
// window.
func (p *Packet) Window() (w units.Bytes, ok bool) {
	if (p.Kind == Ack || p.Kind == SynAck) && p.Seq > 0 {
		return units.Bytes(p.Seq - 1), true
	}
	return 0, false
}

// Pool is a free list of packets for one simulation. It is not safe for
// concurrent use, like everything else in a simulation.
type Pool struct {
	free  []*Packet // a stack: the most recently freed packet is reused first
	live  int
	total int
}

// Get returns a zeroed packet (with an empty Body if it had one).
func (p *Pool) Get() *Packet {
	p.live++
	if n := len(p.free); n > 0 {
		pk := p.free[n-1]
		p.free = p.free[:n-1]
		return pk
	}
	p.total++
	return &Packet{}
}

// Put returns a packet to the pool. The caller must not use it afterwards.
func (p *Pool) Put(pk *Packet) {
	b := pk.body
	*pk = Packet{body: b}
	if b != nil {
		*b = Body{Coeffs: b.Coeffs[:0], Payload: b.Payload[:0]}
	}
	p.free = append(p.free, pk)
	p.live--
}

// Live returns the number of packets handed out and not yet returned; at the
// end of a simulation it equals the packets still in queues and on links,
// which is how conservation is checked.
func (p *Pool) Live() int { return p.live }

// Allocated returns the number of packets ever allocated: the simulation's
// peak packet population.
func (p *Pool) Allocated() int { return p.total }

// Receiver is anything that accepts packets: a link, a delay line, a
// transport endpoint. The receiver owns the packet after the call.
type Receiver interface {
	Receive(now clock.Time, p *Packet)
}
