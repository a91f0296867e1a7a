package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/internal/ipecn"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/transport/tcp"
)

// ListenConfig configures a listener.
type ListenConfig struct {
	// MaxWindow is the largest receive window accepted from a sender, and
	// so the receiver's memory per connection [DefaultMaxWindow].
	MaxWindow units.Bytes
	// Idle ends a connection whose sender has been silent this long
	// [10s; 0 means the default]; a negative Idle (NeverIdle) never ends
	// one, which leaves a receiver whose sender died waiting until
	// cancelled.
	Idle time.Duration
	// Linger is how long a receiver that has every byte of a finite
	// transfer keeps acknowledging retransmissions while waiting for the
	// sender's FIN [2s].
	Linger time.Duration
	// Sink, if set, receives the in-order application data; the slice is
	// valid only during the call. By default the data is checked against
	// the built-in pattern (ReceiverResult.Corrupt).
	Sink func(off int64, p []byte)
	// OnDone, if set, is called (on the connection's goroutine) when the
	// last byte of a finite transfer has been delivered.
	OnDone func()
	// OnRefuse, if set, is called (on the accepting goroutine) when the
	// listener turns a sender away with a Reset, once per connection id:
	// why, in words, and whom. The sender learns only a reason code.
	OnRefuse func(peer netip.AddrPort, connID uint64, reason string)
}

// NeverIdle, as ListenConfig.Idle, keeps a connection however long its
// sender is silent.
const NeverIdle time.Duration = -1

// ReceiverResult summarises one served connection.
type ReceiverResult struct {
	// Peer is the sender's address; ConnID its connection identifier.
	Peer   netip.AddrPort
	ConnID uint64
	// Bytes is the total a finite transfer announced (0 for a timed one);
	// Delivered the bytes delivered in order.
	Bytes, Delivered int64
	// Start is when the SYN arrived, Done when the last byte of a finite
	// transfer was delivered (or clock.Never), End when the connection
	// ended; all on the receiver's clock.
	Start, Done, End clock.Time
	// Corrupt counts delivered bytes that differ from the pattern (with
	// the default sink): it must be 0.
	Corrupt int64
	// Segments and Duplicates count data segments received.
	Segments, Duplicates int64
	// Fin reports whether the sender closed the connection.
	Fin bool
	// Drops counts dropped datagrams, by cause.
	Drops Drops
	// Coding counts TCP/NC receipts, if the connection was coded.
	Innovative, NonInnovative int64
	// ECN reports whether the receiver agreed to the sender's ECN: it
	// asked, and this socket reads the IP header's ECN field. ECT counts
	// the data segments that arrived ECN-capable (ECT or CE) and CE those
	// a queue marked: a path that clears the field shows ECT 0.
	ECN     bool
	ECT, CE int64
}

// Listener receives connections on a UDP socket, one at a time.
type Listener struct {
	cfg  ListenConfig
	sock *socket
	// Drops counts datagrams dropped between connections.
	Drops Drops
	// refusedID is the connection id last reported to OnRefuse: a sender
	// retransmitting its Syn is told again but logged once.
	refusedID uint64
}

// Listen opens a UDP socket on addr ("host:port"; port 0 picks one).
func Listen(addr string, cfg ListenConfig) (*Listener, error) {
	if cfg.MaxWindow == 0 {
		cfg.MaxWindow = DefaultMaxWindow
	}
	if cfg.MaxWindow < 1500 || cfg.MaxWindow > 1<<31 {
		return nil, fmt.Errorf("udp: max window %d out of range [1500, 2 GiB]", cfg.MaxWindow)
	}
	if cfg.Idle == 0 {
		cfg.Idle = 10 * time.Second
	}
	if cfg.Idle < 0 {
		cfg.Idle = NeverIdle
	}
	if cfg.Linger == 0 {
		cfg.Linger = 2 * time.Second
	}
	laddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	// An unconnected socket hears no ICMP errors (without IP_RECVERR):
	// the listener has no refusal to react to.
	return &Listener{cfg: cfg, sock: newSocket(conn, nil)}, nil
}

// Addr returns the listening address.
func (l *Listener) Addr() net.Addr { return l.sock.conn.LocalAddr() }

// Close closes the socket.
func (l *Listener) Close() error {
	l.sock.close()
	return nil
}

