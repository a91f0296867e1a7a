package emu

import (
	"fmt"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/rng"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	nlink "github.com/cclab/cclab/netsim/link"
	"github.com/cclab/cclab/netsim/loss"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/queue"
	"github.com/cclab/cclab/netsim/trace"
)

// The bottleneck is built as experiment/network builds the simulator's,
// with the same random stream names, so a scenario's loss draws are the
// simulator's too (the packets they apply to differ, being real).

// buildLoss returns the model for a loss spec.
func buildLoss(r rng.Source, l scenario.Loss, stream string) (loss.Model, error) {
	switch l.Model {
	case "bernoulli":
		if l.P == 0 {
			return loss.None{}, nil
		}
		return loss.NewBernoulli(l.P, r.Stream(stream))
	case "gilbert-elliott":
		bad := 1.0
		if l.LossBad != nil {
			bad = *l.LossBad
		}
		return loss.NewGilbertElliott(loss.GEConfig{P: l.P, R: l.R, LossGood: l.LossGood, LossBad: bad}, r.Stream(stream))
	}
	return loss.None{}, nil
}

func (e *emulation) buildQueue(q scenario.Queue, l *nlink.Link) (queue.Queue, error) {
	return network.NewQueue(q, e.s.Bottleneck.Rate.V, e.rnd.Stream("bottleneck/red"), l.DropFunc())
}

// buildBottleneck is the forwarder's link builder.
func (e *emulation) buildBottleneck(s *sim.Scheduler, pool *packet.Pool, obs nlink.Observer) (*nlink.Link, error) {
	b := e.s.Bottleneck
	cfg := nlink.Config{Rate: b.Rate.V, Delay: b.Delay.V}
	if b.Trace != "" {
		path := e.s.Path(b.Trace)
		tr, err := trace.Shared.Piece(path, b.TraceStart.V, b.TraceLength.V)
		if err != nil {
			return nil, fmt.Errorf("bottleneck.trace: %w", err)
		}
		offset := b.TraceStart.V
		if b.TraceLength.V > 0 {
			offset = 0
		}
		if b.TraceMode == "average" {
			rates, err := trace.Shared.WindowRates(path, b.TraceStart.V, b.TraceLength.V, b.TraceWindow.V)
			if err != nil {
				return nil, fmt.Errorf("bottleneck.trace_window: %w", err)
			}
			e.trRates = make([]float64, len(rates))
			for i, r := range rates {
				e.trRates[i] = float64(r)
			}
			e.trWindow = b.TraceWindow.V
			e.trIdx = int(offset/b.TraceWindow.V) % len(rates)
			cfg.Rate = max(rates[e.trIdx], 1)
		} else {
			cfg.Trace = tr
			cfg.TraceOffset = offset
		}
	}
	lm, err := buildLoss(e.rnd, b.Loss, "bottleneck/loss")
	if err != nil {
		return nil, err
	}
	cfg.Loss = lm
	ph, _ := queue.NewDropTail(queue.Limit{Packets: 1})
	cfg.Queue = ph
	l, err := nlink.New(s, pool, cfg, obs)
	if err != nil {
		return nil, err
	}
	q, err := e.buildQueue(b.Queue, l)
	if err != nil {
		return nil, fmt.Errorf("bottleneck.queue: %w", err)
	}
	l.SetQueue(0, q)
	if e.trRates != nil {
		var tm *sim.Timer
		tm = s.Timer(func(now clock.Time) {
			e.trIdx = (e.trIdx + 1) % len(e.trRates)
			l.SetRate(now, units.Bandwidth(e.trRates[e.trIdx]))
			tm.Reset(now.Add(e.trWindow))
		})
		l.SetRate(0, units.Bandwidth(e.trRates[e.trIdx]))
		tm.Reset(clock.Time(e.trWindow))
	}
	return l, nil
}

// segment is one period of the link schedule, for RTI.
type segment struct {
	start   clock.Time
	baseRTT time.Duration
}

// buildSegments mirrors the simulator's: the nominal RTT of a period is
// twice its propagation delay plus one full packet's serialisation.
func (e *emulation) buildSegments() {
	b := e.s.Bottleneck
	const pkt = 1500 // a full kernel segment: MSS 1448 + 52 header bytes
	rate, delay := b.Rate.V, b.Delay.V
	seg := func(at clock.Time) segment {
		base := 2 * delay
		if rate > 0 {
			base += rate.TxTime(pkt)
		}
		return segment{start: at, baseRTT: base}
	}
	e.segments = []segment{seg(0)}
	for _, c := range b.Schedule {
		if c.Rate.IsSet() {
			rate = c.Rate.V
		}
		if c.Delay.IsSet() {
			delay = c.Delay.V
		}
		sg := seg(clock.Time(c.At.V))
		if sg.start == e.segments[len(e.segments)-1].start {
			e.segments[len(e.segments)-1] = sg
		} else {
			e.segments = append(e.segments, sg)
		}
	}
}

func (e *emulation) scheduleChanges() {
	for i, c := range e.s.Bottleneck.Schedule {
		e.f.S.Timer(func(now clock.Time) { e.apply(now, i) }).Reset(clock.Time(c.At.V))
	}
}

// apply performs schedule entry i, as the simulator does.
func (e *emulation) apply(now clock.Time, i int) {
	c := e.s.Bottleneck.Schedule[i]
	l := e.f.Link
	if c.Rate.IsSet() {
		l.SetRate(now, c.Rate.V)
	}
	if c.Delay.IsSet() {
		l.SetDelay(c.Delay.V)
	}
	if c.Loss != nil {
		if m, err := buildLoss(e.rnd, *c.Loss, fmt.Sprintf("bottleneck/loss/%d", i+1)); err == nil {
			l.SetLoss(m)
		}
	}
	if c.Queue != nil {
		if q, err := e.buildQueue(*c.Queue, l); err == nil {
			l.SetQueue(now, q)
		}
	}
	if c.ScaleBackground > 0 {
		e.bgScale = c.ScaleBackground
		for _, s := range e.sources {
			s.setScale(now, e.bgScale)
		}
	}
	for _, name := range c.StopBackground {
		e.stopBackground(name)
	}
	for e.segIdx+1 < len(e.segments) && e.segments[e.segIdx+1].start <= now {
		e.segIdx++
	}
}

// lossHops is a flow's lossy hops in series (scenario loss_hops): a packet
// is lost on the first hop that loses it, and the later hops draw nothing
// for it, as the simulator's (experiment/network's moreHops) do.
type lossHops []loss.Model

func (h lossHops) Lose() bool {
	for _, m := range h {
		if m.Lose() {
			return true
		}
	}
	return false
}

func (h lossHops) Rate() float64 {
	keep := 1.0
	for _, m := range h {
		keep *= 1 - m.Rate()
	}
	return 1 - keep
}
