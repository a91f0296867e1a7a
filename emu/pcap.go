package emu

import (
	"bufio"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cclab/cclab/core/clock"
)

// snaplen keeps IPv4 and TCP headers with options, as netsim/pcap does.
const snaplen = 80

// pcapWriter writes the real packets (raw IPv4) with their times on the
// run's clock, time 0 written as the Unix epoch like the simulator's
// captures, so the two open side by side in Wireshark.
type pcapWriter struct {
	bw *bufio.Writer
	w  *pcapgo.Writer
}

func newPcap(out io.Writer) (*pcapWriter, error) {
	bw := bufio.NewWriterSize(out, 1<<16)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(snaplen, layers.LinkTypeRaw); err != nil {
		return nil, err
	}
	return &pcapWriter{bw: bw, w: w}, nil
}

func (p *pcapWriter) write(now clock.Time, ip []byte) {
	n := min(len(ip), snaplen)
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(now)), CaptureLength: n, Length: len(ip)}
	_ = p.w.WritePacket(ci, ip[:n])
}

func (p *pcapWriter) flush() { _ = p.bw.Flush() }
