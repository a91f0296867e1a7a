package pcap

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// referenceCapture is the gopacket encoding of the same capture (the
// writer's implementation before it encoded the headers itself): the
// expected bytes for TestMatchesGopacket.
func referenceCapture(t *testing.T, times []clock.Time, ps []*packet.Packet) []byte {
	var out bytes.Buffer
	pw := pcapgo.NewWriterNanos(&out)
	if err := pw.WriteFileHeader(Snaplen, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	addr := func(net16 byte, idx int32) net.IP {
		i := int(idx) + 1
		return net.IPv4(10, net16, byte(i>>8), byte(i))
	}
	buf := gopacket.NewSerializeBuffer()
	for n, p := range ps {
		now := times[n]
		ip := &layers.IPv4{Version: 4, TTL: 64, Id: uint16(n)}
		switch {
		case p.ECN&packet.CE != 0:
			ip.TOS = 3
		case p.ECN&packet.ECT != 0:
			ip.TOS = 2
		}
		var l4 gopacket.SerializableLayer
		payload := int(p.Len)
		switch p.Kind {
		case packet.Datagram:
			ip.Protocol = layers.IPProtocolUDP
			ip.SrcIP, ip.DstIP = addr(3, p.Flow), addr(4, p.Flow)
			u := &layers.UDP{SrcPort: layers.UDPPort(20000 + p.Flow%40000), DstPort: 6000}
			u.SetNetworkLayerForChecksum(ip)
			l4 = u
			payload = max(0, int(p.Size)-28)
		default:
			ip.Protocol = layers.IPProtocolTCP
			tcp := &layers.TCP{Window: 65535, ECE: p.ECN&packet.ECE != 0, CWR: p.ECN&packet.CWR != 0}
			ts := make([]byte, 8)
			binary.BigEndian.PutUint32(ts[0:], uint32(now/clock.Time(time.Millisecond)))
			binary.BigEndian.PutUint32(ts[4:], uint32(p.EchoAt/clock.Time(time.Millisecond)))
			tcp.Options = append(tcp.Options,
				layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
				layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
				layers.TCPOption{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: ts})
			switch p.Kind {
			case packet.Data:
				ip.SrcIP, ip.DstIP = addr(1, p.Flow), addr(2, p.Flow)
				tcp.SrcPort, tcp.DstPort = layers.TCPPort(10000+p.Flow%50000), 5001
				tcp.Seq = uint32(p.Seq + 1)
				tcp.ACK, tcp.Ack, tcp.PSH = true, 1, true
			case packet.Syn:
				ip.SrcIP, ip.DstIP = addr(1, p.Flow), addr(2, p.Flow)
				tcp.SrcPort, tcp.DstPort = layers.TCPPort(10000+p.Flow%50000), 5001
				tcp.SYN = true
				payload = 0
			default:
				ip.SrcIP, ip.DstIP = addr(2, p.Flow), addr(1, p.Flow)
				tcp.SrcPort, tcp.DstPort = 5001, layers.TCPPort(10000+p.Flow%50000)
				tcp.Seq, tcp.ACK, tcp.Ack = 1, true, uint32(p.AckNo+1)
				if p.Kind == packet.SynAck {
					tcp.Seq, tcp.SYN = 0, true
				}
				payload = 0
				if p.NSACK > 0 {
					data := make([]byte, 8*int(p.NSACK))
					for i := range int(p.NSACK) {
						binary.BigEndian.PutUint32(data[8*i:], uint32(p.SACK[i].Start+1))
						binary.BigEndian.PutUint32(data[8*i+4:], uint32(p.SACK[i].End+1))
					}
					tcp.Options = append(tcp.Options,
						layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
						layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
						layers.TCPOption{OptionType: layers.TCPOptionKindSACK, OptionLength: uint8(2 + len(data)), OptionData: data})
				}
			}
			tcp.SetNetworkLayerForChecksum(ip)
			l4 = tcp
		}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, l4); err != nil {
			t.Fatal(err)
		}
		hdr := buf.Bytes()
		total := len(hdr) + payload
		binary.BigEndian.PutUint16(hdr[2:], uint16(min(total, 65535)))
		if p.Kind == packet.Datagram {
			binary.BigEndian.PutUint16(hdr[24:], uint16(min(8+payload, 65535)))
		}
		hdr[10], hdr[11] = 0, 0
		binary.BigEndian.PutUint16(hdr[10:], gopacket.FoldChecksum(gopacket.ComputeChecksum(hdr[:20], 0)))
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(now)).UTC(), CaptureLength: len(hdr), Length: total}
		if err := pw.WritePacket(ci, hdr); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// randomPackets draws data segments, ACKs with 0-3 SACK blocks, SYNs,
