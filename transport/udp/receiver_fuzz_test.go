package udp

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/internal/ipecn"
)

// FuzzReceiver feeds a receiver arbitrary datagrams after a valid SYN that
// asks for ECN, from its sender's address and from another, with any ECN
// codepoint (a length prefix's top two bits): nothing panics, every
// datagram is either used or counted as dropped, delivery never passes
// what arrived, the reassembly memory stays the window's, and no more
// segments are counted CE than ECN-capable.
func FuzzReceiver(f *testing.F) {
	syn := Header{Type: TypeSyn, ConnID: 9, Syn: SynParams{MSS: 100, Bytes: 5000, Window: 1000, Options: OptECN}}
	seedData := func(hs ...Header) []byte {
		var out []byte
		for _, h := range hs {
			b := Encode(nil, &h)
			out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
			out = append(out, b...)
		}
		return out
	}
	payload := make([]byte, 100)
	FillPattern(0, payload)
	f.Add(seedData(Header{Type: TypeData, ConnID: 9, Seq: 0, Payload: payload}))
	f.Add(seedData(Header{Type: TypeData, ConnID: 9, Seq: 300, Payload: payload}, Header{Type: TypeData, ConnID: 9, Seq: 9000, Payload: payload}))
	f.Add(seedData(Header{Type: TypeFin, ConnID: 9, Seq: 5000}))
	f.Add([]byte{0, 3, 1, 2, 3})
	ce := seedData(Header{Type: TypeData, ConnID: 9, Seq: 0, Payload: payload}, Header{Type: TypeData, Flags: FlagCWR, ConnID: 9, Seq: 100, Payload: payload})
	ce[0] |= 0xc0 // the first segment CE
	f.Add(ce)
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Listen("127.0.0.1:0", ListenConfig{})
		if err != nil {
			t.Skip(err)
		}
		defer l.Close()
		c := &rconn{l: l, clk: clock.NewReal(), stop: make(chan struct{}), obuf: make([]byte, MaxDatagram)}
		c.res.Done = clock.Never
		c.idleT = c.clk.NewTimer(func(clock.Time) {})
		c.lingerT = c.clk.NewTimer(func(clock.Time) {})
		peer := netip.MustParseAddrPort("127.0.0.1:9")
		other := netip.MustParseAddrPort("127.0.0.1:10")
		feed := func(b []byte, from netip.AddrPort, cp ipecn.Codepoint) {
			i := <-l.sock.free
			n := copy(l.sock.bufs[i], b)
			c.handle(datagram{buf: i, n: int32(n), ecn: cp, from: from})
		}
		feed(Encode(nil, &syn), peer, ipecn.NotECT)
		if !c.open {
			t.Fatal("valid SYN refused")
		}
		fed, syns := int64(0), int64(0)
		for k := 0; len(data) >= 2 && !c.ended; k++ {
			n := int(binary.BigEndian.Uint16(data) & 0x3fff)
			cp := ipecn.Codepoint(data[0] >> 6)
			data = data[2:]
			n = min(n, len(data))
			from := peer
			if k%5 == 4 {
				from = other
			}
			var h Header
			if Decode(data[:n], &h) == nil && h.Type == TypeSyn && h.ConnID == syn.ConnID && from == peer {
				syns++ // answered with a SYN-ACK, not a segment
			}
			feed(data[:n], from, cp)
			data = data[n:]
			fed++
		}
		if got := int64(len(c.ring)); got != int64(syn.Syn.Window) {
			t.Fatalf("ring of %d bytes for a window of %d", got, syn.Syn.Window)
		}
		if c.delivered > c.tcp.RcvNxt() || c.tcp.RcvNxt() > int64(syn.Syn.Bytes) {
			t.Fatalf("delivered %d, rcvNxt %d, transfer %d", c.delivered, c.tcp.RcvNxt(), syn.Syn.Bytes)
		}
		if c.res.CE > c.res.ECT || c.res.ECT > c.tcp.Segments {
			t.Fatalf("%d CE of %d ECN-capable of %d segments", c.res.CE, c.res.ECT, c.tcp.Segments)
		}
		if c.tcp.Segments+c.res.Drops.Total()+btoi(c.res.Fin)+syns < fed {
			t.Fatalf("%d datagrams fed, %d segments, %d dropped", fed, c.tcp.Segments, c.res.Drops.Total())
		}
	})
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
