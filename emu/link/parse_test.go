package link

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
)

// tcpSegment builds an IPv4 TCP segment with the timestamp option.
func tcpSegment(seq, ack, tsval, tsecr uint32, payload int, flags byte) []byte {
	const ihl, thl = 20, 32
	b := make([]byte, ihl+thl+payload)
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	b[9] = TCP
	binary.BigEndian.PutUint16(b[ihl:], 40000)
	binary.BigEndian.PutUint16(b[ihl+2:], 5001)
	binary.BigEndian.PutUint32(b[ihl+4:], seq)
	binary.BigEndian.PutUint32(b[ihl+8:], ack)
	b[ihl+12] = thl / 4 << 4
	b[ihl+13] = flags
	o := b[ihl+20:]
	o[0], o[1], o[2], o[3] = 1, 1, 8, 10
	binary.BigEndian.PutUint32(o[4:], tsval)
	binary.BigEndian.PutUint32(o[8:], tsecr)
	return b
}

func TestRTTFromTimestamps(t *testing.T) {
	var r rttTracker
	// Two segments in tick 100 (first at 0 ms), one in tick 101 at 1 ms.
	r.onData(tcpSegment(0, 0, 100, 0, 1448, 0x18), 0)
	r.onData(tcpSegment(1448, 0, 100, 0, 1448, 0x18), 500_000)
	r.onData(tcpSegment(2896, 0, 101, 0, 1448, 0x18), 1_000_000)
	if got := payloadLen(tcpSegment(0, 0, 1, 2, 1448, 0x18)); got != 1448 {
		t.Fatalf("payload %d", got)
	}
	// The ACK of both tick-100 segments echoes 100: RTT from the first.
	if rtt, ok := r.onAck(tcpSegment(0, 2896, 7, 100, 0, 0x10), 50_000_000); !ok || rtt != 50*time.Millisecond {
		t.Errorf("sample %v %v, want 50ms", rtt, ok)
	}
	// A duplicate ACK gives no sample (it echoes an old TSval).
	if _, ok := r.onAck(tcpSegment(0, 2896, 8, 100, 0, 0x10), 60_000_000); ok {
		t.Error("sample from a duplicate ACK")
	}
	if rtt, ok := r.onAck(tcpSegment(0, 4344, 9, 101, 0, 0x10), 61_000_000); !ok || rtt != 60*time.Millisecond {
		t.Errorf("sample %v %v, want 60ms", rtt, ok)
	}
	// An echo of a TSval never seen gives none.
	if _, ok := r.onAck(tcpSegment(0, 5000, 9, 99, 0, 0x10), 70_000_000); ok {
		t.Error("sample for an unknown TSval")
	}
}

// FuzzParse feeds arbitrary bytes to the packet parsers the forwarder runs
// on every packet: they must never panic.
func FuzzParse(f *testing.F) {
	f.Add(tcpSegment(1, 2, 3, 4, 10, 0x18))
	f.Add(tcpSegment(1, 2, 3, 4, 0, 0x10)[:30])
	f.Add([]byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0, 2, 0, 8, 0, 0})
	f.Add([]byte{0x4f})
	f.Fuzz(func(t *testing.T, b []byte) {
		ihl, proto, _, _, ok := ports(b)
		payloadLen(b)
		if !ok || proto != TCP {
			return
		}
		timestamps(b, ihl)
		var r rttTracker
		r.onData(b, 0)
		r.onAck(b, 1)
	})
}

// withSACK returns a pure ACK carrying the timestamp option and one SACK
// block.
func withSACK(ack, tsecr, left, right uint32) []byte {
	const ihl, thl = 20, 44
	b := make([]byte, ihl+thl)
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	b[9] = TCP
	binary.BigEndian.PutUint32(b[ihl+8:], ack)
	b[ihl+12] = thl / 4 << 4
	b[ihl+13] = 0x10
	o := b[ihl+20:]
	o[0], o[1], o[2], o[3] = 1, 1, 8, 10
	binary.BigEndian.PutUint32(o[8:], tsecr)
	o[12], o[13], o[14], o[15] = 1, 1, 5, 10
	binary.BigEndian.PutUint32(o[16:], left)
	binary.BigEndian.PutUint32(o[20:], right)
	return b
}

func TestRTTFromSACK(t *testing.T) {
	var r rttTracker
	for i := range uint32(5) {
		r.onData(tcpSegment(i*1448, 0, 100+i, 0, 1448, 0x18), clockMs(int(i)))
	}
	if _, ok := r.onAck(tcpSegment(0, 1448, 1, 100, 0, 0x10), clockMs(50)); !ok {
		t.Fatal("no sample from the first ACK")
	}
	// Segment 2 (1448-2896) is lost; the duplicate ACK SACKs 3 (2896-4344),
	// which entered at 2 ms.
	if rtt, ok := r.onAck(withSACK(1448, 100, 2896, 4344), clockMs(53)); !ok || rtt != 51*time.Millisecond {
		t.Errorf("SACK sample %v %v, want 51ms", rtt, ok)
	}
	// The same edge again gives nothing; a retransmitted edge neither.
	if _, ok := r.onAck(withSACK(1448, 100, 2896, 4344), clockMs(54)); ok {
		t.Error("a repeated SACK edge gave a sample")
	}
	r.onData(tcpSegment(4344, 0, 200, 0, 1448, 0x18), clockMs(55)) // retransmits 4 (4344-5792)
	if _, ok := r.onAck(withSACK(1448, 100, 2896, 5792), clockMs(60)); ok {
		t.Error("a retransmitted segment's SACK gave a sample")
	}
}

func clockMs(ms int) clock.Time { return clock.Time(ms) * clock.Time(time.Millisecond) }