// SYN-ACKs and datagrams over the whole range of flow indices, sequence
// numbers past 2^32 and sizes past 64 KiB, with times in increasing order.
func randomPackets(r *rand.Rand, n int) ([]clock.Time, []*packet.Packet) {
	times := make([]clock.Time, n)
	ps := make([]*packet.Packet, n)
	now := clock.Time(0)
	for i := range ps {
		now += clock.Time(r.Int64N(int64(3 * time.Second)))
		times[i] = now
		p := &packet.Packet{Flow: r.Int32N(200000), Kind: packet.Kind(r.IntN(3)), EchoAt: clock.Time(r.Int64N(int64(now) + 1))}
		p.ECN = packet.ECNBits(r.IntN(16)) // ECT, CE, ECE and CWR in every combination
		p.Size = units.Bytes(r.Int64N(70000))
		p.Len = units.Bytes(r.Int64N(70000))
		p.Seq = r.Int64N(1 << 40)
		p.AckNo = r.Int64N(1 << 40)
		if p.Kind != packet.Datagram {
			p.Kind = []packet.Kind{packet.Data, packet.Ack, packet.Data, packet.Ack, packet.Syn, packet.SynAck}[r.IntN(6)]
		}
		if p.Kind == packet.Ack {
			p.NSACK = uint8(r.IntN(packet.MaxSACK + 1))
			for j := range int(p.NSACK) {
				s := r.Int64N(1 << 40)
				p.SACK[j] = packet.Block{Start: s, End: s + r.Int64N(1<<20)}
			}
		}
		ps[i] = p
	}
	return times, ps
}

// TestMatchesGopacket: the capture is byte-identical to gopacket's encoding
// of the same packets (file header, record headers, IPv4, TCP with
// timestamp and SACK options, UDP, checksums, patched lengths).
func TestMatchesGopacket(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	times, ps := randomPackets(r, 5000)
	times = append(times, times[len(times)-1]+1)
	ps = append(ps, samplePackets()...) // hand-written cases too
	for len(times) < len(ps) {
		times = append(times, times[len(times)-1]+1)
	}
	got := capture(t, times, ps)
	want := referenceCapture(t, times, ps)
	if !bytes.Equal(got, want) {
		n := 0
		for n < min(len(got), len(want)) && got[n] == want[n] {
			n++
		}
		t.Fatalf("capture differs from gopacket's at byte %d of %d (want %d bytes)", n, len(got), len(want))
	}
}

// TestFileRecords: raw records (the emulator's path) read back with
// gopacket's reader: snapshot length applied, original length and
// nanosecond times kept.
func TestFileRecords(t *testing.T) {
	var buf bytes.Buffer
	f, err := NewFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	pkts := [][]byte{bytes.Repeat([]byte{0x45}, 40), bytes.Repeat([]byte{0x46}, 1500)}
	at := []clock.Time{1, clock.Time(3*time.Second + 7)}
	for i, p := range pkts {
		if err := f.WritePacket(at[i], p, len(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeRaw || r.Snaplen() != Snaplen {
		t.Fatalf("link type %v snaplen %d, want raw and %d", r.LinkType(), r.Snaplen(), Snaplen)
	}
	for i, p := range pkts {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			t.Fatal(err)
		}
		wantCap := min(len(p), Snaplen)
		if !bytes.Equal(data, p[:wantCap]) || ci.Length != len(p) || ci.Timestamp.UnixNano() != int64(at[i]) {
			t.Errorf("record %d: %d bytes captured of %d at %d ns; want %d of %d at %d", i, len(data), ci.Length, ci.Timestamp.UnixNano(), wantCap, len(p), at[i])
		}
	}
}
