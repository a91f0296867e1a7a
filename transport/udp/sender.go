package udp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/transport/nc"
	"github.com/cclab/cclab/transport/tcp"
)

// Config configures a sender.
type Config struct {
	// TCP is the transport configuration, exactly as in the simulator: MSS,
	// transfer size (Bytes, 0 = until Duration), delayed or timer-driven
	// (AckInterval) acknowledgements, RTO bounds. Header is set to the
	// wire header length plus IP and UDP headers; RecvWindow defaults to
	// DefaultWindow and is sent to the receiver, which refuses windows
	// above its own limit.
	TCP tcp.Config
	// Duration stops a transfer after this long (required when TCP.Bytes
	// is 0; with both, whichever comes first).
	Duration time.Duration
	// MaxRetries is how many consecutive retransmission timeouts without
	// hearing from the receiver end the connection with ErrPeerVanished
	// (ErrNoAnswer if the receiver never answered) [8; 0 means the
	// default, negative is an error]: the Nth timeout gives up instead of
	// retransmitting, so N timeouts send N-1 retransmissions. With the
	// default 200 ms minimum RTO and doubling, that is about 50 seconds
	// after the peer stopped answering (less with a smaller TCP.MaxRTO).
	MaxRetries int
	// Coding, if set, puts a TCP/NC coding layer below the sender.
	Coding *Coding
}

// ECN over UDP: with TCP.ECN on (or a controller that needs ECN, which
// turns on tcp.ECNDCTCP), the Syn asks for ECN (OptECN, and OptExactEcho
// for DCTCP's echo) when the socket can set the IP header's ECN field.
// A receiver that can read the field agrees with FlagECE on its SynAck;
// then the sender's ECT segments leave as ECT(0) datagrams, CWR rides in
// the Data header, and ECE comes back in the Ack header, so the same
// tcp.Sender and tcp.Receiver run RFC 3168 (and DCTCP) over any network
// whose queues mark ECT(0) datagrams. Otherwise the connection runs
// without ECN (tcp.Sender.PeerRefusedECN), as TCP does when the SYN-ACK
// does not agree.

// Coding configures TCP/NC (transport/nc) on a connection.
type Coding struct {
	// Window is the coding window in packets.
	Window int
	// Redundancy is the coded packets sent per segment, >= 1.
	Redundancy float64
}

// DefaultWindow is the receive window a sender announces unless told
// otherwise: 4 MiB, over six times a 50 Mbit/s x 100 ms path's BDP.
const DefaultWindow units.Bytes = 4 << 20

// DefaultMaxWindow is a listener's default limit on the window it accepts.
const DefaultMaxWindow units.Bytes = 16 << 20

// DefaultMSS makes full datagrams 1500-byte IPv4 packets, the size of the
// simulator's full segments (1448 bytes of payload and 52 of TCP/IP
// headers): 1432 + 40 + 28. A larger MSS does not fit a 1500-byte MTU.
const DefaultMSS = 1500 - HeaderLen - ipUDPHeader

// ipUDPHeader is the IPv4 and UDP header bytes around each datagram.
const ipUDPHeader = 28

// ErrPeerVanished is returned when the receiver stops answering.
var ErrPeerVanished = errors.New("udp: peer stopped answering")

// ErrNoAnswer is returned (wrapped, with the address) when the handshake
// never completed: nothing answered the Syn before the transfer's
// duration ran out or MaxRetries timeouts passed. Such an error also
// matches ErrPeerVanished when it came from the timeouts.
var ErrNoAnswer = errors.New("udp: no answer")

// ErrRefused is returned (wrapped) when the receiver's host reports the
// port closed (ICMP port unreachable, ECONNREFUSED on the connected
// socket): before the handshake completed, nothing listens there; after,
// the receiver went away, and the error also matches ErrPeerVanished.
// Platforms that do not report it (Windows) fall back to the timeouts.
var ErrRefused = errors.New("udp: connection refused")

// connError is a sender's end-of-connection error that matches several
// sentinels but reads as one sentence.
type connError struct {
	msg string
	is  []error
}

func (e *connError) Error() string { return e.msg }

func (e *connError) Is(target error) bool {
	for _, t := range e.is {
		if t == target {
			return true
		}
	}
	return false
}

// MaxAckIntervalUs is the largest ACK interval the Syn can carry: the
// field is a u32 of microseconds (docs/wire.md).
const MaxAckIntervalUs = 1<<32 - 1

