package link

import (
	"slices"
	"testing"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/netsim/packet"
)

type logRecv struct {
	log *[]string
	tag string
}

func (r logRecv) Receive(now clock.Time, p *packet.Packet) {
	*r.log = append(*r.log, r.tag+string(rune('0'+p.Flow)))
}

// TestSharedLineKeepsPushOrder: packets of several flows share one line; a
// packet due at the same instant as a timer armed after its push comes out
// before the timer, one armed before its push after it, as if each packet
// had been scheduled as its own event when pushed.
func TestSharedLineKeepsPushOrder(t *testing.T) {
	s := sim.New()
	var log []string
	d := NewDelayLine(s, logRecv{&log, "p"})
	early := s.Timer(func(clock.Time) { log = append(log, "early") })
	late := s.Timer(func(clock.Time) { log = append(log, "late") })
	pool := &packet.Pool{}
	push := func(flow int32) {
		p := pool.Get()
		p.Flow = flow
		d.Push(0, p, 10)
	}
	early.Reset(10) // armed before every push
	push(1)
	push(2)
	late.Reset(10) // armed between the pushes
	push(3)
	s.Run()
	want := []string{"early", "p1", "p2", "late", "p3"}
	if !slices.Equal(log, want) {
		t.Fatalf("order %v, want %v", log, want)
	}
	if s.Events() != 5 {
		t.Fatalf("%d events, want one per packet and timer", s.Events())
	}
}
