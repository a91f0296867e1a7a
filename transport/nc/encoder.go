package nc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Coded is one coded packet: a random linear combination of the packets
// with indices [Start, Start+len(Coeffs)).
//
// Encoder.Next reuses the capacity of Coeffs and Payload, so a transport
// that keeps a free list of Coded values codes without allocating.
type Coded struct {
	// Start is the index of the first packet of the sender's coding window
	// when the combination was formed; it aligns Coeffs with the
	// receiver's columns.
	Start uint64
	// Coeffs[i] is the GF(2^8) coefficient of packet Start+i. The encoder
	// never emits a zero coefficient.
	Coeffs []byte
	// Payload is the coded symbol (2-byte length, payload, zero padding;
	// PayloadSize+2 bytes) in the payload mode, and empty in the fast mode.
	Payload []byte
}

// HeaderLen is the size in bytes of the coding header this packet would
// carry on the wire: the window start (8 bytes), the window size (2 bytes)
// and one coefficient per packet, the header of Sundararajan et al.'s
// implementation (which may send a seed instead of the coefficients).
func (c *Coded) HeaderLen() int { return 8 + 2 + len(c.Coeffs) }

// Encoder is the sender side of the coding layer. It is not safe for
// concurrent use.
type Encoder struct {
	window int
	mask   uint64
	symLen int
	syms   [][]byte // ring of symbols by packet index; nil in the fast mode

	start uint64 // oldest packet not known to be seen
	end   uint64 // next index TCP will hand down
	limit uint64 // decoder's limit: code only indices < limit

	rMicro int64 // R in units of 1/redundancyUnit
	credit int64 // NUM of Sundararajan et al., same units

	src   rand.Source
	rbuf  uint64 // unused random bytes, low byte first
	rleft int    // number of bytes left in rbuf

	sent uint64
}

// NewEncoder returns an encoder drawing coefficients from src, which must
// not be nil: seed it (e.g. rand.NewPCG(seed, stream)) to make runs
// reproducible.
func NewEncoder(cfg EncoderConfig, src rand.Source) (*Encoder, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errors.New("nc: NewEncoder needs a random source, got nil")
	}
	size := ringSize(cfg.Window)
	e := &Encoder{
		window: cfg.Window,
		mask:   size - 1,
		symLen: cfg.symbolLen(),
		// Until the first acknowledgement, assume the decoder's window is
		// at least ours (both ends share Config), which starts at 0.
		limit:  uint64(cfg.Window),
		rMicro: int64(math.Round(cfg.Redundancy * redundancyUnit)),
		src:    src,
	}
	if e.symLen > 0 {
		buf := make([]byte, int(size)*e.symLen)
		e.syms = make([][]byte, size)
		for i := range e.syms {
			e.syms[i] = buf[i*e.symLen : (i+1)*e.symLen : (i+1)*e.symLen]
		}
	}
	return e, nil
}

// Add hands the encoder the packet with the given index from TCP and
// returns how many coded packets to send now (call Next that many times).
//
// Sundararajan et al. 2011, sender module, "packet arrives from TCP":
// if the packet is not already in the coding window, add it; NUM += R;
// send floor(NUM) random linear combinations; NUM -= floor(NUM). A new
// packet must have the next index (TCP hands packets down in order); an
// index below it is a retransmission by TCP, which adds credit but no
// packet. When every packet is already seen there is nothing to code, so a
// retransmission then sends nothing and earns no credit.
//
// In the payload mode payload is copied; it must be at most PayloadSize
// bytes. In the fast mode payload must be nil. If the window is full, Add
// returns an error wrapping ErrWindowFull and changes nothing.
func (e *Encoder) Add(index uint64, payload []byte) (int, error) {
	switch {
	case index > e.end:
		return 0, fmt.Errorf("nc: packet index %d skips ahead: the next new index is %d", index, e.end)
	case index == e.end:
		if e.symLen == 0 && payload != nil {
			return 0, fmt.Errorf("nc: payload of %d bytes given in the fast mode (Config.PayloadSize is 0)", len(payload))
		}
		if e.symLen > 0 && len(payload) > e.symLen-lenHeader {
			return 0, fmt.Errorf("nc: payload of %d bytes exceeds PayloadSize %d", len(payload), e.symLen-lenHeader)
		}
		if e.end-e.start >= uint64(e.window) {
			return 0, fmt.Errorf("%w: %d unseen packets (Window %d); wait for an acknowledgement", ErrWindowFull, e.end-e.start, e.window)
		}
		if e.symLen > 0 {
			s := e.syms[index&e.mask]
			s[0], s[1] = byte(len(payload)>>8), byte(len(payload))
			n := copy(s[lenHeader:], payload)
			clear(s[lenHeader+n:])
		}
		e.end++
	default:
		// A retransmission by TCP: the packet is in the window (or already
		// seen); only the credit changes.
		if e.start == e.end {
			return 0, nil
		}
	}
	e.credit += e.rMicro
	n := e.credit / redundancyUnit
	e.credit -= n * redundancyUnit
	return int(n), nil
}