// MaxCodingWindow returns the largest TCP/NC coding window usable with
// payloads of mss bytes: a coded datagram carries the window's
// coefficients beside a full payload and must fit MaxDatagram, and the
// coder bounds the window (nc.MaxWindow). It is below 1 when no coding
// window fits.
func MaxCodingWindow(mss int) int {
	return min(nc.MaxWindow, MaxDatagram-HeaderLen-codingOverhead(&Coding{})-mss)
}

// SenderResult summarises a finished transfer.
type SenderResult struct {
	// ConnID is the connection identifier.
	ConnID uint64
	// Start is when the SYN was sent, End when the sender stopped, on the
	// sender's clock.
	Start, End clock.Time
	// Complete reports whether a finite transfer was fully acknowledged.
	Complete bool
	// Final is the transport's last state, counters included.
	Final tcp.FlowState
	// Drops counts received datagrams dropped, by cause.
	Drops Drops
	// SendErrors counts datagrams the socket refused to send.
	SendErrors int64
	// Datagrams counts datagrams sent.
	Datagrams int64
	// ECNAsked reports whether ECN was asked for (TCP.ECN, or a
	// controller that needs it); ECN whether the connection had it: the
	// socket could set the ECN field and the receiver agreed. Final's
	// ECNReductions counts the window reductions its echoes started.
	ECNAsked, ECN bool
}

// Sender is the sending end of a connection over UDP: a tcp.Sender, the
// simulator's, fed by a real clock and a socket. All transport state is
// owned by one event-loop goroutine (Run's); other goroutines act on it
// only through Post.
type Sender struct {
	cfg  Config
	clk  *clock.Real
	sock *socket
	tcp  *tcp.Sender
	pool packet.Pool
	id   uint64
	alg  cc.Algorithm

	hdr  Header
	rx   Header
	obuf []byte
	pbuf []byte

	coder *encoderSide
	// ecn says the connection asked for ECN (ecnAsked) and the receiver
	// agreed (ecn).
	ecnAsked, ecn bool

	rtosHeard  int64 // tcp RTO count when the receiver was last heard
	stop       chan struct{}
	stopped    bool
	err        error
	res        SenderResult
	deadline   clock.Timer
	finsLeft   int
	finT       clock.Timer
	everyTimer []clock.Timer

	addr string
	// heard says the receiver has answered (a SynAck or Ack arrived): the
	// handshake completed. refusedSeen keeps a burst of ECONNREFUSED
	// writes to one posted check.
	heard, refusedSeen bool
	// goneT ends an established connection shortly after a refusal.
	goneT clock.Timer
}

// Dial opens a UDP socket towards addr ("host:port") and returns a sender
// that will run alg over it. Nothing is sent before Run.
func Dial(addr string, alg cc.Algorithm, cfg Config) (*Sender, error) {
	if cfg.TCP.Bytes == 0 && cfg.Duration <= 0 {
		return nil, errors.New("udp: a transfer needs a size (bytes) or a duration")
	}
	if cfg.TCP.RecvWindow == 0 {
		cfg.TCP.RecvWindow = DefaultWindow
	}
	if cfg.TCP.MSS == 0 {
		cfg.TCP.MSS = DefaultMSS
	}
	if cfg.TCP.Header == 0 {
		cfg.TCP.Header = HeaderLen + ipUDPHeader
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("udp: max retries %d is negative", cfg.MaxRetries)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 8
	}
	// The Syn carries the interval in whole microseconds: a negative one
	// would wrap to about 71 minutes and one below 1 µs would read as 0
	// (per-segment ACKs), silently not what was asked.
	if a := cfg.TCP.AckInterval; a != 0 && (a < time.Microsecond || a > MaxAckIntervalUs*time.Microsecond) {
		return nil, fmt.Errorf("udp: ack interval %v out of range: 0 (off) or 1µs..%v", a, time.Duration(MaxAckIntervalUs)*time.Microsecond)
	}
	if c := cfg.Coding; c != nil && (c.Window < 1 || c.Window > MaxCodingWindow(int(cfg.TCP.MSS))) {
		return nil, fmt.Errorf("udp: coding window %d out of range 1..%d (with mss %d)", c.Window, MaxCodingWindow(int(cfg.TCP.MSS)), cfg.TCP.MSS)
	}
	cfg.TCP = cfg.TCP.WithDefaults()
	if err := cfg.TCP.Validate(); err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	if int(cfg.TCP.MSS)+HeaderLen+codingOverhead(cfg.Coding) > MaxDatagram {
		return nil, fmt.Errorf("udp: mss %d too large: a datagram holds at most %d payload bytes", cfg.TCP.MSS, MaxDatagram-HeaderLen-codingOverhead(cfg.Coding))
	}
	if cfg.TCP.RecvWindow > 1<<31 || cfg.TCP.RecvWindow < cfg.TCP.MSS {
		return nil, fmt.Errorf("udp: receive window %d out of range [mss, 2 GiB]", cfg.TCP.RecvWindow)
	}
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	s := &Sender{
		addr: addr,
		cfg:  cfg,
		clk:  clock.NewReal(),
		id:   binary.BigEndian.Uint64(idb[:]) | 1, // never 0
		alg:  alg,
		stop: make(chan struct{}),
		obuf: make([]byte, MaxDatagram),
		pbuf: make([]byte, cfg.TCP.MSS),
	}
	s.res.ConnID = s.id
	s.tcp = tcp.NewSender(cfg.TCP, 0, s.clk, &s.pool, (*wireOut)(s), alg)
	if cfg.Coding != nil && s.tcp.ECNCapable() {
		conn.Close()
		return nil, errors.New("udp: TCP/NC's coded datagrams carry no ECN and its decoder echoes none: turn ECN off, and use a controller that does not need it")
	}
	if cfg.Coding != nil {
		c, err := newEncoderSide(s, *cfg.Coding)
		if err != nil {
			conn.Close()
			return nil, err
		}
		s.coder = c
	}
	s.tcp.OnDone = func(now clock.Time) { s.finish(now, nil) }
	s.sock = newSocket(conn, s.readRefused)
	if s.tcp.ECNCapable() {
		s.res.ECNAsked = true
		if s.ecnAsked = s.sock.canSetECT(); !s.ecnAsked {
			s.tcp.PeerRefusedECN()
		}
	}
	return s, nil
}

