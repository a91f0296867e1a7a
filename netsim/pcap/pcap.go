// Package pcap writes simulated packets as a pcap capture that Wireshark and
// tshark open: each packet gets synthesised IPv4 and TCP (or UDP) headers
// with its flow's addresses and ports, sequence and acknowledgement numbers,
// timestamps and SACK options. Payloads are not stored (the capture is
// truncated to the headers, as with a small snaplen), which keeps files
// small while the original length stays visible to the analyser.
// ReadSegments reads the TCP segments of such a capture back (the
// simulator's, the emulator's, or tcpdump's on a TUN device).
//
// The file format and the three headers are encoded here rather than with
// gopacket: linking gopacket/layers costs every cclab process about 3 MB of
// resident memory (its init and code) and puts 5 MB of pointer-holding
// enum tables into the globals the garbage collector scans and counts
// toward its heap goal, for a writer that needs 40 bytes of fixed layout
// per packet. The tests decode these files with gopacket and compare the
// bytes with gopacket's serialisation of the same packets.
package pcap

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
)

// Snaplen covers IPv4 (20) + TCP with options (60).
const Snaplen = 80

// File format constants (libpcap's, nanosecond variant).
const (
	magicNanos   = 0xa1b23c4d
	versionMajor = 2
	versionMinor = 4
	linkTypeRaw  = 101 // raw IPv4/IPv6, no link-layer header
	protoTCP     = 6
	protoUDP     = 17
)

// File writes pcap records: a file header, then a 16-byte record header
// before each captured packet.
type File struct {
	bw  *bufio.Writer
	rec [16]byte
}

// NewFile writes the pcap file header (nanosecond timestamps, raw IP link
// type, snapshot length Snaplen) to out through a buffer.
func NewFile(out io.Writer) (*File, error) {
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], magicNanos)
	binary.LittleEndian.PutUint16(h[4:], versionMajor)
	binary.LittleEndian.PutUint16(h[6:], versionMinor)
	// bytes 8:16: time zone and accuracy, both 0
	binary.LittleEndian.PutUint32(h[16:], Snaplen)
	binary.LittleEndian.PutUint32(h[20:], linkTypeRaw)
	bw := bufio.NewWriterSize(out, 1<<16)
	if _, err := bw.Write(h[:]); err != nil {
		return nil, err
	}
	return &File{bw: bw}, nil
}