// ErrIdle is returned when a sender falls silent before closing.
var ErrIdle = errors.New("udp: sender fell silent")

// Accept waits for a connection and serves it to its end: the sender's
// FIN, the idle timeout, or ctx's cancellation (returned as the error with
// the result so far; an open connection's sender is sent a Reset, closed,
// so that it stops at once rather than after its retransmission timeouts).
func (l *Listener) Accept(ctx context.Context) (ReceiverResult, error) {
	c := &rconn{l: l, clk: clock.NewReal(), stop: make(chan struct{})}
	c.res.Done = clock.Never
	c.obuf = make([]byte, MaxDatagram)
	c.idleT = c.clk.NewTimer(func(now clock.Time) { c.end(now, ErrIdle) })
	c.lingerT = c.clk.NewTimer(func(now clock.Time) { c.end(now, nil) })
	watch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.clk.Post(func() {
				if c.open && !c.ended {
					c.reset(c.peer, c.id, ResetClosed)
				}
				c.end(c.clk.Now(), ctx.Err())
			})
		case <-watch:
		}
	}()
	clock.Loop(c.clk, c.stop, l.sock.in, c.handle)
	close(watch)
	if c.dec != nil {
		c.res.Innovative, c.res.NonInnovative = c.dec.innovative, c.dec.nonInnovative
	} else if c.tcp != nil {
		c.res.Segments, c.res.Duplicates = c.tcp.Segments, c.tcp.Duplicates
	}
	return c.res, c.err
}

// rconn is the receiving side of one connection, owned by Accept's loop.
type rconn struct {
	l    *Listener
	clk  *clock.Real
	stop chan struct{}
	err  error
	res  ReceiverResult

	open   bool
	ended  bool
	peer   netip.AddrPort
	id     uint64
	params SynParams
	mss    int64
	tcp    *tcp.Receiver
	pool   packet.Pool
	ring   []byte
	window int64
	// delivered is the application's read offset: ring bytes below it
	// are free.
	delivered int64
	dec       *decoderSide
	// quickAcked says the ACK of the transfer's last byte was forced out
	// (at most once).
	quickAcked bool

	idleT, lingerT clock.Timer
	rx, hdr        Header
	obuf           []byte
}

func (c *rconn) drops() *Drops {
	if c.open {
		return &c.res.Drops
	}
	return &c.l.Drops
}

func (c *rconn) end(now clock.Time, err error) {
	if c.ended {
		return
	}
	c.ended = true
	c.err = err
	c.res.End = now
	c.idleT.Stop()
	c.lingerT.Stop()
	close(c.stop)
}

func (c *rconn) reply(to netip.AddrPort, b []byte) {
	_, _ = c.l.sock.conn.WriteToUDPAddrPort(b, to)
}

func (c *rconn) reset(to netip.AddrPort, id uint64, reason uint32) {
	c.hdr = Header{Type: TypeReset, ConnID: id, Aux: reason}
	c.reply(to, Encode(c.obuf, &c.hdr))
}

// refuse resets a sender the listener will not serve and tells the
// listener's owner why.
func (c *rconn) refuse(to netip.AddrPort, id uint64, code uint32, why string) {
	c.reset(to, id, code)
	if f := c.l.cfg.OnRefuse; f != nil && id != c.l.refusedID {
		c.l.refusedID = id
		f(to, id, why)
	}
}

func (c *rconn) handle(d datagram) {
	defer c.l.sock.release(d)
	if c.ended {
		return
	}
	err := Decode(c.l.sock.data(d), &c.rx)
	if err != nil {
		c.drops().count(err)
		return
	}
	h := &c.rx
	now := c.clk.Now()
	if !c.open {
		if h.Type != TypeSyn {
			c.drops().count(ErrStray)
			return
		}
		if !c.accept(now, d.from, h) {
			return
		}
	} else if h.ConnID != c.id || d.from != c.peer {
		c.res.Drops.count(ErrStray)
		if h.Type == TypeSyn && h.ConnID != c.id {
			c.refuse(d.from, h.ConnID, ResetBusy, fmt.Sprintf("busy with connection %016x from %s", c.id, c.peer))
		}
		return
	}
	if c.l.cfg.Idle > 0 {
		c.idleT.Reset(now.Add(c.l.cfg.Idle))
	}
	switch h.Type {
	case TypeSyn:
		p := c.pool.Get()
		p.Kind = packet.Syn
		p.SentAt = clock.Time(h.TSval)
		c.tcp.Receive(now, p)
	case TypeData:
		if c.dec != nil {
			c.dec.receive(now, h)
			return
		}
		seq, n := int64(h.Seq), int64(len(h.Payload))
		if !c.segmentOK(seq, n) {
			c.res.Drops.count(ErrMalformed)
			return
		}
		c.data(now, seq, h.Payload, clock.Time(h.TSval), d.ecn, h.Flags)
	case TypeFin:
		c.res.Fin = true
		c.end(now, nil)
	default:
		c.res.Drops.count(ErrMalformed)
	}
}