// Next fills dst with a random linear combination of the unseen packets
// below the decoder's limit. Coefficients are drawn uniformly from the 255
// non-zero field elements, so every packet of the window takes part: a zero
// coefficient would only shrink the window and raise the chance that the
// combination is not innovative. It returns an error wrapping
// ErrEmptyWindow when there is nothing to code. It does not allocate when
// dst's slices have enough capacity.
func (e *Encoder) Next(dst *Coded) error {
	hi := min(e.end, e.limit)
	if hi <= e.start {
		return fmt.Errorf("%w: window [%d, %d), decoder limit %d", ErrEmptyWindow, e.start, e.end, e.limit)
	}
	n := int(hi - e.start)
	dst.Start = e.start
	dst.Coeffs = resize(dst.Coeffs, n)
	for i := range dst.Coeffs {
		dst.Coeffs[i] = e.coefficient()
	}
	if e.symLen == 0 {
		dst.Payload = dst.Payload[:0]
	} else {
		dst.Payload = resize(dst.Payload, e.symLen)
		clear(dst.Payload)
		for i, c := range dst.Coeffs {
			MulAddRow(dst.Payload, e.syms[(e.start+uint64(i))&e.mask], c)
		}
	}
	e.sent++
	return nil
}

// coefficient returns a uniform non-zero byte, by rejection, using each
// 64-bit draw for eight bytes.
func (e *Encoder) coefficient() byte {
	for {
		if e.rleft == 0 {
			e.rbuf = e.src.Uint64()
			e.rleft = 8
		}
		b := byte(e.rbuf)
		e.rbuf >>= 8
		e.rleft--
		if b != 0 {
			return b
		}
	}
}

// OnAck records an acknowledgement: every packet below seen is seen, and
// the decoder accepts packet indices below limit (Receipt.Ack and
// Receipt.Limit). Seen packets leave the coding window (Sundararajan et al.
// 2011, sender module, "ACK arrives"), and later combinations include
// only packets below limit. Both values only move forward: a late
// (reordered) acknowledgement changes nothing. seen beyond the newest packet
// is an error and changes nothing.
//
// The limit is the decoder's back-pressure: it holds the sender while the
// receiver has seen packets it cannot decode yet, so that the decoder's
// memory stays within Config.Window. Until the first acknowledgement the
// encoder assumes the limit Config.Window (the decoder starts empty).
func (e *Encoder) OnAck(seen, limit uint64) error {
	if seen > e.end {
		return fmt.Errorf("nc: acknowledgement says packet %d is seen, but only packets below %d were sent", seen, e.end)
	}
	if seen > e.start {
		e.start = seen
	}
	if limit > e.limit {
		e.limit = limit
	}
	return nil
}

// Len returns the number of packets in the coding window.
func (e *Encoder) Len() int { return int(e.end - e.start) }

// Full reports whether Add of a new packet would fail with ErrWindowFull.
func (e *Encoder) Full() bool { return e.end-e.start >= uint64(e.window) }

// EncoderState is a snapshot of an encoder, for probes and logs.
type EncoderState struct {
	// Start is the oldest packet not known to be seen; End the next new
	// index. The coding window is [Start, End).
	Start, End uint64
	// Limit is the decoder's last advertised limit.
	Limit uint64
	// Credit is the fractional credit carried to the next packet, in coded
	// packets, in [0, 1).
	Credit float64
	// Sent is the number of coded packets produced by Next.
	Sent uint64
}

// State returns a snapshot of the encoder.
func (e *Encoder) State() EncoderState {
	return EncoderState{
		Start:  e.start,
		End:    e.end,
		Limit:  e.limit,
		Credit: float64(e.credit) / redundancyUnit,
		Sent:   e.sent,
	}
}

// resize returns b with length n, reusing its storage when it is large
// enough.
func resize(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
