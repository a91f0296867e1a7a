package network

import (
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// buildSegments records the schedule's periods with their nominal RTT.
func (n *Network) buildSegments() {
	b := n.scn.Bottleneck
	mss := transportConfig(n.scn.Transport, nil)
	pkt := mss.MSS + mss.Header
	rate, delay, lossP := b.Rate.V, b.Delay.V, n.Bottleneck.LossRate()
	seg := func(at clock.Time) Segment {
		base := 2 * delay
		if rate > 0 {
			base += rate.TxTime(pkt)
		}
		return Segment{Start: at, BaseRTT: base, Rate: rate, Loss: lossP}
	}
	n.Segments = []Segment{seg(0)}
	for _, c := range b.Schedule {
		if c.Rate.IsSet() {
			rate = c.Rate.V
		}
		if c.Delay.IsSet() {
			delay = c.Delay.V
		}
		if c.Loss != nil {
			if m, err := n.buildLoss(*c.Loss, "unused"); err == nil {
				lossP = m.Rate()
			}
		}
		s := seg(clock.Time(c.At.V))
		if s.Start == n.Segments[len(n.Segments)-1].Start {
			n.Segments[len(n.Segments)-1] = s
		} else {
			n.Segments = append(n.Segments, s)
		}
	}
}

type applyChange struct{}

func (applyChange) Handle(now clock.Time, arg any) {
	c := arg.(*change)
	c.n.apply(now, c.idx)
}

type change struct {
	n   *Network
	idx int
}

func (n *Network) scheduleChanges() {
	for i, c := range n.scn.Bottleneck.Schedule {
		n.Sched.At(clock.Time(c.At.V), applyChange{}, &change{n, i})
	}
}

// apply performs schedule entry i.
func (n *Network) apply(now clock.Time, i int) {
	c := n.scn.Bottleneck.Schedule[i]
	l := n.Bottleneck
	if c.Rate.IsSet() {
		l.SetRate(now, c.Rate.V)
	}
	if c.Delay.IsSet() {
		l.SetDelay(c.Delay.V)
	}
	if c.Loss != nil {
		// The loss stream is named after the schedule entry so that each
		// period's draws are independent of the others'.
		m, err := n.buildLoss(*c.Loss, "bottleneck/loss/"+itoa(i+1))
		if err == nil { // validated before the run
			l.SetLoss(m)
		}
	}
	if c.Queue != nil {
		if q, err := n.buildQueue(*c.Queue, l); err == nil {
			l.SetQueue(now, q)
		}
	}
	if c.Window.IsSet() {
		for _, f := range n.Flows {
			if ws, ok := f.Sender.CC().(cc.WindowSetter); ok && f.CC.Name == "fixed" {
				ws.SetCongestionWindow(now, c.Window.V)
			}
		}
	}
	if c.ScaleBackground > 0 {
		n.bgScale = c.ScaleBackground
		for _, s := range n.Sources {
			s.setScale(now, n.bgScale)
		}
	}
	for _, name := range c.StopBackground {
		n.stopBackground(now, name)
	}
	// Advance the RTI segment if this entry starts one.
	for n.segIdx+1 < len(n.Segments) && n.Segments[n.segIdx+1].Start <= now {
		n.segIdx++
	}
}

// SegmentAt returns the index of the schedule segment holding t.
func (n *Network) SegmentAt(t clock.Time) int {
	i := 0
	for i+1 < len(n.Segments) && n.Segments[i+1].Start <= t {
		i++
	}
	return i
}

// CurrentSegment returns the index of the current schedule segment.
func (n *Network) CurrentSegment() int { return n.segIdx }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	k := len(b)
	for i > 0 {
		k--
		b[k] = byte('0' + i%10)
		i /= 10
	}
	return string(b[k:])
}

// NominalRTT returns a flow's nominal RTT in segment i: the segment's base
// RTT plus twice the flow's extra delay.
func (n *Network) NominalRTT(f *Flow, i int) time.Duration {
	return n.Segments[i].BaseRTT + 2*f.ExtraDelay
}

// LinkRate returns the bottleneck's current rate (0 in exact trace mode).
func (n *Network) LinkRate() units.Bandwidth { return n.Bottleneck.Rate() }