// segmentOK checks a data segment's boundaries: the sender never changes
// them (MSS-aligned, full-sized but for a finite transfer's last), which
// bounds the receiver's out-of-order bookkeeping to window/MSS blocks.
func (c *rconn) segmentOK(seq, n int64) bool {
	if seq%c.mss != 0 {
		return false
	}
	if total := int64(c.params.Bytes); total > 0 {
		return seq+n <= total && (n == c.mss || seq+n == total)
	}
	return n == c.mss
}

// ecnBits returns a data segment's ECN bits for the tcp.Receiver: the IP
// header's codepoint and the header's CWR, on an ECN connection.
func (c *rconn) ecnBits(codepoint ipecn.Codepoint, flags uint8) packet.ECNBits {
	if !c.res.ECN {
		return 0
	}
	b := packet.ECNFromField(uint8(codepoint))
	if b&packet.ECT != 0 {
		c.res.ECT++
	}
	if b&packet.CE != 0 {
		c.res.CE++
	}
	if flags&FlagCWR != 0 {
		b |= packet.CWR
	}
	return b
}

// data hands one segment to the tcp.Receiver after copying its new bytes
// into the reassembly ring; bytes beyond the window are dropped first.
func (c *rconn) data(now clock.Time, seq int64, payload []byte, tsval clock.Time, codepoint ipecn.Codepoint, flags uint8) {
	end := seq + int64(len(payload))
	rcvNxt := c.tcp.RcvNxt()
	if end > rcvNxt+c.window {
		c.res.Drops.count(ErrOutOfOrder)
		return
	}
	if end > rcvNxt {
		from := max(seq, rcvNxt)
		c.ringWrite(from, payload[from-seq:])
	}
	c.segment(now, seq, int64(len(payload)), tsval, c.ecnBits(codepoint, flags))
	if total := int64(c.params.Bytes); total > 0 && c.tcp.RcvNxt() == total && !c.quickAcked && c.params.AckIntervalUs == 0 {
		// The transfer is complete, and an ACK the delayed-ACK timer holds
		// (an odd segment count leaves the last one alone) would add 40 ms
		// to the sender's FCT for nothing. Linux quick-ACKs a FIN; here
		// the Syn's size says this was the last byte.
		c.quickAcked = true
		c.tcp.Flush(now)
	}
}

// segment hands one data segment to the tcp.Receiver.
func (c *rconn) segment(now clock.Time, seq, n int64, tsval clock.Time, ecn packet.ECNBits) {
	p := c.pool.Get()
	p.Kind = packet.Data
	p.Seq = seq
	p.Len = units.Bytes(n)
	p.SentAt = tsval
	p.ECN = ecn
	c.tcp.Receive(now, p)
}

func (c *rconn) ringWrite(off int64, b []byte) {
	for len(b) > 0 {
		i := off % c.window
		n := copy(c.ring[i:], b)
		b = b[n:]
		off += int64(n)
	}
}

// deliver passes n in-order bytes from the ring to the sink.
func (c *rconn) deliver(now clock.Time, n units.Bytes) {
	left := int64(n)
	for left > 0 {
		i := c.delivered % c.window
		k := min(left, c.window-i)
		p := c.ring[i : i+k]
		if c.l.cfg.Sink != nil {
			c.l.cfg.Sink(c.delivered, p)
		} else {
			c.res.Corrupt += CheckPattern(c.delivered, p)
		}
		c.delivered += k
		left -= k
	}
	c.res.Delivered = c.delivered
}

