// Package netgen is the network-generator RPC (netgenpb/netgen.proto), like
// MARLIN's Containernet module: an experiment driver changes a running
// emulated link's rate, delay, loss and queue over gRPC. Links are
// anything with Get and Set: the emulator's bottleneck (EmuLink, an
// emu.Control) or the loopback test relay (RelayLink).
package netgen

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/rpc"
	"github.com/cclab/cclab/rpc/netgen/netgenpb"
	"github.com/cclab/cclab/transport/udp/udptest"
)

// Settings are a link's controllable settings.
type Settings struct {
	Rate       units.Bandwidth
	Delay      time.Duration
	Loss       float64
	QueueBytes units.Bytes
}

// Change lists settings to change; nil fields stay.
type Change struct {
	Rate       *units.Bandwidth
	Delay      *time.Duration
	Loss       *float64
	QueueBytes *units.Bytes
}

// Link is a controllable link. Set validates the change itself; its
// error is returned to the client as INVALID_ARGUMENT.
type Link interface {
	Get() (Settings, error)
	Set(Change) (Settings, error)
}

// Server serves named links.
type Server struct {
	netgenpb.UnimplementedNetGenServer
	links map[string]Link
}

// NewServer returns the service for links.
func NewServer(links map[string]Link) *Server { return &Server{links: links} }

func (s *Server) link(name string) (Link, error) {
	l, ok := s.links[name]
	if !ok {
		names := make([]string, 0, len(s.links))
		for n := range s.links {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, status.Errorf(codes.NotFound, "no link %q (links: %s)", name, strings.Join(names, ", "))
	}
	return l, nil
}

func toPB(name string, st Settings) *netgenpb.LinkSettings {
	return &netgenpb.LinkSettings{Link: name, RateBps: float64(st.Rate), DelayUs: st.Delay.Microseconds(), Loss: st.Loss, QueueBytes: int64(st.QueueBytes)}
}

// ListLinks implements netgenpb.NetGenServer.
func (s *Server) ListLinks(context.Context, *netgenpb.ListLinksRequest) (*netgenpb.ListLinksResponse, error) {
	r := &netgenpb.ListLinksResponse{}
	for n := range s.links {
		r.Links = append(r.Links, n)
	}
	sort.Strings(r.Links)
	return r, nil
}

// GetLink implements netgenpb.NetGenServer.
func (s *Server) GetLink(_ context.Context, req *netgenpb.GetLinkRequest) (*netgenpb.LinkSettings, error) {
	l, err := s.link(req.Link)
	if err != nil {
		return nil, err
	}
	st, err := l.Get()
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return toPB(req.Link, st), nil
}

// maxDelayUs is the largest delay a request may carry (its rate is at
// most units.MaxBandwidth); a link refuses what it cannot do within them
// (the emulator's bottleneck: up to 100 Gbit/s and 10 s).
const maxDelayUs = math.MaxInt64 / int64(time.Microsecond)

// SetLink implements netgenpb.NetGenServer.
func (s *Server) SetLink(_ context.Context, req *netgenpb.SetLinkRequest) (*netgenpb.LinkSettings, error) {
	l, err := s.link(req.Link)
	if err != nil {
		return nil, err
	}
	var ch Change
	if req.RateBps != nil {
		// Checked before the conversion to whole bits per second, which
		// would turn an infinite or huge rate into a negative one.
		if r := *req.RateBps; !(r >= 1 && r <= units.MaxBandwidth) {
			return nil, status.Errorf(codes.InvalidArgument, "rate_bps must be in [1, %g] (1000 Tbit/s), got %v", units.MaxBandwidth, r)
		}
		r := units.Bandwidth(*req.RateBps)
		ch.Rate = &r
	}
	if req.DelayUs != nil {
		// Past maxDelayUs the conversion to nanoseconds would wrap round,
		// possibly into the link's range.
		if d := *req.DelayUs; d < 0 || d > maxDelayUs {
			return nil, status.Errorf(codes.InvalidArgument, "delay_us must be in [0, %d], got %d", maxDelayUs, d)
		}
		d := time.Duration(*req.DelayUs) * time.Microsecond
		ch.Delay = &d
	}
	if req.Loss != nil {
		if math.IsNaN(*req.Loss) || *req.Loss < 0 || *req.Loss >= 1 {
			return nil, status.Errorf(codes.InvalidArgument, "loss must be in [0, 1), got %v", *req.Loss)
		}
		ch.Loss = req.Loss
	}
	if req.QueueBytes != nil {
		if *req.QueueBytes <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "queue_bytes must be positive, got %d", *req.QueueBytes)
		}
		q := units.Bytes(*req.QueueBytes)
		ch.QueueBytes = &q
	}
	st, err := l.Set(ch)
	if err != nil {
		if err == emu.ErrEnded {
			return nil, status.Error(codes.Unavailable, err.Error())
		}
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return toPB(req.Link, st), nil
}

// Serve serves links on lis until ctx is done.
func Serve(ctx context.Context, lis net.Listener, links map[string]Link) error {
	g := grpc.NewServer()
	netgenpb.RegisterNetGenServer(g, NewServer(links))
	return rpc.Serve(ctx, g, lis)
}

// EmuLink controls the emulator's bottleneck.
type EmuLink struct{ C *emu.Control }

// Get implements Link.
func (l EmuLink) Get() (Settings, error) {
	s, err := l.C.Get()
	return Settings(s), err
}

// Set implements Link.
func (l EmuLink) Set(c Change) (Settings, error) {
	s, err := l.C.Set(emu.LinkChange(c))
	return Settings(s), err
}

// RelayLink controls one direction of a loopback test relay (rate, delay,
// loss, queue); it keeps the settings it was given, as the relay does.
type RelayLink struct {
	R       *udptest.Relay
	Forward bool
	mu      sync.Mutex
	cur     udptest.Path
}

// NewRelayLink returns a link for one direction of r, starting from p.
func NewRelayLink(r *udptest.Relay, forward bool, p udptest.Path) *RelayLink {
	return &RelayLink{R: r, Forward: forward, cur: p}
}

// Get implements Link.
func (l *RelayLink) Get() (Settings, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.get(), nil
}

func (l *RelayLink) get() Settings {
	return Settings{Rate: units.Bandwidth(l.cur.Rate), Delay: l.cur.Delay, Loss: l.cur.Loss, QueueBytes: units.Bytes(l.cur.QueueBytes)}
}

// Set implements Link.
func (l *RelayLink) Set(c Change) (Settings, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.cur
	if c.Rate != nil {
		p.Rate = float64(*c.Rate)
	}
	if c.Delay != nil {
		if *c.Delay > 10*time.Second {
			return Settings{}, fmt.Errorf("delay %v above 10s", *c.Delay)
		}
		p.Delay = *c.Delay
	}
	if c.Loss != nil {
		p.Loss = *c.Loss
	}
	if c.QueueBytes != nil {
		p.QueueBytes = int(*c.QueueBytes)
	}
	l.cur = p
	l.R.SetPath(l.Forward, p)
	return l.get(), nil
}
