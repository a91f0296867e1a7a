package network

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/traffic"
)

// Source is a background UDP source and its sink's measurements.
type Source struct {
	// Index is the source's number in datagrams.
	Index int32
	// Name is the source's name; Group the background entry it belongs to
	// (a sequence's name for its parts).
	Name, Group string
	// SentPackets and SentBytes count what the source emitted;
	// DeliveredBytes what reached its sink.
	SentPackets               int64
	SentBytes, DeliveredBytes units.Bytes
	// Drops, Losses and BottleneckBytes are as for flows.
	Drops, Losses   int64
	BottleneckBytes units.Bytes
	// Offered is the configured long-run offered rate at scale 1.
	Offered units.Bandwidth

	proc       *traffic.Process
	timer      *sim.Timer
	fwd        *link.DelayLine
	extraDelay time.Duration
	seq        int64
	stopped    bool
	net        *Network
}

// spawner starts background TCP flows: one per activity window of a
// sequence part, or at Poisson arrivals.
type spawner struct {
	n       *Network
	name    string
	group   string
	b       scenario.Background
	win     traffic.Window
	sizes   *traffic.SizeDist
	gap     time.Duration // mean inter-arrival for arrivals
	timer   *sim.Timer
	count   int
	stopped bool
	flows   []*Flow
	rng     *rand.Rand
}

func (n *Network) addBackground() error { return n.scn.BackgroundSources(n.addSource) }

// addSource instantiates one background source.
func (n *Network) addSource(src scenario.Source) error {
	b, name, group, w := src.Spec, src.Name, src.Group, src.Window
	switch b.Type {
	case "tcp", "arrivals":
		sp := &spawner{n: n, name: name, group: group, b: b, win: w}
		if b.Type == "arrivals" {
			var err error
			if sp.sizes, sp.gap, err = n.scn.Arrivals(&b); err != nil {
				return err
			}
		}
		sp.timer = n.Sched.Timer(sp.fire)
		sp.rng = n.rnd.Stream("background/" + name)
		n.spawners = append(n.spawners, sp)
		if t := w.First(0); t != clock.Never {
			sp.timer.Reset(t)
		}
	default:
		s := &Source{
			Index: int32(len(n.Sources)), Name: name, Group: group,
			proc:       traffic.NewProcess(b.Process(w), n.rnd.Stream("background/"+name)),
			extraDelay: b.ExtraDelay.V, net: n,
		}
		s.Offered = s.proc.MeanRate()
		s.fwd = link.NewDelayLine(n.Sched, (*sourceSink)(s))
		s.timer = n.Sched.Timer(s.fire)
		if t := s.proc.First(0); t != clock.Never {
			s.timer.Reset(t)
		}
		n.Sources = append(n.Sources, s)
	}
	return nil
}

func (s *Source) fire(now clock.Time) {
	if s.stopped {
		return
	}
	n := s.net
	p := n.Pool.Get()
	p.Flow = s.Index
	p.Kind = packet.Datagram
	p.Size = s.proc.Size
	p.Len = s.proc.Size
	p.Seq = s.seq
	p.SentAt = now
	s.seq++
	s.SentPackets++
	s.SentBytes += p.Size
	n.Bottleneck.Receive(now, p)
	if t := s.proc.Next(now); t != clock.Never && t < n.end {
		s.timer.Reset(t)
	}
}

func (s *Source) setScale(now clock.Time, f float64) {
	s.proc.SetScale(f)
	// Re-draw the next send under the new rate so a slowed source does not
	// send one more packet at the old spacing.
	if s.timer.Armed() && !s.stopped {
		if t := s.proc.First(now); t != clock.Never {
			s.timer.Reset(max(t, now))
		}
	}
}

// sourceSink counts a source's delivered datagrams.
type sourceSink Source

func (k *sourceSink) Receive(now clock.Time, p *packet.Packet) {
	s := (*Source)(k)
	s.DeliveredBytes += p.Size
	s.net.Pool.Put(p)
}

func (sp *spawner) fire(now clock.Time) {
	if sp.stopped {
		return
	}
	n := sp.n
	b := sp.b
	sp.count++
	spec := FlowSpec{
		Name: fmt.Sprintf("%s#%d", sp.name, sp.count), Group: sp.group, Background: true,
		CC: b.CC, Start: time.Duration(now), ExtraDelay: b.ExtraDelay.V,
		Transport:       transportConfig(n.scn.Transport, nil),
		KernelHZ:        kernelHZ(n.scn.Transport, nil),
		SACKCompression: sackCompression(n.scn.Transport, nil),
		Nagle:           n.scn.FlowNagle(nil),
	}
	var next clock.Time
	switch b.Type {
	case "tcp":
		spec.Bytes = b.Bytes.V
		// The flow lives until its window closes.
		var end clock.Time
		end, next = sp.win.Recur(now)
		if end != clock.Never {
			spec.Stop = time.Duration(end)
		}
	case "arrivals":
		if sp.sizes != nil {
			spec.Bytes = sp.sizes.Sample(sp.rng)
		} else {
			spec.Bytes = b.Size.V
		}
		next = sp.win.First(now.Add(time.Duration(sp.rng.ExpFloat64() * float64(sp.gap))))
	}
	if f, err := n.NewFlow(spec); err == nil {
		f.setSegments(len(n.Segments))
		sp.flows = append(sp.flows, f)
	}
	if next != clock.Never && next < n.end {
		sp.timer.Reset(next)
	}
}

// stopBackground stops the sources, spawners and flows of a background
// entry (by its name, a sequence's name or a part's name).
func (n *Network) stopBackground(now clock.Time, name string) {
	for _, s := range n.Sources {
		if s.Name == name || s.Group == name {
			s.stopped = true
			s.timer.Stop()
		}
	}
	for _, sp := range n.spawners {
		if sp.name == name || sp.group == name {
			sp.stopped = true
			sp.timer.Stop()
			for _, f := range sp.flows {
				f.Sender.Stop()
			}
		}
	}
}
