package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestPacketTimersExactlyOnce checks that Mockets-style retransmission
// alone (no SACK loss detection) completes a transfer under loss, delivers
// every byte exactly once, and never tells a controller to back off.
func TestPacketTimersExactlyOnce(t *testing.T) {
	cfg := Config{Bytes: 300 * 1448, AckInterval: 20 * time.Millisecond, PacketTimers: true}
	h := newHarness(t, cfg, fixedWindow(60*1448), 10*units.Mbps, 20*time.Millisecond)
	rnd := rand.New(rand.NewPCG(5, 5))
	h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.05 }
	h.run(t, 30*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	st := h.snd.Stats()
	if st.FastRecoveries != 0 {
		t.Errorf("%d fast recoveries with packet timers, want 0", st.FastRecoveries)
	}
	// About 15 of 300 segments are dropped; each needs at least one
	// retransmission.
	if st.Retransmissions < 10 {
		t.Errorf("%d retransmissions for a 5%% loss of 300 segments", st.Retransmissions)
	}
}

// TestPacketTimerPerPacketLinearBackoff drops one segment three times and
// checks Mockets' timing: the segment is resent 2 SRTT after each send,
// times 1 + its retransmission count (2, 4, 6 SRTT: linear, where RFC 6298
// would double), while the rest of the window keeps flowing.
func TestPacketTimerPerPacketLinearBackoff(t *testing.T) {
	cfg := Config{Bytes: 200 * 1448, AckInterval: 20 * time.Millisecond, PacketTimers: true}
	h := newHarness(t, cfg, fixedWindow(20*1448), 10*units.Mbps, 20*time.Millisecond)
	const victim = 50 * 1448
	var sends []clock.Time
	var srtt []time.Duration
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Data || p.Seq != victim {
			return false
		}
		sends = append(sends, h.s.Now())
		srtt = append(srtt, h.snd.RTT().SRTT())
		return len(sends) <= 3
	}
	h.run(t, 30*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if len(sends) != 4 {
		t.Fatalf("victim sent %d times, want 4 (3 drops)", len(sends))
	}
	for i := 1; i < 4; i++ {
		gap := sends[i].Sub(sends[i-1])
		want := 2 * srtt[i-1] * time.Duration(i)
		// The timer fires at the deadline; the SRTT moves a little between
		// the send and the deadline.
		if d := gap - want; d < -want/5 || d > want/5 {
			t.Errorf("retransmission %d after %v, want about %v (2 x SRTT x %d)", i, gap, want, i)
		}
	}
}

// TestPacketTimersAssumedRTT checks Mockets' start: its timers use an
// assumed 100 ms RTT until a data packet is acknowledged, so on a 1 s path
// the first window is resent at 200 ms, before any ACK can arrive, while
// TCP's timer, seeded by the handshake, resends nothing on a clean path.
func TestPacketTimersAssumedRTT(t *testing.T) {
	for _, pt := range []bool{false, true} {
		cfg := Config{Bytes: 40 * 1448, AckInterval: 20 * time.Millisecond, PacketTimers: pt}
		h := newHarness(t, cfg, fixedWindow(20*1448), 10*units.Mbps, 500*time.Millisecond)
		var firstRetx clock.Time
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind == packet.Data && p.Retransmission && firstRetx == 0 {
				firstRetx = h.s.Now()
			}
			return false
		}
		h.run(t, 30*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("packet timers %v: delivered %d, want %d", pt, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		retx := h.snd.Stats().Retransmissions
		switch {
		case !pt && retx != 0:
			t.Errorf("TCP timer: %d retransmissions on a clean path, want 0", retx)
		case pt && retx < 20:
			t.Errorf("packet timers: %d retransmissions, want the first window (20) resent at least once", retx)
		case pt && (firstRetx.Sub(0) < 1200*time.Millisecond || firstRetx.Sub(0) > 1300*time.Millisecond):
			// Handshake 1 s, then the first packet's timer at 2 x 100 ms.
			t.Errorf("packet timers: first retransmission at %v, want 1.2 s", firstRetx.Sub(0))
		}
	}
}
