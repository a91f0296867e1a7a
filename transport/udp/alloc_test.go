package udp

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/internal/ipecn"
	"github.com/cclab/cclab/transport/tcp"
)

// TestReceivePathNoAlloc: once a connection is open, receiving a data
// segment (decode, reassembly, the tcp.Receiver, the pattern check, the
// encoded ACK written to the socket) allocates nothing, with ECN too (a
// CE mark every tenth segment, echoed).
func TestReceivePathNoAlloc(t *testing.T) {
	for _, ecn := range []bool{false, true} {
		t.Run(fmt.Sprintf("ecn=%v", ecn), func(t *testing.T) { receivePathNoAlloc(t, ecn) })
	}
}

func receivePathNoAlloc(t *testing.T, ecn bool) {
	l, err := Listen("127.0.0.1:0", ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &rconn{l: l, clk: clock.NewReal(), stop: make(chan struct{}), obuf: make([]byte, MaxDatagram)}
	c.res.Done = clock.Never
	c.idleT = c.clk.NewTimer(func(clock.Time) {})
	c.lingerT = c.clk.NewTimer(func(clock.Time) {})
	peer := netip.MustParseAddrPort("127.0.0.1:9")
	buf := make([]byte, MaxDatagram)
	var cp ipecn.Codepoint
	feed := func(h *Header) {
		b := Encode(buf, h)
		i := <-l.sock.free
		n := copy(l.sock.bufs[i], b)
		c.handle(datagram{buf: i, n: int32(n), ecn: cp, from: peer})
	}
	opts := uint8(OptNoDelayedAck)
	if ecn {
		opts |= OptECN
	}
	feed(&Header{Type: TypeSyn, ConnID: 5, Syn: SynParams{MSS: 1432, Window: 1 << 20, Options: opts}})
	payload := make([]byte, 1432)
	seq := int64(0)
	next := func() {
		FillPattern(seq, payload)
		cp = ipecn.NotECT
		if ecn {
			cp = ipecn.ECT0
			if seq/1432%10 == 0 {
				cp = ipecn.CE
			}
		}
		feed(&Header{Type: TypeData, ConnID: 5, Seq: uint64(seq), Payload: payload})
		seq += 1432
	}
	for range 100 { // warm the packet pool
		next()
	}
	if a := testing.AllocsPerRun(500, next); a != 0 {
		t.Errorf("%.2f allocations per received segment", a)
	}
	if c.res.Corrupt != 0 || c.delivered != seq {
		t.Fatalf("delivered %d of %d, %d corrupt", c.delivered, seq, c.res.Corrupt)
	}
	// Segments 0, 10, 20, ... were CE.
	if segs := seq / 1432; ecn && ipecn.Supported && (c.res.CE != (segs+9)/10 || c.res.ECT != segs) {
		t.Fatalf("%d CE and %d ECT segments counted of %d", c.res.CE, c.res.ECT, segs)
	}
}

// TestSendPathNoAlloc: in steady state, an arriving ACK (decode, the
// tcp.Sender's scoreboard and controller, the data segments it releases,
// encoded with their pattern payload and written) allocates nothing, with
// ECN too (an echo every tenth ACK).
func TestSendPathNoAlloc(t *testing.T) {
	for _, ecn := range []bool{false, true} {
		t.Run(fmt.Sprintf("ecn=%v", ecn), func(t *testing.T) { sendPathNoAlloc(t, ecn) })
	}
}

func sendPathNoAlloc(t *testing.T, ecn bool) {
	sink, err := Listen("127.0.0.1:0", ListenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	cfg := Config{TCP: tcp.Config{Bytes: 1 << 40}}
	if ecn {
		cfg.TCP.ECN = tcp.ECNRFC3168
	}
	s, err := Dial(sink.Addr().String(), newCC(t, "fixed"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.sock.close()
	s.finT = s.clk.NewTimer(s.sendFin)
	peer := netip.MustParseAddrPort("127.0.0.1:9")
	buf := make([]byte, MaxDatagram)
	feed := func(h *Header) {
		b := Encode(buf, h)
		i := <-s.sock.free
		n := copy(s.sock.bufs[i], b)
		s.handle(datagram{buf: i, n: int32(n), from: peer})
	}
	s.tcp.Start(s.clk.Now())
	sa := Header{Type: TypeSynAck, ConnID: s.id, TSecr: 1, Window: 1 << 20}
	if ecn {
		sa.Flags = FlagECE
	}
	feed(&sa)
	ack := int64(0)
	next := func() {
		ack += int64(s.cfg.TCP.MSS)
		h := Header{Type: TypeAck, ConnID: s.id, Seq: uint64(ack), TSecr: int64(s.clk.Now())}
		if ecn && ack/int64(s.cfg.TCP.MSS)%10 == 0 {
			h.Flags = FlagECE
		}
		feed(&h)
	}
	for range 200 {
		next()
	}
	sent := s.tcp.Stats().SegmentsSent
	if a := testing.AllocsPerRun(500, next); a != 0 {
		t.Errorf("%.2f allocations per ACK", a)
	}
	if s.tcp.Stats().SegmentsSent-sent < 500 {
		t.Fatalf("ACKs released %d segments", s.tcp.Stats().SegmentsSent-sent)
	}
	if ecn && ipecn.Supported && (!s.ecn || s.tcp.ECNReductions() == 0) {
		t.Fatalf("ECN negotiated %v, %d reductions", s.ecn, s.tcp.ECNReductions())
	}
}