// LocalAddr returns the sender's socket address.
func (s *Sender) LocalAddr() net.Addr { return s.sock.conn.LocalAddr() }

// Transport returns the tcp.Sender, for hooks (OnRTT, OnAck) set before
// Run and for use from callbacks running on the event loop.
func (s *Sender) Transport() *tcp.Sender { return s.tcp }

// Clock returns the sender's clock.
func (s *Sender) Clock() *clock.Real { return s.clk }

// Post runs f on the event loop; safe from any goroutine.
func (s *Sender) Post(f func(now clock.Time)) {
	s.clk.Post(func() { f(s.clk.Now()) })
}

// Every calls f on the event loop every interval while the flow runs, the
// first time one interval after the start. Call it before Run.
func (s *Sender) Every(interval time.Duration, f func(now clock.Time, t *tcp.Sender)) {
	var t clock.Timer
	var due clock.Time
	t = s.clk.NewTimer(func(now clock.Time) {
		if s.stopped {
			return
		}
		f(now, s.tcp)
		// Anchor to the schedule, not to now, so that one late step does
		// not shift every later one.
		due = due.Add(interval)
		if due <= now {
			due = now.Add(interval)
		}
		t.Reset(due)
	})
	s.everyTimer = append(s.everyTimer, t)
	s.clk.Post(func() {
		due = s.clk.Now().Add(interval)
		t.Reset(due)
	})
}

// Stop asks a running sender to stop as if its duration had elapsed; safe
// from any goroutine.
func (s *Sender) Stop() {
	s.Post(func(now clock.Time) { s.finish(now, nil) })
}

// Run performs the transfer and closes the socket. It returns when the
// transfer is complete, its duration has elapsed, ctx is cancelled (the
// result is then still valid, with ctx's error), or the connection fails.
func (s *Sender) Run(ctx context.Context) (SenderResult, error) {
	defer s.sock.close()
	s.finT = s.clk.NewTimer(s.sendFin)
	s.clk.Post(func() {
		now := s.clk.Now()
		s.res.Start = now
		if s.cfg.Duration > 0 {
			s.deadline = s.clk.NewTimer(func(now clock.Time) { s.finish(now, nil) })
			s.deadline.Reset(now.Add(s.cfg.Duration))
		}
		s.tcp.Start(now)
	})
	watch := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.Post(func(now clock.Time) { s.finish(now, ctx.Err()) })
		case <-watch:
		}
	}()
	clock.Loop(s.clk, s.stop, s.sock.in, s.handle)
	close(watch)
	return s.res, s.err
}

