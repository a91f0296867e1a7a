package link

import (
	"fmt"
	"slices"
	"strings"
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

// recordingPrefetcher records the Prefetch calls a delay line makes.
type recordingPrefetcher struct {
	got   []*packet.Packet
	calls []string
}

func (r *recordingPrefetcher) Receive(now clock.Time, p *packet.Packet) { r.got = append(r.got, p) }

func (r *recordingPrefetcher) Prefetch(near, mid, far *packet.Packet) {
	for ahead, p := range []*packet.Packet{far, mid, near} {
		if p != nil {
			r.calls = append(r.calls, fmt.Sprintf("%d@%d", p.Seq, 3-ahead))
		}
	}
}

// A delay line announces each of its next packets to a Prefetcher three,
// two and one packets ahead, before delivering it, and the
// announcements change nothing in what is delivered or when.
func TestDelayLinePrefetchesAheadWithoutChangingDelivery(t *testing.T) {
	s := sim.New()
	r := &recordingPrefetcher{}
	d := NewDelayLine(s, r)
	d.SetPrefetcher(r)
	for i := range 5 {
		p := &packet.Packet{Seq: int64(i)}
		d.Push(clock.Time(i), p, 10)
	}
	s.Run()
	if len(r.got) != 5 {
		t.Fatalf("delivered %d packets, want 5", len(r.got))
	}
	for i, p := range r.got {
		if p.Seq != int64(i) {
			t.Fatalf("packet %d delivered out of order: seq %d", i, p.Seq)
		}
	}
	want := "3@3 2@2 1@1 4@3 3@2 2@1 4@2 3@1 4@1"
	if got := strings.Join(r.calls, " "); got != want {
		t.Fatalf("prefetch calls %q, want %q", got, want)
	}
}
