package nc

import (
	"errors"
	"fmt"
)

// Decoder is the receiver side of the coding layer: online Gaussian
// elimination that keeps the received coefficient vectors in reduced row
// echelon form (RREF), with columns ordered by packet index. It is not safe
// for concurrent use.
//
// Sundararajan et al. (2009, 2011) call packet k seen when the
// receiver can compute p_k + sum_{l>k} c_l p_l. In RREF that is exactly a
// pivot in column k, so the seen packets are the pivot columns and their
// number is the rank. Pivots never move when a row is added, so the set of
// seen packets only grows and the acknowledgement (the oldest unseen packet)
// never moves backwards. A packet is decoded when its row has no non-zero
// entry outside its pivot.
//
// Columns span [dec, dec+Window) where dec is the oldest undecoded packet;
// rows live at the ring position of their pivot column. Decoded payloads are
// kept in a second ring of Window entries, because the sender keeps coding
// a packet until it hears that it is seen, and the decoder must subtract
// known packets from those combinations.
type Decoder struct {
	window uint64
	mask   uint64
	symLen int

	rows   [][]byte // rows[pos]: RREF row whose pivot column maps to pos; zero when !pivot[pos]
	pivot  []bool
	syms   [][]byte // symbols of the rows (payload mode)
	rank   int      // number of pivots in [dec, hi)
	vec    []byte   // scratch row, all zero between calls
	vecSym []byte   // scratch symbol

	dec  uint64 // oldest undecoded packet: [0, dec) delivered
	seen uint64 // oldest unseen packet
	hi   uint64 // one past the highest column with a non-zero entry

	ret   [][]byte // decoded symbols by index, [retLo, dec)
	retLo uint64

	stats DecoderState
}

// Receipt reports what one coded packet did at the decoder.
type Receipt struct {
	// Innovative reports whether the packet increased the rank. A
	// non-innovative packet changes nothing but still deserves an
	// acknowledgement (a duplicate), as in Sundararajan et al.'s receiver.
	Innovative bool
	// NewlySeen is the packet that this packet made seen (valid only when
	// Innovative). It is usually the oldest unseen packet; with probability
	// about 1/256 per packet the combination cancels there and a later
	// packet becomes seen instead.
	NewlySeen uint64
	// Ack is the index of the oldest unseen packet after this packet: the
	// number the acknowledgement carries ("every packet below Ack is
	// seen"). It never decreases.
	Ack uint64
	// Limit is one past the highest packet index the decoder can accept
	// now: the acknowledgement carries it and the encoder codes only below
	// it (Encoder.OnAck). It never decreases.
	Limit uint64
	// DeliverFrom and DeliverTo bound the packets decoded, in order, by
	// this packet: [DeliverFrom, DeliverTo), empty when equal. Their
	// payloads are available from Payload until the next Receive.
	DeliverFrom, DeliverTo uint64
}

// DecoderState is a snapshot of a decoder, for probes and logs.
type DecoderState struct {
	// Decoded is the number of packets decoded and released in order.
	Decoded uint64
	// Seen is the oldest unseen packet (the current acknowledgement).
	Seen uint64
	// Highest is one past the newest packet any received combination
	// involved.
	Highest uint64
	// Rank is the number of seen but not yet decoded packets.
	Rank int
	// Received, Innovative and Stale count received packets, those that
	// increased the rank, and those rejected with ErrStale.
	Received, Innovative, Stale uint64
}

// NewDecoder returns a decoder for cfg, which must equal the encoder's.
func NewDecoder(cfg Config) (*Decoder, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	size := ringSize(cfg.Window)
	d := &Decoder{
		window: uint64(cfg.Window),
		mask:   size - 1,
		symLen: cfg.symbolLen(),
		pivot:  make([]bool, size),
		vec:    make([]byte, size),
	}
	d.rows = make([][]byte, size)
	rowBuf := make([]byte, int(size*size))
	for i := range d.rows {
		d.rows[i] = rowBuf[i*int(size) : (i+1)*int(size) : (i+1)*int(size)]
	}
	if d.symLen > 0 {
		// Window row symbols, Window retained symbols and the scratch
		// symbol; Receive swaps buffers between them instead of copying.
		symBuf := make([]byte, (2*int(size)+1)*d.symLen)
		next := func() []byte {
			s := symBuf[:d.symLen:d.symLen]
			symBuf = symBuf[d.symLen:]
			return s
		}
		d.syms = make([][]byte, size)
		d.ret = make([][]byte, size)
		for i := range d.syms {
			d.syms[i] = next()
			d.ret[i] = next()
		}
		d.vecSym = next()
	}
	return d, nil
}

