package queue

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
)

// TestDropTailMarkThreshold: an ECN-capable arrival is marked CE exactly
// when the queue it joins holds at least the threshold; a non-ECT one is
// never marked; a full queue still drops.
func TestDropTailMarkThreshold(t *testing.T) {
	for _, lim := range []Limit{{Packets: 5}, {Bytes: 5 * 1500}} {
		// ECT on even arrivals, then on odd ones: the fifth (index 5)
		// joins exactly the threshold.
		for parity := range 2 {
			q, err := NewDropTail(Limit{Packets: 10})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.SetMarkThreshold(lim); err != nil {
				t.Fatal(err)
			}
			pool := &packet.Pool{}
			want := 0
			for i := range 12 {
				p := pkt(pool, 1500, int64(i))
				ect := i%2 == parity
				if ect {
					p.ECN = packet.ECT
				}
				ok := q.Enqueue(p, 0)
				if ok != (i < 10) {
					t.Fatalf("%v: arrival %d admitted %v, want %v (limit 10)", lim, i, ok, i < 10)
				}
				if !ok {
					pool.Put(p)
					continue
				}
				marked := ect && i >= 5
				if marked {
					want++
				}
				if (p.ECN&packet.CE != 0) != marked {
					t.Errorf("%v: arrival %d (ECT %v, %d queued ahead) marked %v, want %v", lim, i, ect, i, !marked, marked)
				}
			}
			if q.Marks() != want || !q.Marking() {
				t.Errorf("%v, ECT parity %d: %d marks (marking %v), want %d", lim, parity, q.Marks(), q.Marking(), want)
			}
		}
	}
	if err := (&DropTail{}).SetMarkThreshold(Limit{Packets: 3, Bytes: 3}); err == nil {
		t.Error("a threshold in packets and bytes at once was accepted")
	}
}

// TestREDMarksInsteadOfDropping: RED with ECN, under the overload of
// TestREDDropsBetweenThresholds with every packet ECN-capable, marks the
// excess instead of dropping it (nothing is dropped before the physical
// limit, which the marked packets then reach: RED's signal is only as good
// as the senders' response); with half the packets not ECT, those are
// dropped early and only ECT ones marked.
func TestREDMarksInsteadOfDropping(t *testing.T) {
	for _, allECT := range []bool{true, false} {
		q, err := NewRED(REDConfig{Limit: Limit{Packets: 100}, PacketTime: time.Millisecond, ECN: true}, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		pool := &packet.Pool{}
		earlyDrops, marks := 0, 0
		for i := range 4000 {
			now := clock.Time(i) * clock.Time(800*time.Microsecond)
			p := pkt(pool, 1500, int64(i))
			ect := allECT || i%2 == 0
			if ect {
				p.ECN = packet.ECT
			}
			full := q.Len() >= 100
			if !q.Enqueue(p, now) {
				if !full {
					earlyDrops++
					if ect {
						t.Fatalf("allECT=%v: an ECT packet was dropped early", allECT)
					}
				}
				pool.Put(p)
			} else if p.ECN&packet.CE != 0 {
				marks++
			}
			if i%5 != 4 {
				if p := q.Dequeue(now); p != nil {
					pool.Put(p)
				}
			}
		}
		if marks == 0 || marks != q.Marks() {
			t.Errorf("allECT=%v: %d marked packets seen, queue counts %d; want some, equal", allECT, marks, q.Marks())
		}
		if allECT == (earlyDrops > 0) {
			t.Errorf("allECT=%v: %d early drops", allECT, earlyDrops)
		}
	}
}

// TestCoDelMarks: CoDel with ECN, on the standing overload of
// TestCoDelKeepsSojournNearTarget with ECN-capable packets, marks where
// it would drop and drops nothing (the arrivals do not back off, so the
// queue grows; marking is the signal, not the cure).
func TestCoDelMarks(t *testing.T) {
	pool := &packet.Pool{}
	dropped := 0
	q, err := NewCoDel(CoDelConfig{Limit: Limit{Packets: 100000}, ECN: true}, func(p *packet.Packet, now clock.Time) {
		dropped++
		pool.Put(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	arrival := 909 * time.Microsecond
	next := clock.Time(0)
	seq := int64(0)
	for now := clock.Time(0); now < clock.Time(10*time.Second); now += clock.Time(time.Millisecond) {
		for ; next <= now; next = next.Add(arrival) {
			seq++
			p := pkt(pool, 1500, seq)
			p.ECN = packet.ECT
			q.Enqueue(p, next)
		}
		if p := q.Dequeue(now); p != nil {
			if p.ECN&packet.CE != 0 {
				marked++
			}
			pool.Put(p)
		}
	}
	if dropped != 0 || marked == 0 || marked != q.Marks() || q.Drops() != 0 {
		t.Errorf("dropped %d, marked %d (queue counts %d marks, %d drops); want no drops and some marks", dropped, marked, q.Marks(), q.Drops())
	}
}
