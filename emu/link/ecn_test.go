package link

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cclab/cclab/netsim/packet"
)

// ipChecksum computes an IPv4 header's checksum from scratch (RFC 791),
// the field itself counted as zero.
func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// headerLen is the IPv4 header length b claims, bounded by len(b).
func headerLen(b []byte) int { return min(int(b[0]&0x0f)*4, len(b)) }

// withChecksum sets b's header checksum to the correct one.
func withChecksum(b []byte) []byte {
	binary.BigEndian.PutUint16(b[10:], ipChecksum(b[:headerLen(b)]))
	return b
}

// checkSetCE runs setCE on a copy of b (an IPv4 packet with a correct
// header checksum) and checks the result: an ECT packet becomes CE, with
// the checksum a recomputation gives and every other byte unchanged;
// Not-ECT and CE packets are left alone.
func checkSetCE(t *testing.T, b []byte) {
	t.Helper()
	got := bytes.Clone(b)
	changed := setCE(got)
	field := b[1] & ecnMask
	if want := field == 0b01 || field == 0b10; changed != want {
		t.Fatalf("ECN field %02b: setCE reported %v, want %v", field, changed, want)
	}
	if !changed {
		if !bytes.Equal(got, b) {
			t.Fatalf("ECN field %02b: setCE changed the packet without saying so:\n%x\n%x", field, b, got)
		}
		return
	}
	if got[1]&ecnMask != ecnCE || got[1]&^ecnMask != b[1]&^ecnMask {
		t.Fatalf("second byte %08b -> %08b, want only the ECN bits set to 11", b[1], got[1])
	}
	if c, want := binary.BigEndian.Uint16(got[10:]), ipChecksum(got[:headerLen(got)]); c != want {
		t.Fatalf("checksum %#04x after the rewrite, recomputed %#04x", c, want)
	}
	for i := range b {
		if i != 1 && i != 10 && i != 11 && got[i] != b[i] {
			t.Fatalf("byte %d changed: %#02x -> %#02x", i, b[i], got[i])
		}
	}
}

func TestSetCE(t *testing.T) {
	for _, tos := range []byte{0x00, 0x01, 0x02, 0x03, 0xb8, 0xb9, 0xba, 0xbb, 0xfe, 0xfd} {
		b := tcpSegment(1, 2, 3, 4, 100, 0x18)
		b[1] = tos
		b[4], b[5], b[8] = 0x12, 0x34, 64 // an ID and a TTL
		copy(b[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
		checkSetCE(t, withChecksum(b))
		wantBits := map[byte]packet.ECNBits{0: 0, 1: packet.ECT, 2: packet.ECT, 3: packet.ECT | packet.CE}[tos&3]
		if got := ecnBits(b); got != wantBits {
			t.Errorf("TOS %#02x: ecnBits %v, want %v", tos, got, wantBits)
		}
	}
	// The checksum's corner values: a header whose correct checksum is
	// 0x0000 before or after the rewrite.
	for _, target := range []uint16{0x0000, 0x0003, 0xfffc} {
		b := tcpSegment(1, 2, 3, 4, 0, 0x10)[:20]
		b[1] = 0x02
		// Search the ID that makes the checksum target.
		for id := range 1 << 16 {
			binary.BigEndian.PutUint16(b[4:], uint16(id))
			if ipChecksum(b) == target {
				break
			}
		}
		if ipChecksum(b) != target {
			t.Fatalf("could not build a header with checksum %#04x", target)
		}
		checkSetCE(t, withChecksum(b))
	}
	// Too short, not IPv4 or a header length under 20 bytes: untouched.
	for _, b := range [][]byte{nil, {0x45, 0x02}, append([]byte{0x65, 0x02}, make([]byte, 38)...), append([]byte{0x44, 0x02}, make([]byte, 38)...)} {
		c := bytes.Clone(b)
		if setCE(c) || !bytes.Equal(c, b) {
			t.Errorf("%x: rewritten", b)
		}
	}
}

// TestMarkCE: the forwarder writes a queue's mark into the header and
// counts it once; an unmarked packet, and one that arrived CE, keep
// their header and are not counted.
func TestMarkCE(t *testing.T) {
	var pool packet.Pool
	var path Path
	mk := func(tos byte) *packet.Packet {
		p := pool.Get()
		b := tcpSegment(1, 2, 3, 4, 100, 0x18)
		b[1] = tos
		p.Body().Payload = withChecksum(b)
		p.ECN = ecnBits(b)
		return p
	}
	ect := mk(0x02)
	if !ect.Mark() {
		t.Fatal("an ECT packet refused its mark")
	}
	markCE(&path, ect)
	if b := ect.Body().Payload; b[1]&ecnMask != ecnCE || ipChecksum(b[:20]) != binary.BigEndian.Uint16(b[10:]) || path.Marked != 1 {
		t.Fatalf("marked ECT packet: TOS %#02x, checksum %#04x (want %#04x), %d marks", b[1], binary.BigEndian.Uint16(b[10:]), ipChecksum(b[:20]), path.Marked)
	}
	unmarked := mk(0x01)
	markCE(&path, unmarked)
	notECT := mk(0x00)
	if notECT.Mark() {
		t.Fatal("a Not-ECT packet took a mark")
	}
	markCE(&path, notECT)
	arrivedCE := mk(0x03)
	arrivedCE.Mark()
	markCE(&path, arrivedCE)
	if unmarked.Body().Payload[1] != 0x01 || notECT.Body().Payload[1] != 0 || arrivedCE.Body().Payload[1] != 0x03 || path.Marked != 1 {
		t.Fatalf("TOS %#02x %#02x %#02x, %d marks: want 01 00 03 and 1 mark", unmarked.Body().Payload[1], notECT.Body().Payload[1], arrivedCE.Body().Payload[1], path.Marked)
	}
}

// FuzzSetCE feeds arbitrary bytes to the ECN reader and rewriter: they
// must never panic, must change nothing but the ECN bits and the
// checksum, and on a header with a correct checksum must leave the
// checksum a recomputation gives.
func FuzzSetCE(f *testing.F) {
	f.Add(withChecksum(tcpSegment(1, 2, 3, 4, 10, 0x18)), true)
	b := tcpSegment(1, 2, 3, 4, 0, 0x10)
	b[1] = 0x02
	f.Add(withChecksum(b), true)
	f.Add([]byte{0x46, 0x01, 0, 24, 0, 0, 0, 0, 64, 6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 0}, false)
	f.Add([]byte{0x45}, false)
	f.Fuzz(func(t *testing.T, b []byte, fix bool) {
		ecnBits(b)
		if len(b) < 20 || b[0]>>4 != 4 || b[0]&0x0f < 5 {
			c := bytes.Clone(b)
			if setCE(c) || !bytes.Equal(b, c) {
				t.Fatalf("%x: rewrote a packet that is not IPv4", b)
			}
			return
		}
		if fix {
			checkSetCE(t, withChecksum(b))
			return
		}
		c := bytes.Clone(b)
		setCE(c)
		for i := range b {
			if i != 1 && i != 10 && i != 11 && c[i] != b[i] {
				t.Fatalf("byte %d changed", i)
			}
		}
		if c[1]&^ecnMask != b[1]&^ecnMask {
			t.Fatalf("second byte %08b -> %08b", b[1], c[1])
		}
	})
}
