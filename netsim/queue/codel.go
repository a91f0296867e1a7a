package queue

import (
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// CoDelConfig configures CoDel; zero fields take RFC 8289's defaults.
type CoDelConfig struct {
	// Limit bounds the physical queue (required).
	Limit Limit
	// Target is the acceptable standing queue delay [5ms].
	Target time.Duration
	// Interval is the window over which the delay must stay above target
	// before dropping starts [100ms].
	Interval time.Duration
	// MTU is the byte backlog below which CoDel never drops [1500].
	MTU units.Bytes
	// ECN marks an ECN-capable packet CE where CoDel would drop it, and
	// sends it on, as Linux's codel with ecn does (codel_dequeue).
	ECN bool
}

// CoDel is Controlled Delay AQM, following RFC 8289's pseudocode (§5).
type CoDel struct {
	q    ring
	cfg  CoDelConfig
	drop func(*packet.Packet, clock.Time)

	firstAboveTime clock.Time
	dropNext       clock.Time
	count          uint32
	lastCount      uint32
	dropping       bool
	drops          int
	marks          int
}

// NewCoDel returns a CoDel queue; drop receives packets CoDel drops at
// dequeue.
func NewCoDel(cfg CoDelConfig, drop func(*packet.Packet, clock.Time)) (*CoDel, error) {
	if err := cfg.Limit.validate(); err != nil {
		return nil, err
	}
	if cfg.Target == 0 {
		cfg.Target = 5 * time.Millisecond
	}
	if cfg.Interval == 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	if cfg.Target >= cfg.Interval {
		return nil, fmt.Errorf("codel: target (%v) must be below interval (%v)", cfg.Target, cfg.Interval)
	}
	if drop == nil {
		panic("queue: NewCoDel needs a drop function")
	}
	return &CoDel{cfg: cfg, drop: drop}, nil
}

// Enqueue implements Queue: CoDel only tail-drops when the physical limit is
// reached.
func (c *CoDel) Enqueue(p *packet.Packet, now clock.Time) bool {
	if !c.cfg.Limit.admits(c.q.n, c.q.bytes, p.Size) {
		return false
	}
	p.EnqueuedAt = now
	c.q.push(p)
	return true
}

// controlLaw is RFC 8289's control_law: t + interval/sqrt(count).
func (c *CoDel) controlLaw(t clock.Time, count uint32) clock.Time {
	return t.Add(time.Duration(float64(c.cfg.Interval) / math.Sqrt(float64(count))))
}

// doDequeue is RFC 8289's dodequeue: pop and say whether the sojourn time has
// been above target for at least an interval.
func (c *CoDel) doDequeue(now clock.Time) (*packet.Packet, bool) {
	p := c.q.pop()
	if p == nil {
		c.firstAboveTime = 0
		return nil, false
	}
	sojourn := now.Sub(p.EnqueuedAt)
	if sojourn < c.cfg.Target || c.q.bytes <= c.cfg.MTU {
		c.firstAboveTime = 0
		return p, false
	}
	if c.firstAboveTime == 0 {
		c.firstAboveTime = now.Add(c.cfg.Interval)
		return p, false
	}
	return p, now >= c.firstAboveTime
}

// Dequeue implements Queue (RFC 8289 §5.5 dequeue).
func (c *CoDel) Dequeue(now clock.Time) *packet.Packet {
	p, okToDrop := c.doDequeue(now)
	if p == nil {
		c.dropping = false
		return nil
	}
	if c.dropping {
		if !okToDrop {
			c.dropping = false
		}
		for now >= c.dropNext && c.dropping {
			if c.cfg.ECN && p.Mark() {
				// Marked, not dropped: it leaves now, and the next
				// mark or drop follows the control law.
				c.marks++
				c.count++
				c.dropNext = c.controlLaw(c.dropNext, c.count)
				break
			}
			c.drops++
			c.drop(p, now)
			c.count++
			p, okToDrop = c.doDequeue(now)
			if p == nil {
				c.dropping = false
				return nil
			}
			if !okToDrop {
				c.dropping = false
			} else {
				c.dropNext = c.controlLaw(c.dropNext, c.count)
			}
		}
		return p
	}
	if okToDrop {
		if c.cfg.ECN && p.Mark() {
			c.marks++
		} else {
			c.drops++
			c.drop(p, now)
			p, _ = c.doDequeue(now)
		}
		c.dropping = true
		// Resume near the previous drop rate if dropping restarted soon
		// after it stopped (RFC 8289 §5.5).
		delta := c.count - c.lastCount
		c.count = 1
		if delta > 1 && now.Sub(c.dropNext) < 16*c.cfg.Interval {
			c.count = delta
		}
		c.dropNext = c.controlLaw(now, c.count)
		c.lastCount = c.count
	}
	return p
}

// Len implements Queue.
func (c *CoDel) Len() int { return c.q.n }

// Bytes implements Queue.
func (c *CoDel) Bytes() units.Bytes { return c.q.bytes }

// Marks implements Marker.
func (c *CoDel) Marks() int { return c.marks }

// Marking implements Marker.
func (c *CoDel) Marking() bool { return c.cfg.ECN }

// Drops returns the number of packets CoDel dropped at dequeue.
func (c *CoDel) Drops() int { return c.drops }
