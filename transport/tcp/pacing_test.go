package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// lateScheduler fires every timer late by a fixed delay, as a loaded
// machine's real clock does.
type lateScheduler struct {
	*sim.Scheduler
	late time.Duration
}

type lateTimer struct {
	clock.Timer
	late time.Duration
}

func (l lateScheduler) NewTimer(f func(clock.Time)) clock.Timer {
	return lateTimer{l.Scheduler.NewTimer(f), l.late}
}

func (t lateTimer) Reset(at clock.Time) { t.Timer.Reset(at.Add(t.late)) }

// pacedWindow is a controller with a huge window and a fixed pacing rate.
type pacedWindow struct{ rate units.Bandwidth }

func (p pacedWindow) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}
func (p pacedWindow) OnAck(clock.Time, *cc.Ack)                               {}
func (p pacedWindow) OnCongestionEvent(clock.Time, *cc.LossEvent)             {}
func (p pacedWindow) OnRecoveryEnd(clock.Time)                                {}
func (p pacedWindow) OnRetransmissionTimeout(clock.Time, units.Bytes)         {}
func (p pacedWindow) CongestionWindow() units.Bytes                           { return 100 << 20 }
func (p pacedWindow) PacingRate() units.Bandwidth                             { return p.rate }

type discard struct{ pool *packet.Pool }

func (d discard) Receive(_ clock.Time, p *packet.Packet) { d.pool.Put(p) }

// TestLatePacerKeepsRate: a pacer whose timer fires 300 µs late at every
// 1 ms gap still sends at its rate (the schedule is kept, the lateness
// made up); restarting the schedule from the late firing would send 23%
// less.
func TestLatePacerKeepsRate(t *testing.T) {
	for _, late := range []time.Duration{0, 300 * time.Microsecond} {
		s := sim.New()
		var pool packet.Pool
		const rate = 12_000_000 // 1500-byte packets 1 ms apart
		snd := NewSender(Config{NoHandshake: true, Bytes: 10 << 20}, 0, lateScheduler{s, late}, &pool, discard{&pool}, pacedWindow{rate})
		snd.Start(0)
		const horizon = time.Second
		s.RunUntil(clock.Time(horizon))
		want := float64(horizon) / float64(time.Millisecond)
		got := float64(snd.Stats().SegmentsSent)
		if got < 0.98*want || got > 1.02*want+2 {
			t.Errorf("timers %v late: %v segments in %v, want %v", late, got, horizon, want)
		}
	}
}
