package udp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cclab/cclab/netsim/packet"
)

// Wire format, version 1 (docs/wire.md). Every datagram starts with a fixed
// 40-byte header, big-endian:
//
//	0  version   u8   1
//	1  type      u8   Data 1, Ack 2, Syn 3, SynAck 4, Fin 5, Reset 6
//	2  flags     u8   bit 0 retransmission, bit 1 coded (TCP/NC), bit 2 ECE
//	                  (Ack, SynAck), bit 3 CWR (Data)
//	3  nsack     u8   SACK blocks that follow an Ack header, 0..3
//	4  conn id   u64  chosen by the sender; other ids are stray
//	12 seq       u64  Data: first byte offset; Ack: cumulative ACK; Fin: bytes sent
//	20 tsval     i64  sender's clock, ns (Data/Syn/Fin), receiver's (Ack/SynAck)
//	28 tsecr     i64  echoed tsval (Ack/SynAck)
//	36 aux       u32  Data: payload length; Ack: ACK delay in µs; Reset: reason
//
// followed by a type-specific body:
//
//	Data:   [coded: start u64, ncoeff u16, coeff bytes] payload
//	Ack:    [coded: decoder limit u64] nsack x (start u64, end u64)
//	Syn:    mss u32, bytes u64, window u32, ack interval µs u32, options u8
//	        (bit 0 no delayed ACK, bit 1 ECN, bit 2 exact echo), coding
//	        window u16, redundancy (x1000) u32
//	SynAck: window u32
const (
	// Version is the wire format version this package speaks.
	Version = 1
	// HeaderLen is the fixed header length in bytes.
	HeaderLen = 40
	// MaxDatagram is the largest datagram accepted; longer ones are
	// dropped as oversized. It leaves room for a 1448-byte payload and a
	// full coding header within a 64 KiB buffer, and bounds reads.
	MaxDatagram = 9000
	synBodyLen  = 4 + 8 + 4 + 4 + 1 + 2 + 4
	blockLen    = 16
)

// Type is a datagram's type.
type Type uint8

// Datagram types.
const (
	TypeData   Type = 1
	TypeAck    Type = 2
	TypeSyn    Type = 3
	TypeSynAck Type = 4
	TypeFin    Type = 5
	TypeReset  Type = 6
)

