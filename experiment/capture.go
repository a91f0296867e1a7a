package experiment

import (
	"fmt"
	"os"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/pcap"
)

// captureObserver writes bottleneck packets to a pcap file.
type captureObserver struct{ w *pcap.Writer }

func (c captureObserver) Dropped(clock.Time, *packet.Packet) {}
func (c captureObserver) Lost(now clock.Time, p *packet.Packet) {
	c.w.Write(now, p)
}
func (c captureObserver) Sent(now clock.Time, p *packet.Packet) { c.w.Write(now, p) }

// AttachPcap makes the network write every packet leaving the bottleneck
// (and every ACK entering the reverse path) to path.
func AttachPcap(n *network.Network, path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := pcap.NewWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	n.Capture = captureObserver{w}
	return func() error {
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		return f.Close()
	}, nil
}
