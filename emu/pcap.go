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
type pcapWriter struct {
	f *pcap.File
	// err is the first error writing the capture; after it nothing more
	// is written, and close reports it, so a disk that fills up ends the
	// run with an error rather than a capture cut short without a word.
	err error
}

func newPcap(out io.Writer) (*pcapWriter, error) {
	f, err := pcap.NewFile(out)
	if err != nil {
		return nil, err
	}
	return &pcapWriter{f: f}, nil
}

func (p *pcapWriter) write(now clock.Time, ip []byte) {
	if p.err == nil {
		p.err = p.f.WritePacket(now, ip, len(ip))
	}
}

// close writes out what is buffered and returns the first error writing
// the capture; calling it again returns the same.
func (p *pcapWriter) close() error {
	if p.err == nil {
		p.err = p.f.Flush()
	}
	return p.err
}
