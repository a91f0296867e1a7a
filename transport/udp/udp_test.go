package udp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp/udptest"
)

func newCC(t *testing.T, name string) cc.Algorithm {
	t.Helper()
	spec, err := cc.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	params, err := spec.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	alg, err := spec.New(cc.Config{MSS: 1448, Params: params, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return alg
}

type outcome struct {
	snd  SenderResult
	serr error
	rcv  ReceiverResult
	rerr error
	fwd  udptest.Stats
	lst  *Listener
}

// transfer runs one connection through a relay with the given paths.
func transfer(t *testing.T, ccName string, cfg Config, fwd, rev udptest.Path, seed uint64) outcome {
	t.Helper()
	l, err := Listen("127.0.0.1:0", ListenConfig{Idle: 5 * time.Second, Linger: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	relay, err := udptest.New(l.Addr().String(), fwd, rev, seed)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	s, err := Dial(relay.Addr(), newCC(t, ccName), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var o outcome
	done := make(chan struct{})
	go func() {
		o.rcv, o.rerr = l.Accept(ctx)
		close(done)
	}()
	o.snd, o.serr = s.Run(ctx)
	<-done
	o.fwd, _ = relay.Stats()
	o.lst = l
	return o
}

func checkComplete(t *testing.T, o outcome, bytes int64) {
	t.Helper()
	if o.serr != nil || o.rerr != nil {
		t.Fatalf("sender error %v, receiver error %v", o.serr, o.rerr)
	}
	if !o.snd.Complete {
		t.Errorf("sender did not complete: una %d of %d", o.snd.Final.SndUna, bytes)
	}
	if o.rcv.Delivered != bytes || o.rcv.Corrupt != 0 {
		t.Errorf("receiver delivered %d of %d bytes, %d corrupt", o.rcv.Delivered, bytes, o.rcv.Corrupt)
	}
	if o.rcv.Drops.Total()-o.rcv.Drops.Stray != 0 {
		t.Errorf("receiver dropped datagrams: %+v", o.rcv.Drops)
	}
}

// TestExactlyOnceInOrder: every byte of a finite transfer reaches the
// receiver's application once, in order and intact (the pattern check
// fails on a byte at the wrong offset) under loss, reordering and
// duplication in both directions.
func TestExactlyOnceInOrder(t *testing.T) {
	const bytes = 600_000
	for _, loss := range []float64{0, 0.02, 0.05, 0.10} {
		t.Run(fmt.Sprintf("loss=%g", loss), func(t *testing.T) {
			p := udptest.Path{Loss: loss, Reorder: 0.05, Duplicate: 0.05, Delay: time.Millisecond}
			cfg := Config{TCP: tcp.Config{Bytes: bytes, MinRTO: 50 * time.Millisecond}}
			o := transfer(t, "cubic", cfg, p, p, uint64(loss*1000)+1)
			checkComplete(t, o, bytes)
			if loss > 0 && (o.fwd.Lost == 0 || o.snd.Final.Stats.Retransmissions == 0) {
				t.Errorf("relay lost %d, sender retransmitted %d: the loss was not exercised", o.fwd.Lost, o.snd.Final.Stats.Retransmissions)
			}
			if o.fwd.Duplicated > 0 && o.rcv.Duplicates == 0 {
				t.Errorf("relay duplicated %d datagrams, receiver saw no duplicate", o.fwd.Duplicated)
			}
			if !o.rcv.Fin {
				t.Errorf("receiver did not see the FIN")
			}
		})
	}
}

// TestEveryController runs a short lossy transfer with each registered
// controller, external included (at its initial window).
func TestEveryController(t *testing.T) {
	const bytes = 200_000
	for _, name := range cc.Names() {
		t.Run(name, func(t *testing.T) {
			p := udptest.Path{Loss: 0.01, Delay: time.Millisecond}
			cfg := Config{TCP: tcp.Config{Bytes: bytes, MinRTO: 50 * time.Millisecond}}
			o := transfer(t, name, cfg, p, udptest.Path{Delay: time.Millisecond}, 7)
			checkComplete(t, o, bytes)
		})
	}
}

// TestTimedAcksAndCoding runs the Mockets-style timer-driven SACK mode and
// TCP/NC coding over lossy paths.
func TestTimedAcksAndCoding(t *testing.T) {
	const bytes = 400_000
	p := udptest.Path{Loss: 0.05, Reorder: 0.02, Duplicate: 0.02, Delay: time.Millisecond}
	t.Run("ack-interval", func(t *testing.T) {
		cfg := Config{TCP: tcp.Config{Bytes: bytes, MinRTO: 50 * time.Millisecond, AckInterval: 5 * time.Millisecond}}
		o := transfer(t, "cubic", cfg, p, p, 3)
		checkComplete(t, o, bytes)
	})
	t.Run("tcp-nc", func(t *testing.T) {
		// Smaller: GF(2^8) arithmetic is slow under the race detector.
		cfg := Config{TCP: tcp.Config{Bytes: bytes / 4, MinRTO: 50 * time.Millisecond}, Coding: &Coding{Window: 64, Redundancy: 1.1}}
		o := transfer(t, "newreno", cfg, p, udptest.Path{Delay: time.Millisecond}, 4)
		checkComplete(t, o, bytes/4)
		if o.rcv.Innovative == 0 {
			t.Errorf("no innovative coded packet received: %+v", o.rcv)
		}
	})
}

// TestPeerVanishes: a sender whose receiver disappears mid-transfer stops
// with ErrPeerVanished after its retransmission back-off.
func TestPeerVanishes(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	relay, err := udptest.New(l.Addr().String(), udptest.Path{}, udptest.Path{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	cfg := Config{TCP: tcp.Config{Bytes: 50 << 20, MinRTO: 20 * time.Millisecond, MaxRTO: 80 * time.Millisecond}, MaxRetries: 5}
	s, err := Dial(relay.Addr(), newCC(t, "cubic"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _, _ = l.Accept(ctx) }()
	// The peer vanishes once the transfer is under way.
	go func() {
		time.Sleep(100 * time.Millisecond)
		relay.SetPath(true, udptest.Path{Loss: 1})
		relay.SetPath(false, udptest.Path{Loss: 1})
	}()
	start := time.Now()
	res, err := s.Run(context.Background())
	if !errors.Is(err, ErrPeerVanished) {
		t.Fatalf("got error %v, want ErrPeerVanished", err)
	}
	if res.Final.Stats.RTOs < 5 || time.Since(start) > 10*time.Second {
		t.Errorf("stopped after %d RTOs and %v", res.Final.Stats.RTOs, time.Since(start))
	}
	t.Logf("%v after %v", err, time.Since(start))
}

// TestNoReceiver: a SYN nobody answers (a host that drops it: a closed
// port is refused at once, TestRefusedDuringHandshake) ends the same way.
func TestNoReceiver(t *testing.T) {
	b := newBlackHole(t)
	cfg := Config{TCP: tcp.Config{Bytes: 1000, InitialRTO: 20 * time.Millisecond, MinRTO: 20 * time.Millisecond, MaxRTO: 40 * time.Millisecond}, MaxRetries: 3}
	s, err := Dial(b.addr(), newCC(t, "cubic"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background()); !errors.Is(err, ErrPeerVanished) || !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("got %v, want ErrPeerVanished and ErrNoAnswer", err)
	}
}

// TestRefusedWindow: a receiver refuses a window above its memory limit
// and the sender reports why.
func TestRefusedWindow(t *testing.T) {
	l, err := Listen("127.0.0.1:0", ListenConfig{MaxWindow: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { _, _ = l.Accept(ctx) }()
	s, err := Dial(l.Addr().String(), newCC(t, "cubic"), Config{TCP: tcp.Config{Bytes: 1000, RecvWindow: 2 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(ctx)
	if !errors.Is(err, errReset) {
		t.Fatalf("got %v, want a reset", err)
	}
	t.Log(err)
}

// TestHostileDatagrams sprays the receiver with garbage, stray, oversized
// and out-of-window datagrams during a transfer: they are dropped and
// counted, and the transfer completes intact.
func TestHostileDatagrams(t *testing.T) {
	const bytes = 300_000
	const window = 64 << 10
	l, err := Listen("127.0.0.1:0", ListenConfig{Linger: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := Dial(l.Addr().String(), newCC(t, "cubic"), Config{TCP: tcp.Config{Bytes: bytes, RecvWindow: window}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rres ReceiverResult
	var rerr error
	done := make(chan struct{})
	go func() { rres, rerr = l.Accept(ctx); close(done) }()

	// The attacker shares the sender's address only by connection id
	// guessing; it uses its own socket, so even a right id is stray.
	evil, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer evil.Close()
	stop := make(chan struct{})
	sprayed := make(chan int)
	go func() {
		n := 0
		buf := make([]byte, 2*MaxDatagram)
		var h Header
		for i := 0; ; i++ {
			select {
			case <-stop:
				sprayed <- n
				return
			default:
			}
			var b []byte
			switch i % 4 {
			case 0:
				b = buf[:1+i%60] // truncated
			case 1:
				b = buf[:MaxDatagram+1] // oversized
			case 2:
				h = Header{Type: TypeData, ConnID: s.id, Seq: uint64(i) * 1448 * 1000, Payload: buf[:1448]}
				b = Encode(nil, &h)
			case 3:
				h = Header{Type: TypeAck, ConnID: 99, Seq: 5}
				b = Encode(nil, &h)
			}
			_, _ = evil.Write(b)
			n++
			time.Sleep(200 * time.Microsecond)
		}
	}()
	sres, serr := s.Run(ctx)
	<-done
	close(stop)
	n := <-sprayed
	if serr != nil || rerr != nil || !sres.Complete || rres.Delivered != bytes || rres.Corrupt != 0 {
		t.Fatalf("transfer under attack: sender %v complete %v, receiver %v delivered %d corrupt %d", serr, sres.Complete, rerr, rres.Delivered, rres.Corrupt)
	}
	if rres.Drops.Total()+l.Drops.Total() == 0 || n == 0 {
		t.Fatalf("sprayed %d datagrams, none counted as dropped: %+v %+v", n, rres.Drops, l.Drops)
	}
	t.Logf("sprayed %d, dropped %+v (before the connection: %+v)", n, rres.Drops, l.Drops)
}

// TestWindowBound: a sender that ignores the window cannot make the
// receiver hold more than its window: out-of-window data is dropped.
func TestWindowBound(t *testing.T) {
	const window = 16 * 1448
	p := newHandPeer(t, ListenConfig{Idle: 300 * time.Millisecond}, 5*time.Second)
	c := p.c
	h := Header{Type: TypeSyn, ConnID: 42, Syn: SynParams{MSS: 1448, Window: window}}
	_, _ = c.Write(Encode(nil, &h))
	payload := make([]byte, 1448)
	const sent = 200
	for i := range sent {
		// Every other segment, so nothing is ever in order: all of it
		// would be held if the window did not bound it.
		seq := int64(2*i+1) * 1448
		FillPattern(seq, payload)
		h = Header{Type: TypeData, ConnID: 42, Seq: uint64(seq), Payload: payload}
		_, _ = c.Write(Encode(nil, &h))
	}
	res := p.wait()
	inWindow := int64(window/1448) / 2
	if res.Drops.OutOfWindow < sent-inWindow-1 || res.Segments > inWindow+1 {
		t.Errorf("window %d: %d segments kept, %d dropped out of window", window, res.Segments, res.Drops.OutOfWindow)
	}
}

// handPeer is a receiver listening with a ListenConfig and a plain UDP
// socket dialled to it, for tests that write the sender's datagrams by
// hand.
type handPeer struct {
	c    *net.UDPConn
	done chan struct{}
	res  ReceiverResult
}

// newHandPeer starts the receiver's Accept, which gives up after timeout;
// the test's cleanup closes the socket and the listener.
func newHandPeer(t *testing.T, cfg ListenConfig, timeout time.Duration) *handPeer {
	t.Helper()
	l, err := Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	p := &handPeer{done: make(chan struct{})}
	go func() { p.res, _ = l.Accept(ctx); close(p.done) }()
	if p.c, err = net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.c.Close() })
	return p
}

// wait returns the receiver's result once Accept has returned.
func (p *handPeer) wait() ReceiverResult {
	<-p.done
	return p.res
}
