package link

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/netsim/packet"
)

// DelayLine models propagation: each packet pushed in comes out after its
// delay. Packets are kept in arrival order in a ring with one timer for the
// head, so a path with thousands of packets in flight costs one heap entry,
// not thousands. When the delay drops (a link switch), a later packet can
// arrive before an earlier one, as on a real re-routed path and as in ns-3;
// it is then inserted in order, which is the only non-O(1) case.
type DelayLine struct {
	out   packet.Receiver
	timer *sim.Timer
	buf   []inflight
	head  int
	n     int
}

type inflight struct {
	at clock.Time
	p  *packet.Packet
}

// NewDelayLine returns a delay line delivering to out.
func NewDelayLine(s *sim.Scheduler, out packet.Receiver) *DelayLine {
	d := &DelayLine{out: out, buf: make([]inflight, 8)}
	d.timer = s.Timer(d.fire)
	return d
}

// Len returns the number of packets in flight on the line.
func (d *DelayLine) Len() int { return d.n }

// Push sends p, to arrive at now+delay.
func (d *DelayLine) Push(now clock.Time, p *packet.Packet, delay time.Duration) {
	at := now.Add(delay)
	if d.n == len(d.buf) {
		nb := make([]inflight, 2*len(d.buf))
		for i := range d.n {
			nb[i] = d.buf[(d.head+i)%len(d.buf)]
		}
		d.buf, d.head = nb, 0
	}
	// Insert from the tail; ties keep push order.
	i := d.n
	mask := len(d.buf)
	for i > 0 {
		prev := d.buf[(d.head+i-1)%mask]
		if prev.at <= at {
			break
		}
		d.buf[(d.head+i)%mask] = prev
		i--
	}
	d.buf[(d.head+i)%mask] = inflight{at, p}
	d.n++
	if i == 0 {
		d.timer.Reset(at)
	}
}

func (d *DelayLine) fire(now clock.Time) {
	for d.n > 0 {
		e := d.buf[d.head]
		if e.at > now {
			d.timer.Reset(e.at)
			return
		}
		d.buf[d.head] = inflight{}
		d.head = (d.head + 1) % len(d.buf)
		d.n--
		d.out.Receive(now, e.p)
	}
}

// Drain removes every packet in flight and hands it to f (end-of-run
// accounting).
func (d *DelayLine) Drain(f func(p *packet.Packet)) {
	for d.n > 0 {
		f(d.buf[d.head].p)
		d.buf[d.head] = inflight{}
		d.head = (d.head + 1) % len(d.buf)
		d.n--
	}
	d.timer.Stop()
}
