package emu

import (
	"io"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/pcap"
)

// pcapWriter writes the real packets (raw IPv4, truncated to netsim/pcap's
// snapshot length, headers with options) with their times on the run's
// clock, time 0 written as the Unix epoch like the simulator's captures, so
// the two open side by side in Wireshark.
type pcapWriter struct{ f *pcap.File }

func newPcap(out io.Writer) (*pcapWriter, error) {
	f, err := pcap.NewFile(out)
	if err != nil {
		return nil, err
	}
	return &pcapWriter{f: f}, nil
}

func (p *pcapWriter) write(now clock.Time, ip []byte) { _ = p.f.WritePacket(now, ip, len(ip)) }

func (p *pcapWriter) flush() { _ = p.f.Flush() }
