package emu

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
)

// Control changes a running emulation's bottleneck from outside (the
// network-generator RPC, rpc/netgen): every call is carried out on the
// forwarder's loop, like the scenario's own schedule. Safe from any
// goroutine; calls after the run ended fail with ErrEnded.
type Control struct {
	e     *emulation
	ended chan struct{}
}

// ErrEnded is returned by Control calls after the emulation ended.
var ErrEnded = errors.New("emu: the emulation has ended")

// LinkSettings are the bottleneck's controllable settings.
type LinkSettings struct {
	Rate  units.Bandwidth
	Delay time.Duration
	// Loss is the current random-loss rate.
	Loss float64
	// QueueBytes is the drop-tail limit in bytes set through Control (0:
	// the scenario's queue is in force).
	QueueBytes units.Bytes
}

// LinkChange lists the settings to change; nil fields stay.
type LinkChange struct {
	Rate       *units.Bandwidth
	Delay      *time.Duration
	Loss       *float64
	QueueBytes *units.Bytes
}

func (c *Control) do(f func(now clock.Time)) error {
	done := make(chan struct{})
	c.e.f.Post(func(now clock.Time) { f(now); close(done) })
	select {
	case <-done:
		return nil
	case <-c.ended:
		return ErrEnded
	}
}

// Get returns the bottleneck's current settings.
func (c *Control) Get() (LinkSettings, error) {
	var s LinkSettings
	err := c.do(func(clock.Time) { s = c.e.settings() })
	return s, err
}

// Set applies ch (validated first) and returns the new settings.
func (c *Control) Set(ch LinkChange) (LinkSettings, error) {
	switch {
	case ch.Rate != nil && (*ch.Rate <= 0 || *ch.Rate > 100e9):
		return LinkSettings{}, fmt.Errorf("rate %v out of range (0, 100 Gbit/s]", *ch.Rate)
	case ch.Delay != nil && (*ch.Delay < 0 || *ch.Delay > 10*time.Second):
		return LinkSettings{}, fmt.Errorf("delay %v out of range [0, 10s]", *ch.Delay)
	case ch.Loss != nil && (math.IsNaN(*ch.Loss) || *ch.Loss < 0 || *ch.Loss >= 1):
		return LinkSettings{}, fmt.Errorf("loss %v out of range [0, 1)", *ch.Loss)
	case ch.QueueBytes != nil && (*ch.QueueBytes < 1500 || *ch.QueueBytes > 1<<30):
		return LinkSettings{}, fmt.Errorf("queue %v bytes out of range [1500, 1 GiB]", *ch.QueueBytes)
	}
	var s LinkSettings
	var err error
	derr := c.do(func(now clock.Time) {
		l := c.e.f.Link
		if ch.Rate != nil {
			l.SetRate(now, *ch.Rate)
		}
		if ch.Delay != nil {
			l.SetDelay(*ch.Delay)
		}
		if ch.Loss != nil {
			c.e.ctlChanges++
			m, lerr := buildLoss(c.e.rnd, scenario.Loss{Model: "bernoulli", P: *ch.Loss}, fmt.Sprintf("bottleneck/control/%d", c.e.ctlChanges))
			if lerr != nil {
				err = lerr
				return
			}
			l.SetLoss(m)
		}
		if ch.QueueBytes != nil {
			// A DropTail of the new size; the scenario's step marking, if
			// any, stays.
			q, qerr := network.NewQueue(scenario.Queue{Discipline: "droptail", Limit: scenario.Size{V: *ch.QueueBytes},
				MarkThreshold: c.e.s.Bottleneck.Queue.MarkThreshold}, 0, nil, nil)
			if qerr != nil {
				err = qerr
				return
			}
			l.SetQueue(now, q)
			c.e.ctlQueue = *ch.QueueBytes
		}
		s = c.e.settings()
	})
	if derr != nil {
		return s, derr
	}
	return s, err
}

func (e *emulation) settings() LinkSettings {
	l := e.f.Link
	s := LinkSettings{Rate: l.Rate(), Delay: l.Delay(), Loss: l.LossRate()}
	s.QueueBytes = e.ctlQueue
	return s
}
