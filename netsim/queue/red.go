package queue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// REDConfig configures RED. Zero fields take the defaults in brackets, which
// are ns-3's RedQueueDisc defaults (and Floyd's recommendations).
type REDConfig struct {
	// Limit bounds the physical queue (required).
	Limit Limit
	// MinTh and MaxTh are the average-queue thresholds in packets [5, 15].
	MinTh, MaxTh float64
	// MaxP is the drop probability at MaxTh [0.02, i.e. ns-3's LInterm 50].
	MaxP float64
	// Wq is the averaging weight [0.002].
	Wq float64
	// Gentle ramps the drop probability from MaxP to 1 between MaxTh and
	// 2*MaxTh instead of dropping everything above MaxTh [true; set
	// NotGentle to disable].
	NotGentle bool
	// PacketTime is the transmission time of a typical packet, used to decay
	// the average over idle periods (Floyd and Jacobson §4, "m"). Zero
	// disables the idle correction.
	PacketTime time.Duration
	// ECN marks an ECN-capable packet CE where RED would drop it early,
	// as Linux's sch_red with ecn does (in the gentle and the hard region
	// alike); other packets are dropped, and a full queue drops all.
	ECN bool
}

// RED is Random Early Detection (Floyd and Jacobson, 1993).
type RED struct {
	q         ring
	cfg       REDConfig
	rnd       *rand.Rand
	avg       float64
	count     int // packets since the last drop while avg is in [MinTh, MaxTh)
	marks     int
	idleSince clock.Time
	idle      bool
}

// NewRED returns a RED queue drawing from rnd.
func NewRED(cfg REDConfig, rnd *rand.Rand) (*RED, error) {
	if err := cfg.Limit.validate(); err != nil {
		return nil, err
	}
	if rnd == nil {
		panic("queue: NewRED needs a random source")
	}
	if cfg.MinTh == 0 {
		cfg.MinTh = 5
	}
	if cfg.MaxTh == 0 {
		cfg.MaxTh = 15
	}
	if cfg.MaxP == 0 {
		cfg.MaxP = 0.02
	}
	if cfg.Wq == 0 {
		cfg.Wq = 0.002
	}
	switch {
	case cfg.MinTh < 0 || cfg.MaxTh <= cfg.MinTh:
		return nil, fmt.Errorf("red: need 0 <= min_th < max_th, got min_th=%g max_th=%g", cfg.MinTh, cfg.MaxTh)
	case cfg.MaxP <= 0 || cfg.MaxP > 1:
		return nil, fmt.Errorf("red: max_p must be in (0, 1], got %g", cfg.MaxP)
	case cfg.Wq <= 0 || cfg.Wq > 1:
		return nil, fmt.Errorf("red: w_q must be in (0, 1], got %g", cfg.Wq)
	}
	return &RED{cfg: cfg, rnd: rnd, idle: true}, nil
}

// Enqueue implements Queue.
func (r *RED) Enqueue(p *packet.Packet, now clock.Time) bool {
	c := &r.cfg
	if r.idle && r.q.n == 0 && c.PacketTime > 0 {
		// Decay as if m small packets had been sent during the idle time.
		m := float64(now.Sub(r.idleSince)) / float64(c.PacketTime)
		r.avg *= math.Pow(1-c.Wq, m)
	} else {
		r.avg = (1-c.Wq)*r.avg + c.Wq*float64(r.q.n)
	}
	r.idle = false
	drop := false
	switch {
	case r.avg < c.MinTh:
		r.count = -1
	case r.avg < c.MaxTh:
		r.count++
		pb := c.MaxP * (r.avg - c.MinTh) / (c.MaxTh - c.MinTh)
		drop = r.early(pb)
	case !c.NotGentle && r.avg < 2*c.MaxTh:
		r.count++
		pb := c.MaxP + (1-c.MaxP)*(r.avg-c.MaxTh)/c.MaxTh
		drop = r.early(pb)
	default:
		drop = true
		r.count = 0
	}
	if !c.Limit.admits(r.q.n, r.q.bytes, p.Size) {
		return false
	}
	if drop {
		if !c.ECN || !p.Mark() {
			return false
		}
		r.marks++
	}
	p.EnqueuedAt = now
	r.q.push(p)
	return true
}

// early applies the count-based uniformisation pa = pb/(1-count*pb) that
// spreads drops evenly (Floyd and Jacobson §7).
func (r *RED) early(pb float64) bool {
	pa := 1.0
	if d := 1 - float64(r.count)*pb; d > 0 {
		pa = pb / d
	}
	if r.rnd.Float64() < pa {
		r.count = 0
		return true
	}
	return false
}

// Dequeue implements Queue.
func (r *RED) Dequeue(now clock.Time) *packet.Packet {
	p := r.q.pop()
	if r.q.n == 0 && !r.idle {
		r.idle, r.idleSince = true, now
	}
	return p
}

// Len implements Queue.
func (r *RED) Len() int { return r.q.n }

// Bytes implements Queue.
func (r *RED) Bytes() units.Bytes { return r.q.bytes }

// Marks implements Marker.
func (r *RED) Marks() int { return r.marks }

// Marking implements Marker.
func (r *RED) Marking() bool { return r.cfg.ECN }

// Avg returns the average queue length in packets.
func (r *RED) Avg() float64 { return r.avg }
