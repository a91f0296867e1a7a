package network

import (
	"fmt"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/transport/nc"
)

// Coding is the TCP/NC layer of a flow (Sundararajan et al., "Network
// Coding Meets TCP"): below the TCP sender, an encoder turns each segment
// TCP hands down into R random linear combinations of the segments in its
// coding window; above the TCP receiver, a decoder acknowledges every
// innovative combination with the index of the oldest unseen segment and
// delivers decoded segments in order. TCP itself is unchanged: it sees
// cumulative ACKs that advance as segments are seen, so random erasures do
// not look like congestion when R covers them.
type Coding struct {
	// Coded counts coded packets sent; Innovative and NonInnovative the
	// decoder's receipts.
	Coded, Innovative, NonInnovative int64
	// PayloadErrors counts decoded segments whose bytes differ from what
	// was sent (payload mode only; must stay 0).
	PayloadErrors int64

	f       *Flow
	enc     *nc.Encoder
	dec     *nc.Decoder
	mss     units.Bytes
	header  units.Bytes
	total   int64
	payload bool
	buf     []byte
	// adm holds new TCP segments waiting for room in the coding window.
	adm nc.Admission
}

// patternByte is the payload byte at offset j of segment k in the
// payload-checking mode: distinct across segments and positions, so a
// wrongly decoded segment cannot pass.
func patternByte(k uint64, j int) byte {
	return byte(k*131 + uint64(j)*7 + k>>8)
}

func (n *Network) addCoding(f *Flow, c *scenario.Coding, tc units.Bytes, header units.Bytes) error {
	cfg := nc.Config{Window: c.Window}
	if c.Payload {
		cfg.PayloadSize = int(tc)
	}
	enc, err := nc.NewEncoder(nc.EncoderConfig{Config: cfg, Redundancy: c.Redundancy}, n.rnd.Stream("flow/"+f.Name+"/nc"))
	if err != nil {
		return fmt.Errorf("flow %s: coding: %w", f.Name, err)
	}
	dec, err := nc.NewDecoder(cfg)
	if err != nil {
		return fmt.Errorf("flow %s: coding: %w", f.Name, err)
	}
	k := &Coding{f: f, enc: enc, dec: dec, mss: tc, header: header, total: int64(f.Bytes), payload: c.Payload}
	if c.Payload {
		k.buf = make([]byte, tc)
	}
	f.Coding = k
	f.Receiver.Silent = true
	return nil
}

// encoderSide sits between the TCP sender and the bottleneck.
type encoderSide Coding

func (e *encoderSide) Receive(now clock.Time, p *packet.Packet) {
	k := (*Coding)(e)
	n := k.f.net
	if p.Kind != packet.Data {
		n.Bottleneck.Receive(now, p) // the SYN travels uncoded
		return
	}
	idx := uint64(p.Seq) / uint64(k.mss)
	n.Pool.Put(p)
	if k.adm.Offer(k.enc, idx) {
		k.add(now, idx)
	}
}

// add hands segment idx to the encoder and sends the coded packets it
// earns.
func (k *Coding) add(now clock.Time, idx uint64) {
	n := k.f.net
	var payload []byte
	if k.payload {
		length := int64(k.mss)
		if k.total > 0 {
			length = min(length, k.total-int64(idx)*int64(k.mss))
		}
		payload = k.buf[:length]
		for j := range payload {
			payload[j] = patternByte(idx, j)
		}
	}
	count, err := k.enc.Add(idx, payload)
	if err != nil {
		panic(fmt.Sprintf("network: coding layer of %s: %v", k.f.Name, err))
	}
	for range count {
		q := n.Pool.Get()
		b := q.Body()
		c := nc.Coded{Coeffs: b.Coeffs, Payload: b.Payload}
		if err := k.enc.Next(&c); err != nil {
			n.Pool.Put(q)
			return // everything is already seen
		}
		q.Flow = k.f.Index
		q.Kind = packet.Data
		b.CodeStart, b.Coeffs, b.Payload = c.Start, c.Coeffs, c.Payload
		q.Seq = int64(c.Start) * int64(k.mss)
		q.Len = k.mss
		q.Size = k.mss + k.header + units.Bytes(c.HeaderLen())
		q.SentAt = now
		k.Coded++
		n.Bottleneck.Receive(now, q)
	}
}

// release feeds held segments to the encoder while its window has room.
func (k *Coding) release(now clock.Time) {
	for idx, ok := k.adm.Next(k.enc); ok; idx, ok = k.adm.Next(k.enc) {
		k.add(now, idx)
	}
}

// decoderSide receives coded packets at the end of the forward path.
type decoderSide Coding

func (d *decoderSide) Receive(now clock.Time, p *packet.Packet) {
	k := (*Coding)(d)
	n := k.f.net
	if p.Kind != packet.Data {
		k.f.Receiver.Receive(now, p)
		return
	}
	b := p.Body()
	c := nc.Coded{Start: b.CodeStart, Coeffs: b.Coeffs, Payload: b.Payload}
	rc, err := k.dec.Receive(&c)
	sentAt := p.SentAt
	n.Pool.Put(p)
	switch {
	case err != nil:
		// A stale combination (every packet in it already decoded and
		// forgotten): nothing to learn; still acknowledge.
		k.NonInnovative++
	case rc.Innovative:
		k.Innovative++
	default:
		k.NonInnovative++
	}
	for i := rc.DeliverFrom; i < rc.DeliverTo; i++ {
		seq := int64(i) * int64(k.mss)
		length := int64(k.mss)
		if k.total > 0 {
			length = min(length, k.total-seq)
		}
		if k.payload {
			got, ok := k.dec.Payload(i)
			if !ok || int64(len(got)) != length {
				k.PayloadErrors++
			} else {
				for j, b := range got {
					if b != patternByte(i, j) {
						k.PayloadErrors++
						break
					}
				}
			}
		}
		q := n.Pool.Get()
		q.Flow, q.Kind = k.f.Index, packet.Data
		q.Seq, q.Len, q.SentAt = seq, units.Bytes(length), sentAt
		k.f.Receiver.Receive(now, q)
	}
	// Acknowledge every received combination: the ACK number is the first
	// byte of the oldest unseen segment, and CodeStart carries the
	// decoder's limit for the encoder's back-pressure.
	a := n.Pool.Get()
	a.Flow, a.Kind = k.f.Index, packet.Ack
	a.AckNo = int64(rc.Ack) * int64(k.mss)
	if k.total > 0 {
		a.AckNo = min(a.AckNo, k.total)
	}
	a.Body().CodeStart = rc.Limit
	a.EchoAt, a.SentAt = sentAt, now
	a.Size = k.header + 8
	(*reversePath)(k.f).Receive(now, a)
}

// ackSide intercepts ACKs before the TCP sender to advance the encoder.
type ackSide Coding

func (a *ackSide) Receive(now clock.Time, p *packet.Packet) {
	k := (*Coding)(a)
	if p.Kind == packet.Ack {
		seen := (uint64(p.AckNo) + uint64(k.mss) - 1) / uint64(k.mss)
		if err := k.enc.OnAck(seen, p.Body().CodeStart); err != nil {
			panic(fmt.Sprintf("network: coding layer of %s: %v", k.f.Name, err))
		}
		k.release(now)
	}
	k.f.Sender.Receive(now, p)
}