// accept opens the connection for a SYN whose parameters are acceptable.
func (c *rconn) accept(now clock.Time, from netip.AddrPort, h *Header) bool {
	p := h.Syn
	maxMSS := uint32(MaxDatagram - HeaderLen)
	if p.CodingWindow > 0 {
		maxMSS -= 10 + uint32(p.CodingWindow)
	}
	why := ""
	switch {
	case p.MSS < 64 || p.MSS > maxMSS:
		why = fmt.Sprintf("mss %d out of range 64..%d", p.MSS, maxMSS)
	case p.Window < p.MSS:
		why = fmt.Sprintf("receive window %d below its mss %d", p.Window, p.MSS)
	case int64(p.Window) > int64(c.l.cfg.MaxWindow):
		why = fmt.Sprintf("receive window %d above the limit %d (max window)", p.Window, c.l.cfg.MaxWindow)
	case p.Bytes > 1<<62:
		why = fmt.Sprintf("transfer size %d above 2^62", p.Bytes)
	case p.CodingWindow > 0 && p.RedundancyK < 1000:
		why = fmt.Sprintf("coding redundancy %.3f below 1", float64(p.RedundancyK)/1000)
	}
	if why != "" {
		c.l.Drops.count(ErrMalformed)
		c.refuse(from, h.ConnID, ResetRefused, why)
		return false
	}
	c.open = true
	c.peer, c.id, c.params = from, h.ConnID, p
	c.mss = int64(p.MSS)
	c.window = int64(p.Window)
	c.ring = make([]byte, c.window)
	c.res.Peer, c.res.ConnID, c.res.Bytes, c.res.Start = from, h.ConnID, int64(p.Bytes), now
	cfg := tcp.Config{
		MSS:          units.Bytes(p.MSS),
		Header:       HeaderLen + ipUDPHeader,
		Bytes:        units.Bytes(p.Bytes),
		NoDelayedAck: p.Options&OptNoDelayedAck != 0,
		AckInterval:  time.Duration(p.AckIntervalUs) * time.Microsecond,
	}
	if p.Options&OptECN != 0 && c.l.sock.ecnRecv && p.CodingWindow == 0 {
		c.res.ECN = true
		cfg.ECN = tcp.ECNRFC3168
		if p.Options&OptExactEcho != 0 { // meaningless without OptECN
			cfg.ECN = tcp.ECNDCTCP
		}
	}
	c.tcp = tcp.NewReceiver(cfg, 0, c.clk, &c.pool, (*ackOut)(c))
	c.tcp.OnDeliver = c.deliver
	c.tcp.OnDone = func(now clock.Time) {
		c.res.Done = now
		c.lingerT.Reset(now.Add(c.l.cfg.Linger))
		if c.l.cfg.OnDone != nil {
			c.l.cfg.OnDone()
		}
	}
	if p.CodingWindow > 0 {
		dec, err := newDecoderSide(c, int(p.CodingWindow))
		if err != nil {
			c.open = false
			c.l.Drops.count(ErrMalformed)
			c.refuse(from, h.ConnID, ResetRefused, err.Error())
			return false
		}
		c.dec = dec
		c.tcp.Silent = true
	}
	return true
}

// ackOut encodes the tcp.Receiver's acknowledgements onto the socket.
type ackOut rconn

func (a *ackOut) Receive(now clock.Time, p *packet.Packet) {
	c := (*rconn)(a)
	h := &c.hdr
	*h = Header{ConnID: c.id, Seq: uint64(p.AckNo), TSval: int64(now), TSecr: int64(p.EchoAt)}
	switch p.Kind {
	case packet.SynAck:
		h.Type = TypeSynAck
		h.Seq = 0
		h.Window = uint32(c.window)
		if c.res.ECN {
			h.Flags |= FlagECE
		}
	case packet.Ack:
		h.Type = TypeAck
		h.Aux = uint32(min(p.AckDelay/time.Microsecond, 1<<32-1))
		h.NSACK = int(p.NSACK)
		h.SACK = p.SACK
		if p.ECN&packet.ECE != 0 {
			h.Flags |= FlagECE
		}
		if p.Kind == packet.Ack && c.dec != nil {
			h.Flags |= FlagCoded
			h.Limit = p.Body().CodeStart
		}
	default:
		c.pool.Put(p)
		return
	}
	c.pool.Put(p)
	c.reply(c.peer, Encode(c.obuf, h))
}
