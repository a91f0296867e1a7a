package emu

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/link"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/traffic"
)

// Background traffic follows experiment/network's semantics (the same
// traffic.Process and activity windows, the same random stream names),
// but every packet is a real datagram or TCP segment from the sender
// namespace.

// source is a background UDP source and its sink.
type source struct {
	name, group string
	proc        *traffic.Process
	timer       *sim.Timer
	udp         *endpoint.UDPSource
	sink        *endpoint.UDPSink
	path        *link.Path
	offered     units.Bandwidth
	size        int
	stopped     bool
	e           *emulation
}

// spawner starts background kernel TCP flows, one per activity window or
// at Poisson arrivals, all to one port.
type spawner struct {
	name, group string
	b           scenario.Background
	cc          string
	win         traffic.Window
	sizes       *traffic.SizeDist
	gap         time.Duration
	timer       *sim.Timer
	rng         *rand.Rand
	path        *link.Path
	sink        *endpoint.TCPSink
	count       int
	stopped     bool
	e           *emulation

	mu      sync.Mutex
	senders []*endpoint.TCPSender
	wg      sync.WaitGroup
	// sent is the payload bytes its stopped connections sent,
	// retransmissions included (tcpi_bytes_sent at their stop).
	sent atomic.Int64
}

func (e *emulation) addBackground() error { return e.s.BackgroundSources(e.addSource) }

func (e *emulation) addSource(src scenario.Source) error {
	b, name, group, w := src.Spec, src.Name, src.Group, src.Window
	switch b.Type {
	case "tcp", "arrivals":
		if len(e.spawners) >= maxPerKind {
			return fmt.Errorf("background %s: the emulator runs at most %d background TCP sources (with each count): the forwarder tells them apart by their receiver ports, %d-%d", name, maxPerKind, tcpBGPort, tcpBGPort+maxPerKind-1)
		}
		kcc, err := endpoint.KernelCC(b.CC.Name)
		if err != nil {
			return err
		}
		sp := &spawner{name: name, group: group, b: b, cc: kcc, win: w, e: e}
		if b.Type == "arrivals" {
			if sp.sizes, sp.gap, err = e.s.Arrivals(&b); err != nil {
				return err
			}
		}
		port := uint16(tcpBGPort + len(e.spawners))
		if sp.path, err = e.f.AddPath(link.TCP, port, b.ExtraDelay.V); err != nil {
			return err
		}
		if sp.sink, err = endpoint.ListenTCP(e.pair.Rcv, netns.RcvAddr, port, 0, e.f); err != nil {
			return err
		}
		sp.rng = e.rnd.Stream("background/" + name)
		sp.timer = e.f.S.Timer(sp.fire)
		e.spawners = append(e.spawners, sp)
		if t := w.First(0); t != clock.Never {
			sp.timer.Reset(t)
		}
	default:
		if len(e.sources) >= maxPerKind {
			return fmt.Errorf("background %s: the emulator runs at most %d background UDP sources (with each count): the forwarder tells them apart by their receiver ports, %d-%d", name, maxPerKind, udpBGPort, udpBGPort+maxPerKind-1)
		}
		p := b.Process(w)
		port := uint16(udpBGPort + len(e.sources))
		s := &source{name: name, group: group, size: int(b.Size.V), e: e,
			proc: traffic.NewProcess(p, e.rnd.Stream("background/"+name))}
		s.offered = s.proc.MeanRate()
		var err error
		if s.path, err = e.f.AddPath(link.UDP, port, b.ExtraDelay.V); err != nil {
			return err
		}
		dst := netip.AddrPortFrom(netns.RcvAddr, port)
		if s.sink, err = endpoint.ListenUDP(e.pair.Rcv, netns.RcvAddr, port); err != nil {
			return err
		}
		if s.udp, err = endpoint.DialUDP(e.pair.Snd, dst); err != nil {
			s.sink.Close()
			return err
		}
		s.timer = e.f.S.Timer(s.fire)
		if t := s.proc.First(0); t != clock.Never {
			s.timer.Reset(t)
		}
		e.sources = append(e.sources, s)
	}
	return nil
}

