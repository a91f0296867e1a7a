// Package live runs transfers over real sockets with transport/udp and
// summarises them in the terms of `cclab run` (experiment.FlowResult), so
// that a flow on a real or emulated link and the same flow in the
// simulator are reported alike.
package live

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

// SendOptions configures one transfer.
type SendOptions struct {
	// Addr is the receiver's "host:port".
	Addr string
	// CC names the controller; Params overrides its parameters.
	CC     string
	Params map[string]float64
	// Alg, if set, is used instead of CC (an agent-driven controller);
	// CCLabel then names it in the result.
	Alg     cc.Algorithm
	CCLabel string
	// Bytes and Duration bound the transfer (at least one).
	Bytes    units.Bytes
	Duration time.Duration
	// TCP holds the transport settings (MSS, AckInterval, RTO bounds...);
	// Bytes is taken from above.
	TCP tcp.Config
	// Coding enables TCP/NC.
	Coding *udp.Coding
	// MaxRetries, see udp.Config.
	MaxRetries int
	// Attach, if set, is called with the sender before it starts: agents
	// hook into it with Every and Post.
	Attach func(s *udp.Sender) error
	// Seed seeds randomised controllers.
	Seed uint64
	// Within, if set, runs the socket's creation (e.g. inside a network
	// namespace: emu/netns.NS.Do).
	Within func(f func() error) error
}

// Result is one side's summary of a transfer.
type Result struct {
	// Role is "sender" or "receiver".
	Role string `json:"role"`
	// Peer is the other end's address; ConnID the connection id.
	Peer   string `json:"peer"`
	ConnID uint64 `json:"conn_id"`
	// WallSeconds is the connection's duration.
	WallSeconds float64 `json:"wall_seconds"`
	// Flow holds the metrics `cclab run` reports per flow (a sender knows
	// RTTs and retransmissions, a receiver what it delivered).
	Flow experiment.FlowResult `json:"flow"`
	// Drops counts received datagrams dropped, by cause.
	Drops udp.Drops `json:"drops"`
	// CorruptBytes counts delivered bytes that were not the sent ones
	// (receiver only): always 0 unless the transport is broken.
	CorruptBytes int64 `json:"corrupt_bytes"`
	// Complete reports whether a finite transfer finished.
	Complete bool `json:"complete"`
	// ECN is the connection's ECN (RFC 3168 over UDP, docs/wire.md):
	// "on" (negotiated; the sender's Flow.ECNReductions counts its window
	// reductions), "refused" (asked for, but the sender's platform could
	// not set the IP header's ECN field or the receiver could not read
	// it) or "off".
	ECN string `json:"ecn"`
	// ECTSegments and CESegments (receiver, with ECN on) count the data
	// segments that arrived ECN-capable and those a queue marked CE; a
	// path that clears the ECN field shows no ECN-capable segment.
	ECTSegments *int64 `json:"ect_segments,omitempty"`
	CESegments  *int64 `json:"ce_segments,omitempty"`
	// Extra carries what an attached agent reports (misses, steps).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// ecnState names a connection's ECN for Result.ECN.
func ecnState(asked, on bool) string {
	switch {
	case on:
		return "on"
	case asked:
		return "refused"
	}
	return "off"
}

// NewController builds a registered controller with its parameters.
func NewController(name string, params map[string]float64, mss units.Bytes, seed uint64) (cc.Algorithm, error) {
	spec, err := cc.Lookup(name)
	if err != nil {
		return nil, err
	}
	p, err := spec.Resolve(params)
	if err != nil {
		return nil, fmt.Errorf("--cc %s: %w", name, err)
	}
	return spec.New(cc.Config{MSS: mss, Params: p, Seed: seed})
}

// Send runs one transfer to o.Addr and summarises it.
func Send(ctx context.Context, o SendOptions) (*Result, error) {
	cfg := udp.Config{TCP: o.TCP, Duration: o.Duration, MaxRetries: o.MaxRetries, Coding: o.Coding}
	cfg.TCP.Bytes = o.Bytes
	if cfg.TCP.MSS == 0 {
		cfg.TCP.MSS = udp.DefaultMSS
	}
	mss := cfg.TCP.MSS
	alg, label := o.Alg, o.CCLabel
	if alg == nil {
		var err error
		if alg, err = NewController(o.CC, o.Params, mss, o.Seed); err != nil {
			return nil, err
		}
		label = o.CC
	}
	var s *udp.Sender
	dial := func() (err error) {
		s, err = udp.Dial(o.Addr, alg, cfg)
		return err
	}
	var err error
	if o.Within != nil {
		err = o.Within(dial)
	} else {
		err = dial()
	}
	if err != nil {
		return nil, err
	}
	var rtt metrics.Hist
	s.Transport().OnRTT = func(_ clock.Time, d time.Duration) { rtt.Add(d) }
	if o.Attach != nil {
		if err := o.Attach(s); err != nil {
			return nil, err
		}
	}
	r, err := s.Run(ctx)
	res := senderResult(o.Addr, label, o.Bytes, r, &rtt)
	return res, err
}

func senderResult(peer, label string, bytes units.Bytes, r udp.SenderResult, rtt *metrics.Hist) *Result {
	st := r.Final.Stats
	f := experiment.FlowResult{
		Name: "udp", CC: label, Bytes: int64(bytes),
		BytesDelivered:  int64(st.BytesAcked),
		Retransmissions: st.Retransmissions,
		RTOs:            st.RTOs,
		LossProbes:      &st.TLPs,
		FastRecoveries:  &st.FastRecoveries,
		RTOsInRecovery:  &r.Final.RTOsInRecovery,
		RTOsInLoss:      &r.Final.RTOsInLoss,
		LostRetransmits: &r.Final.LostRetransmits,
	}
	elapsed := r.End.Sub(r.Start).Seconds()
	if elapsed > 0 {
		f.GoodputMbps = round(float64(st.BytesAcked)*8/elapsed/1e6, 6)
	}
	if r.Complete {
		fct := round(elapsed, 6)
		f.FCT = &fct
	}
	if r.ECN {
		n := r.Final.ECNReductions
		f.ECNReductions = &n
	}
	rttFields(&f, rtt)
	return &Result{Role: "sender", Peer: peer, ConnID: r.ConnID, WallSeconds: round(elapsed, 6),
		Flow: f, Drops: r.Drops, Complete: r.Complete, ECN: ecnState(r.ECNAsked, r.ECN)}
}

// rttFields fills the RTT and queueing-delay columns as experiment does:
// queueing delay is the RTT above the flow's minimum.
func rttFields(f *experiment.FlowResult, h *metrics.Hist) {
	if h.Count() == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return round(float64(d)/1e6, 4) }
	minRTT := h.Min()
	f.RTTMinMs = ms(minRTT)
	f.RTTMeanMs = ms(h.Mean())
	f.RTTP50Ms = ms(h.Quantile(0.5))
	f.RTTP95Ms = ms(h.Quantile(0.95))
	f.RTTMaxMs = ms(h.Max())
	f.QdelayMeanMs = ms(h.Mean() - minRTT)
	f.QdelayP95Ms = ms(max(0, h.Quantile(0.95)-minRTT))
}

