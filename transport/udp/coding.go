package udp

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/ipecn"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/transport/nc"
)

// The TCP/NC layer over UDP is the simulator's (experiment/network's
// Coding) on real bytes: below the tcp.Sender an nc.Encoder turns each
// segment into R random linear combinations of the coding window; above
// the tcp.Receiver an nc.Decoder acknowledges every combination with the
// oldest unseen segment and delivers decoded segments in order. The coded
// symbols carry the real payload (nc's payload mode).

// encoderSide sits between the tcp.Sender and the socket.
type encoderSide struct {
	s     *Sender
	enc   *nc.Encoder
	mss   int64
	total int64
	buf   []byte
	coded nc.Coded
	// adm holds segments waiting for room in the coding window.
	adm nc.Admission
	// Coded counts coded datagrams sent.
	Coded int64
}

func newEncoderSide(s *Sender, c Coding) (*encoderSide, error) {
	mss := int64(s.cfg.TCP.MSS)
	cfg := nc.Config{Window: c.Window, PayloadSize: int(mss)}
	if c.Window > 1<<16-1 {
		return nil, fmt.Errorf("udp: coding window %d above the wire format's 65535", c.Window)
	}
	enc, err := nc.NewEncoder(nc.EncoderConfig{Config: cfg, Redundancy: c.Redundancy}, rand.NewPCG(s.id, 0x6e63))
	if err != nil {
		return nil, fmt.Errorf("udp: coding: %w", err)
	}
	return &encoderSide{s: s, enc: enc, mss: mss, total: int64(s.cfg.TCP.Bytes), buf: make([]byte, mss)}, nil
}

func (e *encoderSide) send(now clock.Time, p *packet.Packet) {
	idx := uint64(p.Seq) / uint64(e.mss)
	e.s.pool.Put(p)
	if e.adm.Offer(e.enc, idx) {
		e.add(now, idx)
	}
}

func (e *encoderSide) add(now clock.Time, idx uint64) {
	length := e.mss
	if e.total > 0 {
		length = min(length, e.total-int64(idx)*e.mss)
	}
	payload := e.buf[:length]
	FillPattern(int64(idx)*e.mss, payload)
	count, err := e.enc.Add(idx, payload)
	if err != nil {
		// Only reachable through a bug in the layer's own bookkeeping.
		e.s.finish(now, fmt.Errorf("udp: coding layer: %w", err))
		return
	}
	s := e.s
	for range count {
		if err := e.enc.Next(&e.coded); err != nil {
			return // everything is already seen
		}
		s.hdr = Header{
			Type: TypeData, Flags: FlagCoded, ConnID: s.id,
			Seq: e.coded.Start * uint64(e.mss), TSval: int64(now),
			CodeStart: e.coded.Start, Coeffs: e.coded.Coeffs, Payload: e.coded.Payload,
		}
		e.Coded++
		s.write(Encode(s.obuf, &s.hdr))
	}
}

func (e *encoderSide) release(now clock.Time) {
	for idx, ok := e.adm.Next(e.enc); ok; idx, ok = e.adm.Next(e.enc) {
		e.add(now, idx)
	}
}

// onAck advances the encoder, then hands the ACK to the tcp.Sender.
func (e *encoderSide) onAck(now clock.Time, p *packet.Packet, h *Header) {
	seen := (uint64(p.AckNo) + uint64(e.mss) - 1) / uint64(e.mss)
	if err := e.enc.OnAck(seen, h.Limit); err != nil {
		e.s.pool.Put(p)
		e.s.res.Drops.count(ErrMalformed)
		return
	}
	e.release(now)
	e.s.tcp.Receive(now, p)
}

// decoderSide sits between the socket and the tcp.Receiver.
type decoderSide struct {
	c                         *rconn
	dec                       *nc.Decoder
	mss, total                int64
	innovative, nonInnovative int64
}

func newDecoderSide(c *rconn, window int) (*decoderSide, error) {
	if int64(window)*c.mss > int64(c.l.cfg.MaxWindow) {
		return nil, fmt.Errorf("coding window of %d packets exceeds the receiver's memory limit", window)
	}
	dec, err := nc.NewDecoder(nc.Config{Window: window, PayloadSize: int(c.mss)})
	if err != nil {
		return nil, err
	}
	return &decoderSide{c: c, dec: dec, mss: c.mss, total: int64(c.params.Bytes)}, nil
}

func (d *decoderSide) receive(now clock.Time, h *Header) {
	c := d.c
	if h.Flags&FlagCoded == 0 {
		c.res.Drops.count(ErrMalformed)
		return
	}
	tsval := clock.Time(h.TSval)
	coded := nc.Coded{Start: h.CodeStart, Coeffs: h.Coeffs, Payload: h.Payload}
	rc, err := d.dec.Receive(&coded)
	switch {
	case err != nil && !isStale(err):
		c.res.Drops.count(ErrMalformed)
		return
	case err != nil || !rc.Innovative:
		d.nonInnovative++
	default:
		d.innovative++
	}
	c.res.Segments++
	for i := rc.DeliverFrom; i < rc.DeliverTo; i++ {
		seq := int64(i) * d.mss
		length := d.mss
		if d.total > 0 {
			length = min(length, d.total-seq)
		}
		got, ok := d.dec.Payload(i)
		if !ok || int64(len(got)) != length {
			// Only a sender that coded wrong lengths gets here.
			c.res.Corrupt += length
			c.end(now, fmt.Errorf("udp: coded segment %d decoded to %d bytes, want %d", i, len(got), length))
			return
		}
		c.data(now, seq, got, tsval, ipecn.NotECT, 0) // coded connections carry no ECN
	}
	a := c.pool.Get()
	a.Kind = packet.Ack
	a.AckNo = int64(rc.Ack) * d.mss
	if d.total > 0 {
		a.AckNo = min(a.AckNo, d.total)
	}
	a.Body().CodeStart = rc.Limit
	a.EchoAt = tsval
	a.Size = units.Bytes(HeaderLen)
	(*ackOut)(c).Receive(now, a)
}

func isStale(err error) bool { return errors.Is(err, nc.ErrStale) }