// finish stops the transport, records the result and sends FINs (three,
// an RTT apart, since they are not acknowledged) before stopping the loop.
func (s *Sender) finish(now clock.Time, err error) {
	if s.stopped {
		return
	}
	s.stopped = true
	s.err = err
	s.tcp.Stop()
	for _, t := range s.everyTimer {
		t.Stop()
	}
	if s.deadline != nil {
		s.deadline.Stop()
	}
	if s.goneT != nil {
		s.goneT.Stop()
	}
	s.res.End = now
	s.res.Final = s.tcp.State()
	s.res.Complete = s.tcp.Done() && s.cfg.TCP.Bytes > 0 && s.res.Final.SndUna >= int64(s.cfg.TCP.Bytes)
	if err == nil && !s.heard {
		// A duration (or Stop) ended a transfer that never started: a
		// zero-byte result with no error would read as success.
		s.err = s.noAnswer("")
	}
	if errors.Is(err, ErrPeerVanished) || errors.Is(err, errReset) || errors.Is(err, ErrRefused) {
		close(s.stop)
		return
	}
	s.finsLeft = 3
	s.sendFin(now)
}

func (s *Sender) sendFin(now clock.Time) {
	if s.finsLeft == 0 {
		return
	}
	s.finsLeft--
	s.hdr = Header{Type: TypeFin, ConnID: s.id, Seq: uint64(s.res.Final.SndUna), TSval: int64(now)}
	s.sock.setECT(false)
	s.write(Encode(s.obuf, &s.hdr))
	if s.finsLeft == 0 {
		close(s.stop)
		return
	}
	s.finT.Reset(now.Add(max(s.res.Final.SRTT, time.Millisecond)))
}

var errReset = errors.New("udp: connection reset by the receiver")

func (s *Sender) noAnswer(detail string) error {
	e := &connError{msg: fmt.Sprintf("udp: no answer from %s (is cclab recv running?)%s", s.addr, detail), is: []error{ErrNoAnswer}}
	if detail != "" {
		e.is = append(e.is, ErrPeerVanished)
	}
	return e
}

func (s *Sender) write(b []byte) {
	s.res.Datagrams++
	if _, err := s.sock.conn.Write(b); err != nil {
		s.res.SendErrors++
		if errors.Is(err, syscall.ECONNREFUSED) && !s.refusedSeen {
			// Posted, not handled here: write runs inside the tcp.Sender's
			// output path, which finish would stop under its feet.
			s.refusedSeen = true
			s.Post(s.refused)
		}
	}
}

// readRefused is the socket reader's report of ECONNREFUSED (Linux and
// the BSDs deliver the ICMP error to a blocked read on a connected
// socket); it runs on the reader goroutine.
func (s *Sender) readRefused() { s.Post(s.refused) }

// refused ends the connection on the receiver host's port-unreachable
// report. Before the handshake nothing listens there; after it, the
// receiver has gone (a process that still listened would not cause one).
func (s *Sender) refused(now clock.Time) {
	s.refusedSeen = false
	if s.stopped {
		return
	}
	if !s.heard {
		s.finish(now, &connError{msg: fmt.Sprintf("udp: connection refused by %s (no cclab recv listening there?)", s.addr), is: []error{ErrRefused}})
		return
	}
	// A receiver that was stopped sends a Reset (closed) before its port
	// closes, but the kernel reports the pending error ahead of queued
	// datagrams: give the Reset a moment to be read, so the sender says
	// why.
	if s.goneT == nil {
		s.goneT = s.clk.NewTimer(func(now clock.Time) {
			s.finish(now, &connError{msg: "udp: receiver gone (connection refused)", is: []error{ErrRefused, ErrPeerVanished}})
		})
	}
	if !s.goneT.Armed() {
		s.goneT.Reset(now.Add(min(max(2*s.tcp.State().SRTT, 10*time.Millisecond), time.Second)))
	}
}