// Receive processes one coded packet. The packet is not retained.
//
// This is the receiver module of Sundararajan et al. (2011), "packet arrives":
// add the coefficient vector to the matrix and re-establish RREF, apply the
// same operations to the payloads, release decoded packets in order, and
// acknowledge the oldest unseen packet. Errors (a malformed packet, one
// beyond the advertised limit, a stale one) leave the decoding state
// unchanged; only DecoderState.Stale counts stale packets.
func (d *Decoder) Receive(c *Coded) (Receipt, error) {
	if err := d.check(c); err != nil {
		if errors.Is(err, ErrStale) {
			d.stats.Stale++
		}
		return d.receipt(), err
	}
	d.stats.Received++
	end := c.Start + uint64(len(c.Coeffs))
	if d.symLen > 0 {
		copy(d.vecSym, c.Payload)
	}

	// Load the vector, subtracting packets already decoded (their columns
	// left the matrix; only their payloads remain).
	for i, a := range c.Coeffs {
		if a == 0 {
			continue
		}
		col := c.Start + uint64(i)
		if col < d.dec {
			if d.symLen > 0 {
				MulAddRow(d.vecSym, d.ret[col&d.mask], a)
			}
			continue
		}
		d.vec[col&d.mask] = a
	}

	// Eliminate the pivot columns in increasing order. Row j has zeros in
	// every other pivot column (RREF), so eliminating column j never
	// re-fills an earlier pivot column; the first non-pivot column left
	// non-zero is the new pivot.
	hi := max(d.hi, end)
	lead, found := uint64(0), false
	for j := d.dec; j < hi; j++ {
		p := j & d.mask
		a := d.vec[p]
		if a == 0 {
			continue
		}
		if !d.pivot[p] {
			if !found {
				lead, found = j, true
			}
			continue
		}
		mulAddRange(d.vec, d.rows[p], a, j, d.hi, d.mask)
		if d.symLen > 0 {
			MulAddRow(d.vecSym, d.syms[p], a)
		}
	}
	if !found {
		// In the span already: vec is all zero again.
		return d.receipt(), nil
	}

	d.stats.Innovative++
	d.hi = hi
	lp := lead & d.mask
	// Normalise the new row to a leading 1.
	inv := Inv(d.vec[lp])
	scaleRange(d.vec, inv, lead, hi, d.mask)
	if d.symLen > 0 {
		ScaleRow(d.vecSym, inv)
	}
	// Back-substitute: clear column lead from earlier rows (later rows are
	// zero there, being zero before their pivot).
	for j := d.dec; j < lead; j++ {
		p := j & d.mask
		if !d.pivot[p] {
			continue
		}
		if a := d.rows[p][lp]; a != 0 {
			mulAddRange(d.rows[p], d.vec, a, lead, hi, d.mask)
			if d.symLen > 0 {
				MulAddRow(d.syms[p], d.vecSym, a)
			}
		}
	}
	// Install the row and return the scratch vector to zero.
	copyRange(d.rows[lp], d.vec, lead, hi, d.mask)
	zeroRange(d.vec, lead, hi, d.mask)
	if d.symLen > 0 {
		d.syms[lp], d.vecSym = d.vecSym, d.syms[lp]
	}
	d.pivot[lp] = true
	d.rank++

	for d.seen < d.hi && d.pivot[d.seen&d.mask] {
		d.seen++
	}
	from := d.dec
	for d.dec < d.seen && isZeroRange(d.rows[d.dec&d.mask], d.dec+1, d.hi, d.mask) {
		d.release()
	}
	r := d.receipt()
	r.Innovative = true
	r.NewlySeen = lead
	r.DeliverFrom = from
	return r, nil
}

// check validates a packet without changing the decoder.
func (d *Decoder) check(c *Coded) error {
	if c == nil {
		return errors.New("nc: Receive of a nil packet")
	}
	n := uint64(len(c.Coeffs))
	if n == 0 {
		return errors.New("nc: coded packet has no coefficients")
	}
	if c.Start > ^uint64(0)-n {
		return fmt.Errorf("nc: coded packet window [%d, +%d) overflows", c.Start, n)
	}
	if d.symLen == 0 && len(c.Payload) != 0 {
		return fmt.Errorf("nc: coded packet carries %d payload bytes but the decoder is in the fast mode (PayloadSize 0)", len(c.Payload))
	}
	if d.symLen > 0 && len(c.Payload) != d.symLen {
		return fmt.Errorf("nc: coded payload is %d bytes, want PayloadSize+2 = %d", len(c.Payload), d.symLen)
	}
	if end := c.Start + n; end > d.dec+d.window {
		return fmt.Errorf("%w: packet spans [%d, %d) but the decoder accepts indices below %d", ErrWindowFull, c.Start, end, d.dec+d.window)
	}
	if c.Start < d.retLo {
		for i, a := range c.Coeffs[:min(n, d.retLo-c.Start)] {
			if a != 0 {
				return fmt.Errorf("%w: packet %d was delivered and forgotten (kept from %d)", ErrStale, c.Start+uint64(i), d.retLo)
			}
		}
	}
	return nil
}

// release moves the decoded packet dec out of the matrix into the ring of
// decoded symbols and advances dec.
func (d *Decoder) release() {
	p := d.dec & d.mask
	d.rows[p][p] = 0 // the row was the unit vector e_dec
	d.pivot[p] = false
	d.rank--
	if d.dec-d.retLo == d.window {
		d.retLo++ // forget the oldest delivered packet
	}
	if d.symLen > 0 {
		d.ret[p], d.syms[p] = d.syms[p], d.ret[p]
	}
	d.dec++
}

func (d *Decoder) receipt() Receipt {
	return Receipt{Ack: d.seen, Limit: d.dec + d.window, DeliverFrom: d.dec, DeliverTo: d.dec}
}

// Payload returns the decoded payload of packet index, exactly the bytes
// given to Encoder.Add. It is valid until the next Receive and must not be
// modified. ok is false in the fast mode and for packets not decoded or
// already forgotten (the decoder keeps the last Window decoded packets).
func (d *Decoder) Payload(index uint64) (payload []byte, ok bool) {
	if d.symLen == 0 || index < d.retLo || index >= d.dec {
		return nil, false
	}
	s := d.ret[index&d.mask]
	n := int(s[0])<<8 | int(s[1])
	if n > d.symLen-lenHeader {
		// A corrupted length header: only possible if a coded payload was
		// altered in transit, which the simulator never does.
		return nil, false
	}
	return s[lenHeader : lenHeader+n], true
}

// State returns a snapshot of the decoder.
func (d *Decoder) State() DecoderState {
	s := d.stats
	s.Decoded = d.dec
	s.Seen = d.seen
	s.Highest = d.hi
	s.Rank = d.rank
	return s
}
