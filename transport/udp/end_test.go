package udp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/transport/tcp"
)

// blackHole is a loopback socket that reads everything and answers
// nothing: a receiver host that drops the datagrams, where a closed port
// would be refused.
type blackHole struct {
	pc   *net.UDPConn
	syns chan int
}

func newBlackHole(t *testing.T) *blackHole {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b := &blackHole{pc: pc, syns: make(chan int, 1)}
	go func() {
		n := 0
		buf := make([]byte, MaxDatagram+1)
		var h Header
		for {
			k, err := pc.Read(buf)
			if err != nil {
				b.syns <- n
				return
			}
			if Decode(buf[:k], &h) == nil && h.Type == TypeSyn {
				n++
			}
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return b
}

func (b *blackHole) addr() string { return b.pc.LocalAddr().String() }

// synsSeen closes the socket and returns the Syns it read.
func (b *blackHole) synsSeen() int {
	b.pc.Close()
	return <-b.syns
}

// TestNoAnswerIsAnError: a timed transfer whose Syn nobody answers used
// to end with a zero-byte result and no error when its duration ran out.
func TestNoAnswerIsAnError(t *testing.T) {
	b := newBlackHole(t)
	s, err := Dial(b.addr(), newCC(t, "cubic"), Config{Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(context.Background())
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), b.addr()) || !strings.Contains(err.Error(), "is cclab recv running?") {
		t.Fatalf("got %v, want ErrNoAnswer naming %s", err, b.addr())
	}
}

// TestRefusedDuringHandshake: on a closed loopback port the kernel
// reports port unreachable at once; the sender used to ignore it and
// retransmit its Syn for minutes.
func TestRefusedDuringHandshake(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Go turns off UDP port-unreachable reports on Windows")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	s, err := Dial(addr, newCC(t, "cubic"), Config{TCP: tcp.Config{Bytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	// Without the refusal the Syn is retried for minutes: fail sooner.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = s.Run(ctx)
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrPeerVanished) || !strings.Contains(err.Error(), "connection refused by "+addr) {
		t.Fatalf("got %v, want a refusal by %s", err, addr)
	}
	// The first timeout is 1 s away: the refusal must come well before.
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("refusal took %v", d)
	}
}

// TestRefusedWhenEstablished: a receiver that answered and then closed
// its socket (no Reset) is reported gone as soon as the kernel refuses,
// not after MaxRetries timeouts.
func TestRefusedWhenEstablished(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Go turns off UDP port-unreachable reports on Windows")
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, MaxDatagram+1)
		var h Header
		for {
			n, from, err := pc.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if Decode(buf[:n], &h) == nil && h.Type == TypeSyn {
				ack := Header{Type: TypeSynAck, ConnID: h.ConnID, TSecr: h.TSval, Window: h.Syn.Window}
				_, _ = pc.WriteToUDP(Encode(nil, &ack), from)
				pc.Close()
				return
			}
		}
	}()
	s, err := Dial(pc.LocalAddr().String(), newCC(t, "cubic"), Config{Duration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Run(context.Background())
	if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrPeerVanished) || !strings.Contains(err.Error(), "receiver gone") {
		t.Fatalf("got %v, want the receiver gone", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestMaxRetriesCountsTimeouts: MaxRetries N gives up at the Nth timeout
// in a row (N-1 retransmissions), as documented; it used to take N+1.
func TestMaxRetriesCountsTimeouts(t *testing.T) {
	b := newBlackHole(t)
	rto := 20 * time.Millisecond
	cfg := Config{TCP: tcp.Config{Bytes: 1000, InitialRTO: rto, MinRTO: rto, MaxRTO: rto}, MaxRetries: 3}
	s, err := Dial(b.addr(), newCC(t, "cubic"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, ErrPeerVanished) || !strings.Contains(err.Error(), "3 retransmission timeouts") {
		t.Fatalf("got %v", err)
	}
	if n := b.synsSeen(); n != 3 || res.Final.Stats.RTOs != 3 {
		t.Errorf("%d Syns sent, %d RTOs; want 3 and 3 (the original and 2 retransmissions)", n, res.Final.Stats.RTOs)
	}
}

// TestDialRefusesBadConfig: values the wire format cannot carry, or that
// would silently mean something else, are errors.
func TestDialRefusesBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Duration: time.Second, MaxRetries: -1}, "max retries"},
		{Config{Duration: time.Second, TCP: tcp.Config{AckInterval: -time.Second}}, "ack interval"},
		{Config{Duration: time.Second, TCP: tcp.Config{AckInterval: 500 * time.Nanosecond}}, "ack interval"},
		{Config{Duration: time.Second, TCP: tcp.Config{AckInterval: 2 * time.Hour}}, "ack interval"},
		{Config{Duration: time.Second, Coding: &Coding{Window: 100000, Redundancy: 1.1}}, "coding window 100000 out of range 1..4096"},
		{Config{Duration: time.Second, Coding: &Coding{Window: -1, Redundancy: 1.1}}, "coding window"},
		{Config{Duration: time.Second, TCP: tcp.Config{MSS: 8900}, Coding: &Coding{Window: 100, Redundancy: 1.1}}, "1..50"},
	} {
		if _, err := Dial("127.0.0.1:9", newCC(t, "cubic"), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.cfg, err, c.want)
		}
	}
	for _, a := range []time.Duration{time.Microsecond, MaxAckIntervalUs * time.Microsecond} {
		s, err := Dial("127.0.0.1:9", newCC(t, "cubic"), Config{Duration: time.Second, TCP: tcp.Config{AckInterval: a}})
		if err != nil {
			t.Errorf("ack interval %v: %v", a, err)
			continue
		}
		s.sock.close()
	}
}

