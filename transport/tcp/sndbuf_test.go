package tcp

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestLinuxSndbufSizes: tcp_sndbuf_expand's arithmetic. A new connection's
// SO_SNDBUF on the measured kernel is 46,080 bytes, 2 * TCP_INIT_CWND *
// 2304 for a 1448-byte MSS, so the buffer starts at 20 segments; it is
// sized for twice the window beyond that, for tp->reordering + 1 at the
// least, and at most tcp_wmem[2] (4 MiB, 1820 segments of 2304 bytes).
func TestLinuxSndbufSizes(t *testing.T) {
	if got := linuxPerMSS(1448); got != 2304 {
		t.Errorf("per_mss for a 1448-byte MSS: %d, want 2304", got)
	}
	if got := linuxPerMSS(8948); got != 16384+256 {
		t.Errorf("per_mss for a 8948-byte MSS: %d, want 16640", got)
	}
	for _, c := range []struct {
		cwnd      int64
		dupThresh int32
		want      int64 // segments
	}{
		{0, 3, 20}, {10, 3, 20}, {11, 3, 22}, {160, 3, 320}, {5, 30, 62}, {910, 3, 1820}, {1 << 20, 3, 1820}, {math.MaxInt64, 3, 1820},
	} {
		if got := linuxSndbuf(1448, c.cwnd, c.dupThresh); got != units.Bytes(c.want)*1448 {
			t.Errorf("window %d, dupthresh %d: %d bytes, want %d segments", c.cwnd, c.dupThresh, got, c.want)
		}
	}
}

// TestSendBufferLinuxGrowsWithWindow: with Config.SendBufferLinux a bulk
// sender whose window (100 segments) is far above the initial buffer
// starts buffer-limited (no new segment ends more than 20 segments above
// snd.una), grows the buffer from ACKs that find it, not the window,
// limiting (to 2 * 100 segments, then never again), and ends
// window-limited (100 segments in flight); new data never goes past the
// buffer's size at the time, losses and NewReno recovery included, and
// every byte arrives exactly once.
func TestSendBufferLinuxGrowsWithWindow(t *testing.T) {
	const mss = 1448
	for _, noSACK := range []bool{false, true} {
		for _, loss := range []float64{0, 0.01} {
			cfg := Config{Bytes: 6000 * mss, SendBufferLinux: true, NoSACK: noSACK}
			h := newHarness(t, cfg, fixedWindow(100*mss), 100*units.Mbps, 20*time.Millisecond)
			rnd := rand.New(rand.NewPCG(5, 5))
			var firstRTT, maxSpan int64
			grew, shrank := 0, false
			last := h.snd.cfg.PendingQueue
			h.fwd.drop = func(p *packet.Packet) bool {
				if p.Kind != packet.Data {
					return false
				}
				q := h.snd.cfg.PendingQueue
				if q < last {
					shrank = true
				}
				if q > last {
					grew++
				}
				last = q
				if !p.Retransmission {
					span := p.Seq + int64(p.Len) - h.snd.una
					if span > int64(q) {
						t.Errorf("sack %v loss %v: a new segment ends %d bytes above snd.una, buffer %d", !noSACK, loss, span, q)
					}
					maxSpan = max(maxSpan, span)
					if h.snd.stats.BytesAcked == 0 {
						firstRTT = max(firstRTT, span)
					}
				}
				return rnd.Float64() < loss
			}
			h.run(t, 60*time.Second)
			name := map[bool]string{false: "SACK", true: "no SACK"}[noSACK]
			if h.rcv.DeliveredBytes != cfg.Bytes {
				t.Fatalf("%s, loss %v: delivered %d, want %d", name, loss, h.rcv.DeliveredBytes, cfg.Bytes)
			}
			if firstRTT > 20*mss || firstRTT < 19*mss {
				t.Errorf("%s, loss %v: first round's span %d bytes, want the initial buffer's 20 segments", name, loss, firstRTT)
			}
			if shrank || grew == 0 || last != 200*mss {
				t.Errorf("%s, loss %v: buffer grew %d times, shrank %v, ended at %d bytes; want grown to 200 segments, never shrunk", name, loss, grew, shrank, last)
			}
			if maxSpan < 100*mss {
				t.Errorf("%s, loss %v: the span never reached the window's 100 segments (%d bytes)", name, loss, maxSpan)
			}
		}
	}
}

// TestSendBufferLinuxWithPendingQueue: the two bounds exclude each other.
func TestSendBufferLinuxWithPendingQueue(t *testing.T) {
	c := Config{SendBufferLinux: true, PendingQueue: 64 << 10}.WithDefaults()
	if err := c.Validate(); err == nil {
		t.Fatal("send_buffer linux with a pending_queue validated")
	}
	c.PendingQueue = 0
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
