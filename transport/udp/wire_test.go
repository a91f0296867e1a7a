package udp

import (
	"bytes"
	"testing"

	"github.com/cclab/cclab/netsim/packet"
)

func sampleHeaders() []Header {
	payload := bytes.Repeat([]byte{0xab}, 1450)
	return []Header{
		{Type: TypeData, Flags: FlagRetransmission, ConnID: 7, Seq: 1448 * 3, TSval: 123456, Payload: payload[:1448]},
		{Type: TypeData, Flags: FlagCoded, ConnID: 7, Seq: 1448, TSval: 1, CodeStart: 1, Coeffs: []byte{3, 4, 5}, Payload: payload[:1450]},
		{Type: TypeAck, ConnID: 7, Seq: 2896, TSval: 9, TSecr: 8, Aux: 1500, NSACK: 2,
			SACK: [packet.MaxSACK]packet.Block{{Start: 5792, End: 7240}, {Start: 10136, End: 11584}}},
		{Type: TypeAck, Flags: FlagCoded, ConnID: 7, Seq: 2896, Limit: 70},
		{Type: TypeSyn, ConnID: 7, TSval: 5, Syn: SynParams{MSS: 1448, Bytes: 600000, Window: 1 << 20, AckIntervalUs: 10000, Options: OptNoDelayedAck, CodingWindow: 64, RedundancyK: 1200}},
		{Type: TypeSynAck, ConnID: 7, TSval: 1, TSecr: 5, Window: 1 << 20},
		{Type: TypeData, Flags: FlagCWR, ConnID: 7, Seq: 1448 * 4, TSval: 3, Payload: payload[:1448]},
		{Type: TypeAck, Flags: FlagECE, ConnID: 7, Seq: 2896, NSACK: 1, SACK: [packet.MaxSACK]packet.Block{{Start: 4344, End: 5792}}},
		{Type: TypeSyn, ConnID: 7, Syn: SynParams{MSS: 1448, Window: 1 << 20, Options: OptECN | OptExactEcho}},
		{Type: TypeSynAck, Flags: FlagECE, ConnID: 7, Window: 1 << 20},
		{Type: TypeFin, ConnID: 7, Seq: 600000},
		{Type: TypeReset, ConnID: 7, Aux: ResetBusy},
	}
}

func sameHeader(a, b *Header) bool {
	return a.Type == b.Type && a.Flags == b.Flags && a.ConnID == b.ConnID && a.Seq == b.Seq &&
		a.TSval == b.TSval && a.TSecr == b.TSecr && a.NSACK == b.NSACK && a.SACK == b.SACK &&
		bytes.Equal(a.Payload, b.Payload) && bytes.Equal(a.Coeffs, b.Coeffs) && a.CodeStart == b.CodeStart &&
		a.Limit == b.Limit && a.Syn == b.Syn && a.Window == b.Window &&
		(a.Type == TypeData || a.Aux == b.Aux)
}

func TestWireRoundTrip(t *testing.T) {
	buf := make([]byte, MaxDatagram)
	for _, h := range sampleHeaders() {
		b := Encode(buf, &h)
		var got Header
		if err := Decode(b, &got); err != nil {
			t.Fatalf("%v: %v", h.Type, err)
		}
		if !sameHeader(&h, &got) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", h.Type, got, h)
		}
		// Every strict prefix is refused.
		for n := range len(b) {
			if err := Decode(b[:n], &got); err == nil {
				t.Errorf("%v: prefix of %d/%d bytes accepted", h.Type, n, len(b))
				break
			}
		}
	}
}

// TestWireECNMisuse: ECN's flags where they do not belong are malformed:
// ECE on data, a Syn or a Fin, CWR on an acknowledgement.
func TestWireECNMisuse(t *testing.T) {
	payload := make([]byte, 100)
	buf := make([]byte, MaxDatagram)
	for _, h := range []Header{
		{Type: TypeData, Flags: FlagECE, ConnID: 7, Payload: payload},
		{Type: TypeAck, Flags: FlagCWR, ConnID: 7, Seq: 100},
		{Type: TypeSynAck, Flags: FlagCWR, ConnID: 7, Window: 1 << 20},
		{Type: TypeSyn, Flags: FlagECE, ConnID: 7, Syn: SynParams{MSS: 100, Window: 1 << 20}},
		{Type: TypeFin, Flags: FlagECE, ConnID: 7},
	} {
		var got Header
		if err := Decode(Encode(buf, &h), &got); err != ErrMalformed {
			t.Errorf("%v flags %#x: %v, want malformed", h.Type, h.Flags, err)
		}
	}
}

func TestWireNoAlloc(t *testing.T) {
	buf := make([]byte, MaxDatagram)
	hs := sampleHeaders()
	var got Header
	allocs := testing.AllocsPerRun(100, func() {
		for i := range hs {
			if err := Decode(Encode(buf, &hs[i]), &got); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("encode+decode allocates %.1f times per round", allocs)
	}
}

// FuzzDecode: no input crashes the decoder, and whatever it accepts
// re-encodes to a datagram that decodes to the same header.
func FuzzDecode(f *testing.F) {
	for _, h := range sampleHeaders() {
		f.Add(Encode(nil, &h))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 0, 9})
	f.Add(make([]byte, MaxDatagram+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if err := Decode(b, &h); err != nil {
			var d Drops
			d.count(err)
			if d.Total() != 1 {
				t.Fatalf("error %v not counted", err)
			}
			return
		}
		var again Header
		if err := Decode(Encode(nil, &h), &again); err != nil {
			t.Fatalf("re-encoding of an accepted datagram refused: %v", err)
		}
		if !sameHeader(&h, &again) {
			t.Fatalf("re-encoding changed the header: %+v vs %+v", h, again)
		}
	})
}

func TestPattern(t *testing.T) {
	a := make([]byte, 3000)
	FillPattern(5, a)
	if CheckPattern(5, a) != 0 || CheckPattern(6, a) == 0 || CheckPattern(5+1448, a) == 0 {
		t.Fatal("the pattern does not tell offsets apart")
	}
	b := make([]byte, 1000)
	FillPattern(1005, b)
	if !bytes.Equal(a[1000:2000], b) {
		t.Fatal("the pattern depends on where a fill starts")
	}
}
