package network

import (
	"time"

	"github.com/cclab/cclab/cc/bbr"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
)

// Series holds time series sampled at a fixed interval: per flow (cwnd,
// latest RTT, throughput) and for the bottleneck (queue, rate).
type Series struct {
	// Interval is the sampling interval.
	Interval time.Duration
	// T holds the sample times.
	T []clock.Time
	// QueuePackets and QueueBytes are the bottleneck queue's length.
	QueuePackets []int
	QueueBytes   []units.Bytes
	// LinkMbps is the bottleneck rate (0 in exact trace mode), and
	// LinkUtil its utilisation over the last interval.
	LinkMbps []float64
	// Flows holds one series per flow, indexed like Network.Flows; flows
	// created during the run (background arrivals) have samples from
	// their creation, aligned to T by Offset.
	Flows []*FlowSeries
	// Sources holds the delivered rate of each background UDP source;
	// SourceSentMbps the rate it emitted (offered), which differs when the
	// bottleneck drops or queues its datagrams.
	SourceMbps     [][]float64
	SourceSentMbps [][]float64

	timer       *sim.Timer
	lastDeliv   []units.Bytes
	lastSrc     []units.Bytes
	lastSrcSent []units.Bytes
	// lastFlowSent and lastCarried are the flows' counters at the last
	// sample.
	lastFlowSent, lastCarried []units.Bytes
}

// FlowSeries is one flow's samples.
type FlowSeries struct {
	// Offset is the index in Series.T of the first sample.
	Offset int
	// CwndBytes, RTTms (latest sample, 0 before the first), Mbps and
	// InFlight. Mbps is in-order goodput: bytes the receiver delivered to
	// the application over the last interval, which stalls behind a hole
	// and then jumps (0 for 1.6 s on a saturated link, then 51.8 Mbit/s
	// in one bin of a 5 Mbit/s link); SentMbps and CarriedMbps say what
	// the sender sent and what the bottleneck carried for the flow.
	CwndBytes []units.Bytes
	RTTms     []float64
	Mbps      []float64
	InFlight  []units.Bytes
	// BtlBwMbps and RTpropMs are a BBR flow's model estimates (its max
	// filtered bottleneck bandwidth and its min-RTT estimate, 0 before
	// the first sample), aligned with CwndBytes; nil for other
	// controllers. The data-centre paper's Figure 2 plots them.
	BtlBwMbps []float64
	RTpropMs  []float64
	// SentMbps is the payload the sender transmitted over the last
	// interval, retransmissions included.
	SentMbps []float64
	// CarriedMbps is what the bottleneck transmitted for the flow over
	// the last interval (headers included), each packet counted whole in
	// the interval where its transmission ends: summed over flows, at most
	// the link's rate plus one packet per interval.
	CarriedMbps []float64
}

// bbrModel is a controller that exposes BBR's model (cc/bbr.BBR).
type bbrModel interface{ Snapshot() bbr.Snapshot }

func (n *Network) startSampling(interval time.Duration) {
	s := &Series{Interval: interval}
	n.Series = s
	s.timer = n.Sched.Timer(n.sample)
	s.timer.Reset(0)
}

func (n *Network) sample(now clock.Time) {
	s := n.Series
	idx := len(s.T)
	s.T = append(s.T, now)
	q := n.Bottleneck.Queue()
	s.QueuePackets = append(s.QueuePackets, q.Len())
	s.QueueBytes = append(s.QueueBytes, q.Bytes())
	s.LinkMbps = append(s.LinkMbps, n.Bottleneck.Rate().Mbps())
	for len(s.Flows) < len(n.Flows) {
		s.Flows = append(s.Flows, &FlowSeries{Offset: idx})
		s.lastDeliv = append(s.lastDeliv, 0)
		s.lastFlowSent = append(s.lastFlowSent, 0)
		s.lastCarried = append(s.lastCarried, 0)
	}
	secs := s.Interval.Seconds()
	for i, f := range n.Flows {
		fs := s.Flows[i]
		st := f.Sender.State()
		fs.CwndBytes = append(fs.CwndBytes, st.Cwnd)
		fs.InFlight = append(fs.InFlight, st.InFlight)
		fs.RTTms = append(fs.RTTms, float64(st.LatestRTT)/1e6)
		if m, ok := f.Sender.CC().(bbrModel); ok {
			snap := m.Snapshot()
			fs.BtlBwMbps = append(fs.BtlBwMbps, snap.BtlBw.Mbps())
			fs.RTpropMs = append(fs.RTpropMs, float64(snap.MinRTT)/1e6)
		}
		d := f.Receiver.DeliveredBytes
		mbps := 0.0
		if len(fs.Mbps) > 0 {
			mbps = float64(d-s.lastDeliv[i]) * 8 / secs / 1e6
		}
		s.lastDeliv[i] = d
		fs.Mbps = append(fs.Mbps, mbps)
		sent, carried := f.Sender.Stats().BytesSent, f.BottleneckBytes
		sentMbps, carriedMbps := 0.0, 0.0
		if len(fs.SentMbps) > 0 {
			sentMbps = float64(sent-s.lastFlowSent[i]) * 8 / secs / 1e6
			carriedMbps = float64(carried-s.lastCarried[i]) * 8 / secs / 1e6
		}
		s.lastFlowSent[i], s.lastCarried[i] = sent, carried
		fs.SentMbps = append(fs.SentMbps, sentMbps)
		fs.CarriedMbps = append(fs.CarriedMbps, carriedMbps)
	}
	for len(s.SourceMbps) < len(n.Sources) {
		s.SourceMbps = append(s.SourceMbps, make([]float64, idx))
		s.SourceSentMbps = append(s.SourceSentMbps, make([]float64, idx))
		s.lastSrc = append(s.lastSrc, 0)
		s.lastSrcSent = append(s.lastSrcSent, 0)
	}
	for i, src := range n.Sources {
		d := src.DeliveredBytes
		mbps := 0.0
		if idx > 0 {
			mbps = float64(d-s.lastSrc[i]) * 8 / secs / 1e6
		}
		s.lastSrc[i] = d
		s.SourceMbps[i] = append(s.SourceMbps[i], mbps)
		sent, smbps := src.SentBytes, 0.0
		if idx > 0 {
			smbps = float64(sent-s.lastSrcSent[i]) * 8 / secs / 1e6
		}
		s.lastSrcSent[i] = sent
		s.SourceSentMbps[i] = append(s.SourceSentMbps[i], smbps)
	}
	if next := now.Add(s.Interval); next <= n.end {
		s.timer.Reset(next)
	}
}