// Receive serves one connection on l and summarises it.
func Receive(ctx context.Context, l *udp.Listener) (*Result, error) {
	r, err := l.Accept(ctx)
	end := r.End
	if r.Done != clock.Never {
		end = r.Done
	}
	elapsed := end.Sub(r.Start).Seconds()
	f := experiment.FlowResult{Name: "udp", CC: "-", Bytes: r.Bytes, BytesDelivered: r.Delivered}
	if elapsed > 0 {
		f.GoodputMbps = round(float64(r.Delivered)*8/elapsed/1e6, 6)
	}
	complete := r.Bytes > 0 && r.Delivered == r.Bytes
	if complete {
		fct := round(elapsed, 6)
		f.FCT = &fct
	}
	peer := ""
	if r.Peer.IsValid() {
		peer = r.Peer.String()
	}
	res := &Result{Role: "receiver", Peer: peer, ConnID: r.ConnID, WallSeconds: round(r.End.Sub(r.Start).Seconds(), 6),
		Flow: f, Drops: r.Drops, CorruptBytes: r.Corrupt, Complete: complete, ECN: ecnState(false, r.ECN)}
	if r.ECN {
		res.ECTSegments, res.CESegments = &r.ECT, &r.CE
	}
	if err == nil && r.Corrupt > 0 {
		err = fmt.Errorf("live: %d delivered bytes differ from the sent ones", r.Corrupt)
	}
	return res, err
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