// TestNeverIdle: a negative Idle keeps a silent sender's connection (it
// used to end it at once, ErrIdle); only cancellation ends it.
func TestNeverIdle(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenConfig{Idle: NeverIdle})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := l.Accept(ctx); done <- err }()
	c, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := Header{Type: TypeSyn, ConnID: 42, Syn: SynParams{MSS: 1448, Window: 1 << 16}}
	_, _ = c.Write(Encode(nil, &h))
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
}

// TestRefusalReported: the listener says whom it refused and why, once
// per connection however many Syns the sender sends.
func TestRefusalReported(t *testing.T) {
	type refusal struct {
		peer netip.AddrPort
		id   uint64
		why  string
	}
	var got []refusal
	p := newHandPeer(t, ListenConfig{MaxWindow: 1 << 20, OnRefuse: func(peer netip.AddrPort, id uint64, why string) {
		got = append(got, refusal{peer, id, why})
	}}, 300*time.Millisecond)
	c := p.c
	h := Header{Type: TypeSyn, ConnID: 42, Syn: SynParams{MSS: 1448, Window: 2 << 20}}
	buf := make([]byte, MaxDatagram)
	for range 3 {
		_, _ = c.Write(Encode(nil, &h))
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		var r Header
		if err != nil || Decode(buf[:n], &r) != nil || r.Type != TypeReset || r.Aux != ResetRefused {
			t.Fatalf("no refusal: %v %+v", err, r)
		}
	}
	p.wait()
	if len(got) != 1 || got[0].id != 42 || got[0].peer.String() != c.LocalAddr().String() ||
		!strings.Contains(got[0].why, "receive window 2097152 above the limit 1048576") {
		t.Errorf("reported %+v", got)
	}
}

// TestReceiverStopResets: a receiver stopped mid-transfer resets the
// connection, so its sender stops at once instead of after its
// retransmission timeouts (about 100 s by default).
func TestReceiverStopResets(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rctx, stopReceiver := context.WithCancel(context.Background())
	var rres ReceiverResult
	var rerr error
	done := make(chan struct{})
	go func() { rres, rerr = l.Accept(rctx); close(done) }()
	s, err := Dial(l.Addr().String(), newCC(t, "cubic"), Config{Duration: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		stopReceiver()
	}()
	start := time.Now()
	_, err = s.Run(context.Background())
	<-done
	if !errors.Is(err, errReset) || !strings.Contains(err.Error(), "receiver closed the connection") {
		t.Fatalf("sender: got %v, want a reset (closed)", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("sender took %v to stop", d)
	}
	if !errors.Is(rerr, context.Canceled) || rres.Delivered == 0 || rres.ConnID == 0 {
		t.Errorf("receiver: %v, delivered %d, connection %x", rerr, rres.Delivered, rres.ConnID)
	}
}

// TestLastSegmentAckedAtOnce: the ACK of the segment that completes a
// finite transfer goes out at once; with an odd segment count it used to
// wait for the 40 ms delayed-ACK timer, which added to the sender's FCT.
func TestLastSegmentAckedAtOnce(t *testing.T) {
	const mss, segs = 1000, 101 // past the initial quick ACKs, odd
	p := newHandPeer(t, ListenConfig{Linger: 50 * time.Millisecond}, 2*time.Second)
	c := p.c
	h := Header{Type: TypeSyn, ConnID: 42, Syn: SynParams{MSS: mss, Bytes: mss * segs, Window: 1 << 20}}
	_, _ = c.Write(Encode(nil, &h))
	payload := make([]byte, mss)
	var sent time.Time
	for i := range segs {
		FillPattern(int64(i*mss), payload)
		h = Header{Type: TypeData, ConnID: 42, Seq: uint64(i * mss), Payload: payload}
		sent = time.Now()
		_, _ = c.Write(Encode(nil, &h))
	}
	buf := make([]byte, MaxDatagram)
	var a Header
	for {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if Decode(buf[:n], &a) == nil && a.Type == TypeAck && a.Seq == mss*segs {
			break
		}
	}
	if d := time.Since(sent); d > 20*time.Millisecond {
		t.Errorf("final ACK %v after the last segment; want at once (the delayed-ACK timer is 40 ms)", d)
	}
	fin := Header{Type: TypeFin, ConnID: 42, Seq: mss * segs}
	_, _ = c.Write(Encode(nil, &fin))
	res := p.wait()
	if res.Delivered != mss*segs || res.Segments != segs || res.Duplicates != 0 {
		t.Errorf("delivered %d, %d segments, %d duplicates; want %d, %d, 0", res.Delivered, res.Segments, res.Duplicates, mss*segs, segs)
	}
}
