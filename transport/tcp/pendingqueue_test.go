package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestPendingQueueBoundsSpan checks Config.PendingQueue: with a window far
// above the queue, no new segment ever ends more than the queue's size
// above the first unacknowledged byte, even with SACKed holes under loss
// and Mockets' packet timers, every byte still arrives exactly once, and
// the loss-free transfer runs at the queue's size per RTT, as a window of
// that size would.
func TestPendingQueueBoundsSpan(t *testing.T) {
	const mss = 1448
	const queue = 8 * mss
	for _, loss := range []float64{0, 0.03} {
		cfg := Config{Bytes: 400 * mss, AckInterval: 20 * time.Millisecond, PacketTimers: true, PendingQueue: queue}
		h := newHarness(t, cfg, fixedWindow(60*mss), 10*units.Mbps, 20*time.Millisecond)
		var done time.Duration
		h.snd.OnDone = func(now clock.Time) { done = now.Sub(0) }
		rnd := rand.New(rand.NewPCG(7, 7))
		var maxSpan int64
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind != packet.Data {
				return false
			}
			if !p.Retransmission {
				maxSpan = max(maxSpan, p.Seq+int64(p.Len)-h.snd.una)
			}
			return rnd.Float64() < loss
		}
		h.run(t, 60*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("loss %v: delivered %d, want %d", loss, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if maxSpan > queue {
			t.Errorf("loss %v: a new segment reached %d bytes above snd.una, queue %d", loss, maxSpan, queue)
		}
		if maxSpan < queue-mss {
			t.Errorf("loss %v: span never exceeded %d bytes: the queue, not the window, should be the limit", loss, maxSpan)
		}
		if loss > 0 {
			continue
		}
		// Queue-limited: 8 segments per RTT (40 ms propagation, plus a
		// timed ACK's wait of up to 20 ms and serialisation).
		perRTT := time.Duration(400/8) * 40 * time.Millisecond
		if done < perRTT || done > 2*perRTT {
			t.Errorf("loss-free transfer took %v, want within [%v, %v] (8 segments per RTT)", done, perRTT, 2*perRTT)
		}
	}
}

// TestPendingQueueAboveWindowChangesNothing checks that a queue larger
// than anything the window lets out leaves a transfer unchanged, event for
// event.
func TestPendingQueueAboveWindowChangesNothing(t *testing.T) {
	run := func(queue units.Bytes) Stats {
		cfg := Config{Bytes: 300 * 1448, PendingQueue: queue}
		h := newHarness(t, cfg, fixedWindow(20*1448), 10*units.Mbps, 20*time.Millisecond)
		rnd := rand.New(rand.NewPCG(3, 3))
		h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.02 }
		h.run(t, 60*time.Second)
		return h.snd.Stats()
	}
	if a, b := run(0), run(1<<30); a != b {
		t.Errorf("stats differ: unlimited %+v, 1 GiB queue %+v", a, b)
	}
}

func TestPendingQueueValidate(t *testing.T) {
	c := Config{PendingQueue: 1000}.WithDefaults()
	if err := c.Validate(); err == nil {
		t.Fatal("a pending queue below one MSS validated")
	}
	c.PendingQueue = c.MSS
	if err := c.Validate(); err != nil {
		t.Fatalf("a one-MSS queue: %v", err)
	}
}
