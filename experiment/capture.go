package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/pcap"
)

// captureObserver writes bottleneck packets to pcap files: those that
// leave the queue (and the ACKs entering the reverse path) to sent, those
// the queue drops to dropped; either may be nil.
type captureObserver struct{ sent, dropped *pcap.Writer }

func (c captureObserver) Dropped(now clock.Time, p *packet.Packet) {
	if c.dropped != nil {
		c.dropped.Write(now, p)
	}
}

func (c captureObserver) Lost(now clock.Time, p *packet.Packet) {
	if c.sent != nil {
		c.sent.Write(now, p)
	}
}

func (c captureObserver) Sent(now clock.Time, p *packet.Packet) {
	if c.sent != nil {
		c.sent.Write(now, p)
	}
}

// Capture names the pcap files a run's bottleneck is captured to; an empty
// name writes no file. Departures is what a capture after the queue sees
// (what the receivers get, and the ACKs as they set off back); Arrivals
// what one before it sees (what the senders sent, when, dropped or not);
// Drops what the queue dropped, at the drop. A capture after the queue
// cannot tell a segment dropped from one never sent; with the other two
// every packet's fate is known.
type Capture struct {
	Departures, Arrivals, Drops string
}

// SameFileError is Check's error: captures A and B (fields of Capture:
// "Departures", "Arrivals" or "Drops") both name Path.
type SameFileError struct{ A, B, Path string }

func (e *SameFileError) Error() string {
	return fmt.Sprintf("Capture.%s and Capture.%s both name %s: each capture needs a file of its own", e.A, e.B, e.Path)
}

// Check refuses one file named for two captures (their packets would
// interleave in it) with a *SameFileError, which a command can word in
// its own flags.
func (c Capture) Check() error {
	names := []struct{ field, path string }{{"Departures", c.Departures}, {"Arrivals", c.Arrivals}, {"Drops", c.Drops}}
	for i, a := range names {
		for _, b := range names[i+1:] {
			if a.path != "" && filepath.Clean(a.path) == filepath.Clean(b.path) {
				return &SameFileError{A: a.field, B: b.field, Path: a.path}
			}
		}
	}
	return nil
}

// AttachPcap makes the network write its bottleneck's packets to the files
// c names. The returned function flushes and closes them.
func AttachPcap(n *network.Network, c Capture) (func() error, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	var obs captureObserver
	var arrivals *pcap.Writer
	var closers []func() error
	closeAll := func() error {
		var first error
		for _, f := range closers {
			if err := f(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, o := range []struct {
		path string
		w    **pcap.Writer
	}{{c.Departures, &obs.sent}, {c.Arrivals, &arrivals}, {c.Drops, &obs.dropped}} {
		if o.path == "" {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			closeAll()
			return nil, err
		}
		w, err := pcap.NewWriter(f)
		if err != nil {
			f.Close()
			closeAll()
			return nil, err
		}
		*o.w = w
		name := o.path
		closers = append(closers, func() error {
			if err := w.Flush(); err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", name, err)
			}
			return f.Close()
		})
	}
	if obs.sent != nil || obs.dropped != nil {
		n.Capture = obs
	}
	if arrivals != nil {
		n.Bottleneck.OnArrival(arrivals.Write)
	}
	return closeAll, nil
}