// WritePacket writes one record: data (at most Snaplen bytes are kept) of a
// packet origLen bytes long, seen at now; time 0 is the Unix epoch.
func (f *File) WritePacket(now clock.Time, data []byte, origLen int) error {
	data = data[:min(len(data), Snaplen)]
	origLen = max(origLen, len(data))
	ns := int64(now)
	binary.LittleEndian.PutUint32(f.rec[0:], uint32(ns/int64(time.Second)))
	binary.LittleEndian.PutUint32(f.rec[4:], uint32(ns%int64(time.Second)))
	binary.LittleEndian.PutUint32(f.rec[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(f.rec[12:], uint32(origLen))
	if _, err := f.bw.Write(f.rec[:]); err != nil {
		return err
	}
	_, err := f.bw.Write(data)
	return err
}

// Flush writes buffered records out.
func (f *File) Flush() error { return f.bw.Flush() }

// Writer writes simulated packets to a pcap stream. Simulated time 0 is
// written as the Unix epoch, so Wireshark's relative times equal simulated
// times.
type Writer struct {
	f   *File
	hdr [Snaplen]byte
	err error
	n   int
}

// NewWriter writes the pcap file header (nanosecond timestamps, raw IPv4
// link type) and returns a writer.
func NewWriter(out io.Writer) (*Writer, error) {
	f, err := NewFile(out)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f}, nil
}

// Count returns the number of packets written.
func (w *Writer) Count() int { return w.n }

// putAddr writes the address of a flow endpoint: senders in 10.1/16,
// receivers in 10.2/16 (UDP sources in 10.3 and 10.4).
func putAddr(b []byte, net16 byte, idx int32) {
	i := int(idx) + 1
	b[0], b[1], b[2], b[3] = 10, net16, byte(i>>8), byte(i)
}

// Write records p as seen at now. Errors are sticky and returned by Flush.
func (w *Writer) Write(now clock.Time, p *packet.Packet) {
	if w.err != nil {
		return
	}
	h := w.hdr[:]
	clear(h)
	ip, l4 := h[:20], h[20:]
	ip[0] = 4<<4 | 5      // version, header length in words
	ip[1] = p.ECN.Field() // the ECN field of the traffic class
	binary.BigEndian.PutUint16(ip[4:], uint16(w.n))
	ip[8] = 64 // TTL
	payload := int(p.Len)
	var l4len int
	switch p.Kind {
	case packet.Datagram:
		ip[9] = protoUDP
		putAddr(ip[12:], 3, p.Flow)
		putAddr(ip[16:], 4, p.Flow)
		binary.BigEndian.PutUint16(l4[0:], uint16(20000+p.Flow%40000))
		binary.BigEndian.PutUint16(l4[2:], 6000)
		l4len = 8
		binary.BigEndian.PutUint16(l4[4:], 8)
		payload = max(0, int(p.Size)-28)
	default:
		ip[9] = protoTCP
		// Options: NOP NOP timestamps, then NOP NOP SACK on ACKs with
		// blocks; both are multiples of 4 bytes, so no padding.
		opt := l4[20:]
		opt[0], opt[1], opt[2], opt[3] = 1, 1, 8, 10
		binary.BigEndian.PutUint32(opt[4:], uint32(now/clock.Time(time.Millisecond)))
		binary.BigEndian.PutUint32(opt[8:], uint32(p.EchoAt/clock.Time(time.Millisecond)))
		l4len = 32
		var flags uint16 = 0x10 // ACK
		switch p.Kind {
		case packet.Data:
			putAddr(ip[12:], 1, p.Flow)
			putAddr(ip[16:], 2, p.Flow)
			binary.BigEndian.PutUint16(l4[0:], uint16(10000+p.Flow%50000))
			binary.BigEndian.PutUint16(l4[2:], 5001)
			binary.BigEndian.PutUint32(l4[4:], uint32(p.Seq+1)) // ISN 0, SYN takes one
			binary.BigEndian.PutUint32(l4[8:], 1)
			flags |= 0x08 // PSH
		case packet.Syn:
			// The sender's SYN: sequence number 0 (the ISN), no ACK.
			putAddr(ip[12:], 1, p.Flow)
			putAddr(ip[16:], 2, p.Flow)
			binary.BigEndian.PutUint16(l4[0:], uint16(10000+p.Flow%50000))
			binary.BigEndian.PutUint16(l4[2:], 5001)
			flags = 0x02
			payload = 0
		default:
			putAddr(ip[12:], 2, p.Flow)
			putAddr(ip[16:], 1, p.Flow)
			binary.BigEndian.PutUint16(l4[0:], 5001)
			binary.BigEndian.PutUint16(l4[2:], uint16(10000+p.Flow%50000))
			binary.BigEndian.PutUint32(l4[4:], 1)
			if p.Kind == packet.SynAck {
				flags |= 0x02 // SYN: the receiver's ISN, 0, before its sequence number 1
				binary.BigEndian.PutUint32(l4[4:], 0)
			}
			binary.BigEndian.PutUint32(l4[8:], uint32(p.AckNo+1))
			payload = 0
			if n := int(p.NSACK); n > 0 {
				s := l4[32:]
				s[0], s[1], s[2], s[3] = 1, 1, 5, byte(2+8*n)
				for i := range n {
					binary.BigEndian.PutUint32(s[4+8*i:], uint32(p.SACK[i].Start+1))
					binary.BigEndian.PutUint32(s[8+8*i:], uint32(p.SACK[i].End+1))
				}
				l4len += 4 + 8*n
			}
		}
		if p.ECN&packet.ECE != 0 {
			flags |= 0x40
		}
		if p.ECN&packet.CWR != 0 {
			flags |= 0x80
		}
		binary.BigEndian.PutUint16(l4[12:], uint16(l4len/4)<<12|flags)
		binary.BigEndian.PutUint16(l4[14:], 65535) // window
	}
	l4 = l4[:l4len]
	// Checksums as a serialiser computes them over the headers alone (the
	// payload is not stored); lengths are patched to the real ones after.
	sum := uint32(ip[12])<<8 + uint32(ip[13]) + uint32(ip[14])<<8 + uint32(ip[15]) +
		uint32(ip[16])<<8 + uint32(ip[17]) + uint32(ip[18])<<8 + uint32(ip[19]) +
		uint32(ip[9]) + uint32(l4len)
	c := checksum(l4, sum)
	if ip[9] == protoUDP {
		if c == 0 {
			c = 0xffff // RFC 768: zero means no checksum
		}
		binary.BigEndian.PutUint16(l4[6:], c)
		binary.BigEndian.PutUint16(l4[4:], uint16(min(8+payload, 65535)))
	} else {
		binary.BigEndian.PutUint16(l4[16:], c)
	}
	hl := 20 + l4len
	total := hl + payload
	binary.BigEndian.PutUint16(ip[2:], uint16(min(total, 65535)))
	binary.BigEndian.PutUint16(ip[10:], checksum(ip, 0))
	if err := w.f.WritePacket(now, h[:hl], total); err != nil {
		w.err = err
		return
	}
	w.n++
}

// checksum is the Internet checksum (RFC 1071) of b added to sum.
func checksum(b []byte, sum uint32) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// Flush writes buffered packets and returns the first error.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.f.Flush()
}
