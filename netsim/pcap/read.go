package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Segment is a TCP segment read back from a capture of raw IPv4 packets.
type Segment struct {
	At       time.Time
	Src, Dst netip.AddrPort
	Seq, Ack uint32
	// Payload is the payload length the IP header declares: captures keep
	// headers only.
	Payload  int
	SYN, ACK bool
}

// Link types ReadSegments reads: raw IP (what cclab writes) and raw IPv4.
const linkTypeIPv4 = 228

// maxRecord bounds a record's captured length: far above any snapshot
// length, so that a corrupt length is an error, not a huge allocation.
const maxRecord = 1 << 18

// ReadSegments decodes a pcap stream of raw IPv4 packets, as cclab run and
// cclab emu write them (and tcpdump on a TUN device), and returns its TCP
// segments in stream order and how many packets the stream holds; other
// packets (UDP, truncated headers) are counted and skipped. Headers are
// decoded here for the reason the writer encodes them (the package
// comment); the tests check them against gopacket's decoding.
func ReadSegments(r io.Reader) (segs []Segment, packets int, err error) {
	r = bufio.NewReader(r) // two small reads per packet
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, 0, fmt.Errorf("pcap file header: %w", err)
	}
	var order binary.ByteOrder = binary.LittleEndian
	var frac time.Duration
	switch magic := binary.LittleEndian.Uint32(hdr[:]); magic {
	case magicNanos, 0xa1b2c3d4:
	case 0x4d3cb2a1, 0xd4c3b2a1:
		order = binary.BigEndian
	default:
		return nil, 0, fmt.Errorf("not a pcap file (magic %#08x)", magic)
	}
	if order.Uint32(hdr[:]) == magicNanos {
		frac = time.Nanosecond
	} else {
		frac = time.Microsecond
	}
	if lt := order.Uint32(hdr[20:]) & 0xffff; lt != linkTypeRaw && lt != linkTypeIPv4 {
		return nil, 0, fmt.Errorf("link type %d, want raw IPv4 (%d or %d)", lt, linkTypeRaw, linkTypeIPv4)
	}
	var rec [16]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return segs, packets, nil
			}
			return nil, 0, fmt.Errorf("packet %d: record header: %w", packets+1, err)
		}
		n := order.Uint32(rec[8:])
		if n > maxRecord {
			return nil, 0, fmt.Errorf("packet %d: captured length %d, more than %d", packets+1, n, maxRecord)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, 0, fmt.Errorf("packet %d: %w", packets+1, err)
		}
		packets++
		at := time.Unix(int64(order.Uint32(rec[0:])), int64(order.Uint32(rec[4:]))*int64(frac)).UTC()
		if s, ok := decodeTCP(buf); ok {
			s.At = at
			segs = append(segs, s)
		}
	}
}

// decodeTCP reads the IPv4 and TCP headers at the start of b.
func decodeTCP(b []byte) (Segment, bool) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != protoTCP {
		return Segment{}, false
	}
	ihl := int(b[0]&15) * 4
	if ihl < 20 || len(b) < ihl+20 {
		return Segment{}, false
	}
	t := b[ihl:]
	doff := int(t[12]>>4) * 4
	src, _ := netip.AddrFromSlice(b[12:16])
	dst, _ := netip.AddrFromSlice(b[16:20])
	return Segment{
		Src:     netip.AddrPortFrom(src, binary.BigEndian.Uint16(t[0:])),
		Dst:     netip.AddrPortFrom(dst, binary.BigEndian.Uint16(t[2:])),
		Seq:     binary.BigEndian.Uint32(t[4:]),
		Ack:     binary.BigEndian.Uint32(t[8:]),
		Payload: max(0, int(binary.BigEndian.Uint16(b[2:]))-ihl-doff),
		SYN:     t[13]&0x02 != 0,
		ACK:     t[13]&0x10 != 0,
	}, true
}
