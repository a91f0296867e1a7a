package queue

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

func pkt(pool *packet.Pool, size units.Bytes, seq int64) *packet.Packet {
	p := pool.Get()
	p.Size, p.Seq = size, seq
	return p
}

// FuzzDropTail drives a DropTail queue with an op-encoded input and checks it
// against a shadow FIFO: conservation (in = out + dropped + queued), order,
// and the limit.
func FuzzDropTail(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 0, 200, 255}, true)
	f.Add([]byte{9, 9, 9, 9, 9, 0}, false)
	f.Fuzz(func(t *testing.T, ops []byte, byPackets bool) {
		lim := Limit{Bytes: 6000}
		if byPackets {
			lim = Limit{Packets: 4}
		}
		q, err := NewDropTail(lim)
		if err != nil {
			t.Fatal(err)
		}
		pool := &packet.Pool{}
		var shadow []int64
		var in, out, dropped int
		seq := int64(0)
		for _, op := range ops {
			if op%3 == 0 {
				p := q.Dequeue(0)
				if len(shadow) == 0 {
					if p != nil {
						t.Fatalf("dequeued %d from an empty queue", p.Seq)
					}
					continue
				}
				if p == nil || p.Seq != shadow[0] {
					t.Fatalf("dequeued %v, want seq %d", p, shadow[0])
				}
				shadow = shadow[1:]
				out++
				pool.Put(p)
				continue
			}
			size := units.Bytes(40 + int(op)*6)
			in++
			seq++
			p := pkt(pool, size, seq)
			if q.Enqueue(p, 0) {
				shadow = append(shadow, seq)
			} else {
				dropped++
				pool.Put(p)
			}
			if lim.Packets > 0 && q.Len() > lim.Packets || lim.Bytes > 0 && q.Bytes() > lim.Bytes {
				t.Fatalf("queue at %d packets / %d bytes exceeds %v", q.Len(), q.Bytes(), lim)
			}
		}
		if in != out+dropped+q.Len() || q.Len() != len(shadow) || pool.Live() != q.Len() {
			t.Fatalf("conservation: in %d, out %d, dropped %d, queued %d (shadow %d, live %d)", in, out, dropped, q.Len(), len(shadow), pool.Live())
		}
	})
}

// TestREDDropsBetweenThresholds offers a steady overload and checks RED's
// average queue settles between its thresholds, where it drops early,
// instead of filling the physical queue like DropTail.
func TestREDDropsBetweenThresholds(t *testing.T) {
	q, err := NewRED(REDConfig{Limit: Limit{Packets: 100}, PacketTime: time.Millisecond}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	pool := &packet.Pool{}
	drops, maxLen := 0, 0
	// Arrivals at 1.25x the service rate.
	now := clock.Time(0)
	for i := range 40000 {
		now = clock.Time(i) * clock.Time(800*time.Microsecond)
		if !q.Enqueue(pkt(pool, 1500, int64(i)), now) {
			drops++
		}
		if i%5 != 4 { // serve 4 of every 5 arrivals
			if p := q.Dequeue(now); p != nil {
				pool.Put(p)
			}
		}
		maxLen = max(maxLen, q.Len())
	}
	if q.Avg() < 5 || q.Avg() > 30 {
		t.Errorf("average queue %.1f, want between min_th 5 and 2*max_th 30", q.Avg())
	}
	if maxLen >= 100 {
		t.Errorf("queue reached its physical limit (%d): RED did not drop early", maxLen)
	}
	// The excess 20% of arrivals must be dropped in steady state.
	if rate := float64(drops) / 40000; rate < 0.15 || rate > 0.25 {
		t.Errorf("drop rate %.3f, want about 0.2", rate)
	}
}

// TestCoDelKeepsSojournNearTarget serves a standing overload and checks that
// CoDel keeps the queueing delay near its target where DropTail would let it
// grow to the limit.
func TestCoDelKeepsSojournNearTarget(t *testing.T) {
	pool := &packet.Pool{}
	dropped := 0
	q, err := NewCoDel(CoDelConfig{Limit: Limit{Packets: 10000}}, func(p *packet.Packet, now clock.Time) {
		dropped++
		pool.Put(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Service: one packet per ms. Arrivals at 1.1x that rate, unresponsive:
	// CoDel's drop rate ramps up (interval/sqrt(count)) until it matches
	// the 10% excess, which takes a few seconds; measure after that.
	arrival := 909 * time.Microsecond
	var sojourns []time.Duration
	nextArrival := clock.Time(0)
	seq := int64(0)
	for now := clock.Time(0); now < clock.Time(30*time.Second); now += clock.Time(time.Millisecond) {
		for ; nextArrival <= now; nextArrival = nextArrival.Add(arrival) {
			seq++
			q.Enqueue(pkt(pool, 1500, seq), nextArrival)
		}
		if p := q.Dequeue(now); p != nil {
			if now > clock.Time(20*time.Second) {
				sojourns = append(sojourns, now.Sub(p.EnqueuedAt))
			}
			pool.Put(p)
		}
	}
	var sum time.Duration
	for _, s := range sojourns {
		sum += s
	}
	mean := sum / time.Duration(len(sojourns))
	// Unresponsive traffic makes the control law oscillate around the
	// target (it is built for flows that back off), but the standing queue
	// stays tens of milliseconds where DropTail would hold seconds.
	if mean > 50*time.Millisecond {
		t.Errorf("mean sojourn %v in steady state, want within ten targets of 5 ms", mean)
	}
	// It must drop the excess: 1 - 1/1.1 of the arrivals.
	if frac := float64(dropped) / float64(seq); frac < 0.07 || frac > 0.12 {
		t.Errorf("dropped %.3f of arrivals, want about 0.091", frac)
	}
}

func TestBadConfigs(t *testing.T) {
	if _, err := NewDropTail(Limit{}); err == nil {
		t.Error("zero limit accepted")
	}
	if _, err := NewRED(REDConfig{Limit: Limit{Packets: 10}, MinTh: 20, MaxTh: 10}, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("min_th > max_th accepted")
	}
	if _, err := NewCoDel(CoDelConfig{Limit: Limit{Packets: 10}, Target: time.Second, Interval: time.Millisecond}, func(*packet.Packet, clock.Time) {}); err == nil {
		t.Error("target > interval accepted")
	}
}