// handle processes one received datagram on the event loop.
func (s *Sender) handle(d datagram) {
	b := s.sock.data(d)
	err := Decode(b, &s.rx)
	if err == nil && s.rx.ConnID != s.id {
		err = ErrStray
	}
	if err != nil {
		s.res.Drops.count(err)
		s.sock.release(d)
		return
	}
	h := &s.rx
	now := s.clk.Now()
	if h.TSecr < 0 || clock.Time(h.TSecr) > now {
		// An echo from the future would make a negative RTT.
		s.res.Drops.count(ErrMalformed)
		s.sock.release(d)
		return
	}
	switch h.Type {
	case TypeSynAck, TypeAck:
		s.rtosHeard = s.tcp.Stats().RTOs
		s.heard = true
		if s.stopped {
			break
		}
		p := s.pool.Get()
		p.Kind = packet.Ack
		if h.Type == TypeSynAck {
			p.Kind = packet.SynAck
		}
		p.AckNo = int64(h.Seq)
		p.EchoAt = clock.Time(h.TSecr)
		p.AckDelay = time.Duration(h.Aux) * time.Microsecond
		p.NSACK = uint8(h.NSACK)
		p.SACK = h.SACK
		if h.Type == TypeSynAck {
			s.negotiated(h.Flags&FlagECE != 0)
		} else if h.Flags&FlagECE != 0 && s.ecn {
			p.ECN = packet.ECE
		}
		if s.coder != nil && h.Type == TypeAck {
			s.coder.onAck(now, p, h)
		} else {
			s.tcp.Receive(now, p)
		}
	case TypeReset:
		reason := "protocol error"
		switch h.Aux {
		case ResetRefused:
			reason = "parameters refused (receive window, mss or coding above the receiver's limits)"
		case ResetBusy:
			reason = "receiver busy with another connection"
		case ResetClosed:
			reason = "receiver closed the connection"
		}
		s.sock.release(d)
		s.finish(now, fmt.Errorf("%w: %s", errReset, reason))
		return
	default:
		s.res.Drops.count(ErrMalformed)
	}
	s.sock.release(d)
}

// negotiated settles ECN on the first SynAck (a retransmitted Syn's
// SynAck says the same): the receiver's agreement or not.
func (s *Sender) negotiated(agreed bool) {
	if !s.ecnAsked || s.ecn || !s.tcp.ECNCapable() {
		return
	}
	if agreed {
		s.ecn, s.res.ECN = true, true
		return
	}
	s.tcp.PeerRefusedECN()
}

// wireOut encodes the tcp.Sender's packets onto the socket.
type wireOut Sender

func (w *wireOut) Receive(now clock.Time, p *packet.Packet) {
	s := (*Sender)(w)
	// The Nth timeout in a row gives up rather than retransmit: MaxRetries
	// counts timeouts, as documented, not retransmissions.
	if n := s.tcp.Stats().RTOs - s.rtosHeard; p.Retransmission && n >= int64(s.cfg.MaxRetries) {
		s.pool.Put(p)
		if !s.heard {
			s.finish(now, s.noAnswer(fmt.Sprintf(": %d retransmission timeouts in a row", n)))
			return
		}
		s.finish(now, fmt.Errorf("%w: %d retransmission timeouts in a row, last RTO %v",
			ErrPeerVanished, n, s.tcp.State().RTO))
		return
	}
	if s.coder != nil && p.Kind == packet.Data {
		s.coder.send(now, p)
		return
	}
	h := &s.hdr
	*h = Header{ConnID: s.id, TSval: int64(p.SentAt), Seq: uint64(p.Seq)}
	if p.Retransmission {
		h.Flags |= FlagRetransmission
	}
	switch p.Kind {
	case packet.Syn:
		h.Type = TypeSyn
		h.Seq = 0
		h.Syn = SynParams{
			MSS:           uint32(s.cfg.TCP.MSS),
			Bytes:         uint64(s.cfg.TCP.Bytes),
			Window:        uint32(s.cfg.TCP.RecvWindow),
			AckIntervalUs: uint32(s.cfg.TCP.AckInterval / time.Microsecond),
		}
		if s.cfg.TCP.NoDelayedAck {
			h.Syn.Options |= OptNoDelayedAck
		}
		if s.ecnAsked {
			h.Syn.Options |= OptECN
			if s.tcp.Config().ECN == tcp.ECNDCTCP {
				h.Syn.Options |= OptExactEcho
			}
		}
		if c := s.cfg.Coding; c != nil {
			h.Syn.CodingWindow = uint16(c.Window)
			h.Syn.RedundancyK = uint32(c.Redundancy*1000 + 0.5)
		}
	case packet.Data:
		h.Type = TypeData
		if s.ecn && p.ECN&packet.CWR != 0 {
			h.Flags |= FlagCWR
		}
		payload := s.pbuf[:p.Len]
		FillPattern(p.Seq, payload)
		h.Payload = payload
	default:
		s.pool.Put(p)
		return
	}
	s.sock.setECT(s.ecn && p.Kind == packet.Data && p.ECN&packet.ECT != 0)
	s.pool.Put(p)
	s.write(Encode(s.obuf, h))
}

func codingOverhead(c *Coding) int {
	if c == nil {
		return 0
	}
	return 10 + c.Window
}