func (t Type) String() string {
	switch t {
	case TypeData:
		return "data"
	case TypeAck:
		return "ack"
	case TypeSyn:
		return "syn"
	case TypeSynAck:
		return "synack"
	case TypeFin:
		return "fin"
	case TypeReset:
		return "reset"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Header flags.
const (
	FlagRetransmission = 1 << 0
	FlagCoded          = 1 << 1
	// FlagECE is TCP's ECN-Echo: on an Ack, the receiver asks the sender
	// to reduce (it saw CE); on a SynAck, the receiver agrees to ECN, as
	// TCP's SYN-ACK with ECE (RFC 3168 §6.1.1).
	FlagECE = 1 << 2
	// FlagCWR is TCP's Congestion Window Reduced, on a Data datagram.
	FlagCWR    = 1 << 3
	knownFlags = FlagRetransmission | FlagCoded | FlagECE | FlagCWR
)

// Syn option bits.
const (
	OptNoDelayedAck = 1 << 0
	// OptECN asks for ECN (RFC 3168), as TCP's SYN with ECE and CWR: the
	// sender's new data will carry ECT in the IP header, and the
	// receiver, if it can read the IP header's ECN field, echoes CE with
	// FlagECE.
	OptECN = 1 << 1
	// OptExactEcho, with OptECN, asks the receiver to echo each
	// segment's CE state rather than hold ECE until CWR: DCTCP's echo
	// (tcp.ECNDCTCP).
	OptExactEcho = 1 << 2
)

// Reset reasons, carried in aux.
const (
	ResetRefused  = 1 // the receiver cannot accept the SYN's parameters
	ResetBusy     = 2 // the receiver serves another connection
	ResetProtocol = 3 // the peer broke the protocol
	ResetClosed   = 4 // the receiver closed the connection (it was stopped)
)

// Header is a decoded datagram. Slices alias the datagram's buffer.
type Header struct {
	Type    Type
	Flags   uint8
	ConnID  uint64
	Seq     uint64
	TSval   int64
	TSecr   int64
	Aux     uint32
	NSACK   int
	SACK    [packet.MaxSACK]packet.Block
	Payload []byte

	// Coded data: the coding window's first index and the coefficients;
	// coded ACK: Limit is the decoder's highest acceptable index.
	CodeStart uint64
	Coeffs    []byte
	Limit     uint64

	// Syn parameters.
	Syn SynParams
	// Window is the SynAck's advertised receive window.
	Window uint32
}

// SynParams are the connection parameters a sender proposes in its SYN.
type SynParams struct {
	MSS           uint32
	Bytes         uint64 // transfer size, 0 = until Fin
	Window        uint32 // receive window the sender will respect, bytes
	AckIntervalUs uint32 // timer-driven SACK interval, 0 = per-segment ACKs
	Options       uint8
	CodingWindow  uint16 // TCP/NC coding window in packets, 0 = no coding
	RedundancyK   uint32 // TCP/NC redundancy R x 1000
}

// Decode errors; a datagram that fails to decode is dropped and counted.
var (
	ErrTruncated  = errors.New("udp: truncated datagram")
	ErrOversized  = errors.New("udp: oversized datagram")
	ErrVersion    = errors.New("udp: unknown wire version")
	ErrMalformed  = errors.New("udp: malformed datagram")
	ErrStray      = errors.New("udp: stray datagram (unknown connection)")
	ErrOutOfOrder = errors.New("udp: datagram outside the receive window")
)

// Decode parses b into h without allocating. On error h is unspecified.
func Decode(b []byte, h *Header) error {
	if len(b) > MaxDatagram {
		return ErrOversized
	}
	if len(b) < HeaderLen {
		return ErrTruncated
	}
	if b[0] != Version {
		return ErrVersion
	}
	h.Type = Type(b[1])
	h.Flags = b[2]
	h.NSACK = int(b[3])
	h.ConnID = binary.BigEndian.Uint64(b[4:])
	h.Seq = binary.BigEndian.Uint64(b[12:])
	h.TSval = int64(binary.BigEndian.Uint64(b[20:]))
	h.TSecr = int64(binary.BigEndian.Uint64(b[28:]))
	h.Aux = binary.BigEndian.Uint32(b[36:])
	h.Payload, h.Coeffs = nil, nil
	h.CodeStart, h.Limit = 0, 0
	if h.Flags&^knownFlags != 0 || h.Seq > 1<<62 {
		return ErrMalformed
	}
	// ECE belongs to acknowledgements, CWR to data (as in TCP, where the
	// sender's CWR and the receiver's ECE never share a direction).
	if h.Flags&FlagECE != 0 && h.Type != TypeAck && h.Type != TypeSynAck ||
		h.Flags&FlagCWR != 0 && h.Type != TypeData {
		return ErrMalformed
	}
	body := b[HeaderLen:]
	switch h.Type {
	case TypeData:
		if h.NSACK != 0 {
			return ErrMalformed
		}
		if h.Flags&FlagCoded != 0 {
			if len(body) < 10 {
				return ErrTruncated
			}
			h.CodeStart = binary.BigEndian.Uint64(body)
			n := int(binary.BigEndian.Uint16(body[8:]))
			body = body[10:]
			if n == 0 || len(body) < n {
				return ErrMalformed
			}
			h.Coeffs, body = body[:n], body[n:]
		}
		if int(h.Aux) != len(body) || len(body) == 0 {
			return ErrMalformed
		}
		h.Payload = body
	case TypeAck:
		if h.NSACK > packet.MaxSACK {
			return ErrMalformed
		}
		if h.Flags&FlagCoded != 0 {
			if len(body) < 8 {
				return ErrTruncated
			}
			h.Limit = binary.BigEndian.Uint64(body)
			body = body[8:]
		}
		if len(body) != h.NSACK*blockLen {
			return ErrMalformed
		}
		for i := range h.NSACK {
			s := binary.BigEndian.Uint64(body[i*blockLen:])
			e := binary.BigEndian.Uint64(body[i*blockLen+8:])
			if s >= e || e > 1<<62 || s <= h.Seq {
				return ErrMalformed
			}
			h.SACK[i] = packet.Block{Start: int64(s), End: int64(e)}
		}
	case TypeSyn:
		if len(body) != synBodyLen || h.NSACK != 0 {
			return ErrMalformed
		}
		p := &h.Syn
		p.MSS = binary.BigEndian.Uint32(body)
		p.Bytes = binary.BigEndian.Uint64(body[4:])
		p.Window = binary.BigEndian.Uint32(body[12:])
		p.AckIntervalUs = binary.BigEndian.Uint32(body[16:])
		// Unknown option bits are ignored, so that a receiver answers a
		// later sender's Syn without the options it does not know (this
		// is how ECN's bits stayed within version 1).
		p.Options = body[20]
		p.CodingWindow = binary.BigEndian.Uint16(body[21:])
		p.RedundancyK = binary.BigEndian.Uint32(body[23:])
	case TypeSynAck:
		if len(body) != 4 || h.NSACK != 0 {
			return ErrMalformed
		}
		h.Window = binary.BigEndian.Uint32(body)
	case TypeFin, TypeReset:
		if len(body) != 0 || h.NSACK != 0 {
			return ErrMalformed
		}
	default:
		return ErrMalformed
	}
	return nil
}

// putHeader writes the fixed header into b, which must hold HeaderLen bytes.
func putHeader(b []byte, t Type, flags uint8, nsack int, conn, seq uint64, tsval, tsecr int64, aux uint32) {
	b[0] = Version
	b[1] = byte(t)
	b[2] = flags
	b[3] = byte(nsack)
	binary.BigEndian.PutUint64(b[4:], conn)
	binary.BigEndian.PutUint64(b[12:], seq)
	binary.BigEndian.PutUint64(b[20:], uint64(tsval))
	binary.BigEndian.PutUint64(b[28:], uint64(tsecr))
	binary.BigEndian.PutUint32(b[36:], aux)
}

// Encode appends h's encoding to dst[:0] and returns it. dst needs capacity
// for the whole datagram to avoid allocation.
func Encode(dst []byte, h *Header) []byte {
	n := HeaderLen
	switch h.Type {
	case TypeData:
		if h.Flags&FlagCoded != 0 {
			n += 10 + len(h.Coeffs)
		}
		n += len(h.Payload)
	case TypeAck:
		if h.Flags&FlagCoded != 0 {
			n += 8
		}
		n += h.NSACK * blockLen
	case TypeSyn:
		n += synBodyLen
	case TypeSynAck:
		n += 4
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	b := dst[:n]
	aux := h.Aux
	if h.Type == TypeData {
		aux = uint32(len(h.Payload))
	}
	putHeader(b, h.Type, h.Flags, h.NSACK, h.ConnID, h.Seq, h.TSval, h.TSecr, aux)
	body := b[HeaderLen:]
	switch h.Type {
	case TypeData:
		if h.Flags&FlagCoded != 0 {
			binary.BigEndian.PutUint64(body, h.CodeStart)
			binary.BigEndian.PutUint16(body[8:], uint16(len(h.Coeffs)))
			body = body[10+copy(body[10:], h.Coeffs):]
		}
		copy(body, h.Payload)
	case TypeAck:
		if h.Flags&FlagCoded != 0 {
			binary.BigEndian.PutUint64(body, h.Limit)
			body = body[8:]
		}
		for i := range h.NSACK {
			binary.BigEndian.PutUint64(body[i*blockLen:], uint64(h.SACK[i].Start))
			binary.BigEndian.PutUint64(body[i*blockLen+8:], uint64(h.SACK[i].End))
		}
	case TypeSyn:
		p := &h.Syn
		binary.BigEndian.PutUint32(body, p.MSS)
		binary.BigEndian.PutUint64(body[4:], p.Bytes)
		binary.BigEndian.PutUint32(body[12:], p.Window)
		binary.BigEndian.PutUint32(body[16:], p.AckIntervalUs)
		body[20] = p.Options
		binary.BigEndian.PutUint16(body[21:], p.CodingWindow)
		binary.BigEndian.PutUint32(body[23:], p.RedundancyK)
	case TypeSynAck:
		binary.BigEndian.PutUint32(body, h.Window)
	}
	return b
}

// Drops counts datagrams dropped on receipt, by cause.
type Drops struct {
	Truncated   int64 `json:"truncated"`
	Oversized   int64 `json:"oversized"`
	Version     int64 `json:"version"`
	Malformed   int64 `json:"malformed"`
	Stray       int64 `json:"stray"`
	OutOfWindow int64 `json:"out_of_window"`
}

// Total returns the number of dropped datagrams.
func (d Drops) Total() int64 {
	return d.Truncated + d.Oversized + d.Version + d.Malformed + d.Stray + d.OutOfWindow
}

func (d *Drops) count(err error) {
	switch err {
	case ErrTruncated:
		d.Truncated++
	case ErrOversized:
		d.Oversized++
	case ErrVersion:
		d.Version++
	case ErrStray:
		d.Stray++
	case ErrOutOfOrder:
		d.OutOfWindow++
	default:
		d.Malformed++
	}
}
