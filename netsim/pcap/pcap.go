// Package pcap writes simulated packets as a pcap capture that Wireshark and
// tshark open: each packet gets synthesised IPv4 and TCP (or UDP) headers
// with its flow's addresses and ports, sequence and acknowledgement numbers,
// timestamps and SACK options. Payloads are not stored (the capture is
// truncated to the headers, as with a small snaplen), which keeps files
// small while the original length stays visible to the analyser.
package pcap

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
)

// snaplen covers IPv4 (20) + TCP with options (60).
const snaplen = 80

// Writer writes packets to a pcap stream. Simulated time 0 is written as
// the Unix epoch, so Wireshark's relative times equal simulated times.
type Writer struct {
	bw  *bufio.Writer
	w   *pcapgo.Writer
	buf gopacket.SerializeBuffer
	err error
	n   int
}

// NewWriter writes the pcap file header (nanosecond timestamps, raw IPv4
// link type) and returns a writer.
func NewWriter(out io.Writer) (*Writer, error) {
	bw := bufio.NewWriterSize(out, 1<<16)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(snaplen, layers.LinkTypeRaw); err != nil {
		return nil, err
	}
	return &Writer{bw: bw, w: w, buf: gopacket.NewSerializeBuffer()}, nil
}

// Count returns the number of packets written.
func (w *Writer) Count() int { return w.n }

// addr returns the address of a flow endpoint: senders in 10.1/16,
// receivers in 10.2/16 (UDP sources in 10.3 and 10.4).
func addr(net16 byte, idx int32) net.IP {
	i := int(idx) + 1
	return net.IPv4(10, net16, byte(i>>8), byte(i))
}

// Write records p as seen at now. Errors are sticky and returned by Close.
func (w *Writer) Write(now clock.Time, p *packet.Packet) {
	if w.err != nil {
		return
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Id: uint16(w.n)}
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
		t := &layers.TCP{Window: 65535, DataOffset: 0}
		ts := make([]byte, 8)
		binary.BigEndian.PutUint32(ts[0:], uint32(now/clock.Time(time.Millisecond)))
		binary.BigEndian.PutUint32(ts[4:], uint32(p.EchoAt/clock.Time(time.Millisecond)))
		t.Options = append(t.Options,
			layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
			layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
			layers.TCPOption{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: ts})
		if p.Kind == packet.Data {
			ip.SrcIP, ip.DstIP = addr(1, p.Flow), addr(2, p.Flow)
			t.SrcPort, t.DstPort = layers.TCPPort(10000+p.Flow%50000), 5001
			t.Seq = uint32(p.Seq + 1) // ISN 0, SYN takes one
			t.ACK, t.Ack = true, 1
			t.PSH = true
		} else {
			ip.SrcIP, ip.DstIP = addr(2, p.Flow), addr(1, p.Flow)
			t.SrcPort, t.DstPort = 5001, layers.TCPPort(10000+p.Flow%50000)
			t.Seq = 1
			t.ACK, t.Ack = true, uint32(p.AckNo+1)
			payload = 0
			if p.NSACK > 0 {
				data := make([]byte, 8*int(p.NSACK))
				for i := range int(p.NSACK) {
					binary.BigEndian.PutUint32(data[8*i:], uint32(p.SACK[i].Start+1))
					binary.BigEndian.PutUint32(data[8*i+4:], uint32(p.SACK[i].End+1))
				}
				t.Options = append(t.Options,
					layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
					layers.TCPOption{OptionType: layers.TCPOptionKindNop, OptionLength: 1},
					layers.TCPOption{OptionType: layers.TCPOptionKindSACK, OptionLength: uint8(2 + len(data)), OptionData: data})
			}
		}
		t.SetNetworkLayerForChecksum(ip)
		l4 = t
	}
	if err := w.buf.Clear(); err != nil {
		w.err = err
		return
	}
	// Headers only: the IP total length still announces the payload.
	if err := gopacket.SerializeLayers(w.buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, l4); err != nil {
		w.err = err
		return
	}
	hdr := w.buf.Bytes()
	total := len(hdr) + payload
	binary.BigEndian.PutUint16(hdr[2:], uint16(min(total, 65535)))
	if p.Kind == packet.Datagram && len(hdr) >= 28 {
		binary.BigEndian.PutUint16(hdr[24:], uint16(min(8+payload, 65535)))
	}
	// Recompute the IPv4 header checksum after patching the length.
	hdr[10], hdr[11] = 0, 0
	binary.BigEndian.PutUint16(hdr[10:], ipChecksum(hdr[:20]))
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(now)).UTC(), CaptureLength: len(hdr), Length: total}
	if err := w.w.WritePacket(ci, hdr); err != nil {
		w.err = err
		return
	}
	w.n++
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// Flush writes buffered packets and returns the first error.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}