func (s *source) fire(now clock.Time) {
	if s.stopped {
		return
	}
	s.udp.Send(s.size)
	if t := s.proc.Next(now); t != clock.Never && t < s.e.end {
		s.timer.Reset(t)
	}
}

func (s *source) setScale(now clock.Time, f float64) {
	s.proc.SetScale(f)
	if s.timer.Armed() && !s.stopped {
		if t := s.proc.First(now); t != clock.Never {
			s.timer.Reset(max(t, now))
		}
	}
}

func (s *source) close() {
	if s.udp != nil {
		s.udp.Close()
	}
	if s.sink != nil {
		s.sink.Close()
	}
}

func (sp *spawner) fire(now clock.Time) {
	if sp.stopped {
		return
	}
	e := sp.e
	sp.count++
	var bytes int64
	stopAt := clock.Never
	var next clock.Time
	switch sp.b.Type {
	case "tcp":
		bytes = int64(sp.b.Bytes.V)
		stopAt, next = sp.win.Recur(now)
	case "arrivals":
		if sp.sizes != nil {
			bytes = int64(sp.sizes.Sample(sp.rng))
		} else {
			bytes = int64(sp.b.Size.V)
		}
		next = sp.win.First(now.Add(time.Duration(sp.rng.ExpFloat64() * float64(sp.gap))))
	}
	snd := endpoint.StartTCP(e.pair.Snd, netip.AddrPortFrom(netns.RcvAddr, sp.path.Port), endpoint.TCPConfig{CC: sp.cc, Bytes: bytes, Nagle: e.s.FlowNagle(nil)}, e.f)
	sp.mu.Lock()
	sp.senders = append(sp.senders, snd)
	sp.mu.Unlock()
	if stopAt != clock.Never {
		e.f.S.Timer(func(clock.Time) {
			// Taken out of the list, so stopAll does not stop (and
			// count) it again.
			sp.mu.Lock()
			i := slices.Index(sp.senders, snd)
			if i >= 0 {
				sp.senders = slices.Delete(sp.senders, i, i+1)
			}
			sp.mu.Unlock()
			if i >= 0 {
				sp.stopSender(snd)
			}
		}).Reset(stopAt)
	}
	if next != clock.Never && next < e.end {
		sp.timer.Reset(next)
	}
}

// stopSender aborts one background connection without blocking the loop.
func (sp *spawner) stopSender(snd *endpoint.TCPSender) {
	sp.wg.Add(1)
	go func() {
		defer sp.wg.Done()
		final, _ := snd.Stop()
		sp.sent.Add(int64(final.BytesSent))
	}()
}

// stopAll stops the spawner and every connection it started.
func (sp *spawner) stopAll() {
	sp.stopped = true
	if sp.timer != nil {
		sp.timer.Stop()
	}
	sp.mu.Lock()
	senders := sp.senders
	sp.senders = nil
	sp.mu.Unlock()
	for _, s := range senders {
		sp.stopSender(s)
	}
	sp.wg.Wait()
}

func (sp *spawner) close() {
	if sp.sink != nil {
		sp.sink.Close()
	}
}

// stopBackground stops the sources and spawners of a background entry
// (by its name, a sequence's name or a part's name).
func (e *emulation) stopBackground(name string) {
	for _, s := range e.sources {
		if s.name == name || s.group == name {
			s.stopped = true
			s.timer.Stop()
		}
	}
	for _, sp := range e.spawners {
		if sp.name == name || sp.group == name {
			sp.stopped = true
			sp.timer.Stop()
			sp.mu.Lock()
			senders := sp.senders
			sp.senders = nil
			sp.mu.Unlock()
			for _, s := range senders {
				sp.stopSender(s)
			}
		}
	}
}
