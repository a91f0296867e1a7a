package pcap

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
)

// capture writes packets at times with the Writer and returns the file,
// checking the Writer's Count.
func capture(t testing.TB, times []clock.Time, ps []*packet.Packet) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		w.Write(times[i], p)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != len(ps) {
		t.Fatalf("Count %d, want %d", w.Count(), len(ps))
	}
	return buf.Bytes()
}

// sampleCapture is samplePackets a millisecond apart.
func sampleCapture(t testing.TB) []byte {
	ps := samplePackets()
	times := make([]clock.Time, len(ps))
	for i := range times {
		times[i] = clock.Time(i+1) * 1e6
	}
	return capture(t, times, ps)
}

// gopacketSegments decodes a capture with gopacket: ReadSegments' reference.
func gopacketSegments(t *testing.T, b []byte) (segs []Segment, packets int) {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return segs, packets
		}
		if err != nil {
			t.Fatal(err)
		}
		packets++
		p := gopacket.NewPacket(data, layers.LayerTypeIPv4, gopacket.Default)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			continue
		}
		src, _ := netip.AddrFromSlice(ip.SrcIP.To4())
		dst, _ := netip.AddrFromSlice(ip.DstIP.To4())
		segs = append(segs, Segment{
			At:      ci.Timestamp,
			Src:     netip.AddrPortFrom(src, uint16(tcp.SrcPort)),
			Dst:     netip.AddrPortFrom(dst, uint16(tcp.DstPort)),
			Seq:     tcp.Seq,
			Ack:     tcp.Ack,
			Payload: max(0, int(ip.Length)-int(ip.IHL)*4-int(tcp.DataOffset)*4),
			SYN:     tcp.SYN,
			ACK:     tcp.ACK,
		})
	}
}

// TestReadSegmentsMatchesGopacket: a capture of data segments, ACKs with
// SACK blocks, SYNs, SYN-ACKs and datagrams reads back as gopacket decodes
// it (times, addresses and ports, sequence and acknowledgement numbers,
// payload lengths, flags; datagrams counted and skipped), from the writer's
// nanosecond files and from a microsecond file as tcpdump writes them.
func TestReadSegmentsMatchesGopacket(t *testing.T) {
	times, ps := randomPackets(rand.New(rand.NewPCG(3, 4)), 3000)
	nanos := capture(t, times, ps)
	// The same packets with microsecond times, through gopacket's writer.
	var micro bytes.Buffer
	mw := pcapgo.NewWriter(&micro)
	if err := mw.WriteFileHeader(Snaplen, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	r, _ := pcapgo.NewReader(bytes.NewReader(nanos))
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		ci.Timestamp = ci.Timestamp.Truncate(time.Microsecond)
		if err := mw.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range map[string][]byte{"nanoseconds": nanos, "microseconds": micro.Bytes()} {
		got, n, err := ReadSegments(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, wn := gopacketSegments(t, b)
		if n != wn || n != len(ps) || len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%s: %d packets, %d segments; gopacket %d and %d; written %d", name, n, len(got), wn, len(want), len(ps))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: segment %d\n got %+v\nwant %+v", name, i, got[i], want[i])
			}
		}
	}
}

// TestReadSegmentsRefusesBadStreams: what is not a whole capture of raw IP
// is an error saying so, never a short count.
func TestReadSegmentsRefusesBadStreams(t *testing.T) {
	good := sampleCapture(t)
	ether := append([]byte(nil), good...)
	ether[20] = 1 // Ethernet
	huge := append([]byte(nil), good[:24+16]...)
	huge[24+8], huge[24+9], huge[24+10] = 0xff, 0xff, 0xff
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":           {nil, "file header"},
		"not a capture":   {[]byte(strings.Repeat("x", 40)), "not a pcap file"},
		"ethernet":        {ether, "link type 1"},
		"cut in a record": {good[:len(good)-3], "packet 3"},
		"huge record":     {huge, "captured length"},
	} {
		if _, _, err := ReadSegments(bytes.NewReader(c.b)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// FuzzReadSegments: any bytes decode to segments or an error, never a
// panic, and never more segments than packets.
func FuzzReadSegments(f *testing.F) {
	b := sampleCapture(f)
	f.Add(b)
	f.Add(b[:30])
	f.Fuzz(func(t *testing.T, b []byte) {
		segs, packets, err := ReadSegments(bytes.NewReader(b))
		if err == nil && len(segs) > packets {
			t.Errorf("%d segments from %d packets", len(segs), packets)
		}
	})
}
