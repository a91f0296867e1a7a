package link

import (
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/queue"
	"github.com/cclab/cclab/netsim/trace"
)

type departure struct {
	at  clock.Time
	seq int64
}

func newLink(t *testing.T, cfg Config) (*sim.Scheduler, *packet.Pool, *Link, *[]departure) {
	t.Helper()
	s := sim.New()
	pool := &packet.Pool{}
	if cfg.Queue == nil {
		cfg.Queue, _ = queue.NewDropTail(queue.Limit{Packets: 1000})
	}
	l, err := New(s, pool, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []departure
	l.Output = func(now clock.Time, p *packet.Packet, d time.Duration) {
		out = append(out, departure{now, p.Seq})
		pool.Put(p)
	}
	return s, pool, l, &out
}

type send struct {
	l    *Link
	pool *packet.Pool
	size units.Bytes
}

func (x send) Handle(now clock.Time, arg any) {
	p := x.pool.Get()
	p.Size, p.Seq = x.size, arg.(int64)
	x.l.Receive(now, p)
}

func TestRateChangeMidPacket(t *testing.T) {
	s, pool, l, out := newLink(t, Config{Rate: units.Mbps})
	// A 1500-byte packet takes 12 ms at 1 Mbit/s. After 6 ms (half sent)
	// the rate drops to 500 kbit/s: the other 6000 bits take 12 ms more.
	s.At(0, send{l, pool, 1500}, int64(1))
	s.RunUntil(clock.Time(6 * time.Millisecond))
	l.SetRate(s.Now(), 500*units.Kbps)
	s.Run()
	if len(*out) != 1 || (*out)[0].at != clock.Time(18*time.Millisecond) {
		t.Fatalf("departures %v, want one at 18ms", *out)
	}
	// A zero rate stalls the link; restoring it resumes where it stopped.
	s.At(s.Now(), send{l, pool, 1500}, int64(2))
	s.RunUntil(s.Now().Add(12 * time.Millisecond)) // half of it at 500 kbit/s
	l.SetRate(s.Now(), 0)
	s.RunUntil(s.Now().Add(time.Second))
	if len(*out) != 1 {
		t.Fatalf("a stalled link sent a packet")
	}
	l.SetRate(s.Now(), units.Mbps)
	resume := s.Now()
	s.Run()
	if got, want := (*out)[1].at, resume.Add(6*time.Millisecond); got != want {
		t.Errorf("resumed packet left at %v, want %v", got, want)
	}
}

// TestTraceOpportunities checks mm-link's semantics: an opportunity carries
// 1500 bytes, small packets share it, a large one spans two, and unused
// bytes are not banked.
func TestTraceOpportunities(t *testing.T) {
	tr, err := trace.Parse(strings.NewReader("10\n20\n30\n40\n50\n1000\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	s, pool, l, out := newLink(t, Config{Trace: tr})
	// Three 500-byte packets at 5 ms all leave at the 10 ms opportunity.
	for i := range 3 {
		s.At(clock.Time(5*time.Millisecond), send{l, pool, 500}, int64(i))
	}
	// A 2000-byte packet at 15 ms leaves at 30 ms (1500 at 20, 500 at 30).
	s.At(clock.Time(15*time.Millisecond), send{l, pool, 2000}, int64(10))
	// Nothing queued at 40 ms: its bytes are wasted; a packet arriving at
	// 45 ms waits for 50 ms.
	s.At(clock.Time(45*time.Millisecond), send{l, pool, 1500}, int64(20))
	s.Run()
	want := []departure{{10e6, 0}, {10e6, 1}, {10e6, 2}, {30e6, 10}, {50e6, 20}}
	if len(*out) != len(want) {
		t.Fatalf("departures %v, want %v", *out, want)
	}
	for i := range want {
		if (*out)[i] != want[i] {
			t.Errorf("departure %d = %v, want %v", i, (*out)[i], want[i])
		}
	}
	// Capacity counts every opportunity, used or not: 5 up to 50 ms.
	if got := l.Capacity(clock.Time(60 * time.Millisecond)); got != 5*1500 {
		t.Errorf("capacity up to 60ms = %d, want %d", got, 5*1500)
	}
}

func TestDelayLineReorderOnDelayDrop(t *testing.T) {
	s := sim.New()
	var got []int64
	d := NewDelayLine(s, recv(func(now clock.Time, p *packet.Packet) { got = append(got, p.Seq) }))
	pool := &packet.Pool{}
	for i, delay := range []time.Duration{500, 500, 125, 125} {
		p := pool.Get()
		p.Seq = int64(i)
		d.Push(clock.Time(i), p, delay*time.Millisecond)
	}
	s.Run()
	// After the delay drops, later packets overtake earlier ones, as on a
	// re-routed path (and in ns-3).
	want := []int64{2, 3, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("arrival order %v, want %v", got, want)
		}
	}
}

type recv func(now clock.Time, p *packet.Packet)

func (r recv) Receive(now clock.Time, p *packet.Packet) { r(now, p) }

// TestTraceOpportunityAtArrival checks mm-link's order at an opportunity's
// instant: LinkQueue::read_packet burns the opportunities due by the
// packet's arrival before it queues the packet, so a packet that arrives
// exactly at an opportunity leaves at the next one: when it reaches an
// empty link, when its arrival is handled before the opportunity (it is
// in the queue, behind a packet the opportunity serves) and when it is
// handled after it (the opportunity has just found the queue empty, and
// must not serve twice). And the opportunity is served before the packet
// is queued, so a packet arriving at a full queue's opportunity finds the
// room the opportunity frees.
func TestTraceOpportunityAtArrival(t *testing.T) {
	tr, err := trace.Parse(strings.NewReader("10\n20\n30\n40\n1000\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	const ms = clock.Time(time.Millisecond)
	cases := []struct {
		name  string
		limit int // the DropTail queue's packets (0: 1000)
		// at schedules the arrivals on a fresh link.
		at   func(s *sim.Scheduler, pool *packet.Pool, l *Link)
		want []departure
	}{
		{"empty link", 0, func(s *sim.Scheduler, pool *packet.Pool, l *Link) {
			s.At(10*ms, send{l, pool, 1500}, int64(0))
		}, []departure{{20 * ms, 0}}},
		{"arrival first", 0, func(s *sim.Scheduler, pool *packet.Pool, l *Link) {
			// Scheduled before the link arms the 10 ms opportunity (at
			// 5 ms), so handled before it: seq 0 leaves at 10 ms with
			// 1000 bytes of the opportunity left, which seq 1 may not use.
			s.At(5*ms, send{l, pool, 500}, int64(0))
			s.At(10*ms, send{l, pool, 1000}, int64(1))
		}, []departure{{10 * ms, 0}, {20 * ms, 1}}},
		{"opportunity first", 0, func(s *sim.Scheduler, pool *packet.Pool, l *Link) {
			// Scheduled at 7 ms, after the link armed the opportunity.
			s.At(5*ms, send{l, pool, 500}, int64(0))
			s.At(7*ms, later{s, 10 * ms, send{l, pool, 1000}}, int64(1))
		}, []departure{{10 * ms, 0}, {20 * ms, 1}}},
		{"full queue", 1, func(s *sim.Scheduler, pool *packet.Pool, l *Link) {
			// Seq 0 fills the one-packet queue at 5 ms; seq 1, handled
			// before the 10 ms opportunity, is queued after it serves seq
			// 0, not dropped.
			s.At(5*ms, send{l, pool, 1500}, int64(0))
			s.At(10*ms, send{l, pool, 1500}, int64(1))
		}, []departure{{10 * ms, 0}, {20 * ms, 1}}},
	}
	for _, c := range cases {
		cfg := Config{Trace: tr}
		if c.limit > 0 {
			cfg.Queue, _ = queue.NewDropTail(queue.Limit{Packets: c.limit})
		}
		s, pool, l, out := newLink(t, cfg)
		c.at(s, pool, l)
		s.Run()
		if len(*out) != len(c.want) {
			t.Errorf("%s: departures %v, want %v", c.name, *out, c.want)
			continue
		}
		for i := range c.want {
			if (*out)[i] != c.want[i] {
				t.Errorf("%s: departure %d = %v, want %v", c.name, i, (*out)[i], c.want[i])
			}
		}
	}
}

// later schedules h at a fixed time when it runs.
type later struct {
	s  *sim.Scheduler
	at clock.Time
	h  send
}

func (x later) Handle(now clock.Time, arg any) { x.s.At(x.at, x.h, arg) }
