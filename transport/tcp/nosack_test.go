package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// noSACKHarness checks that no ACK carries a SACK block.
func noSACKHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	h.rev.drop = func(p *packet.Packet) bool {
		if p.NSACK != 0 {
			t.Fatalf("ACK %d carries %d SACK blocks with sack off", p.AckNo, p.NSACK)
		}
		return false
	}
	return h
}

// TestNoSACKFastRetransmit: one loss is repaired by three duplicate ACKs,
// one fast retransmission and one fast recovery, no timeout.
func TestNoSACKFastRetransmit(t *testing.T) {
	cfg := Config{Bytes: 200 * 1448, NoSACK: true}
	h := noSACKHarness(t, cfg)
	dropped := false
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Seq == 14*1448 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	h.run(t, 10*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if st.RTOs != 0 || st.FastRecoveries != 1 || st.Retransmissions != 1 {
		t.Errorf("RTOs=%d recoveries=%d retransmissions=%d, want 0, 1, 1", st.RTOs, st.FastRecoveries, st.Retransmissions)
	}
}

// TestNoSACKPartialAcks: three losses in one window are repaired in one
// recovery, one retransmission per partial ACK (RFC 6582), without a timeout
// and without retransmitting anything that arrived.
func TestNoSACKPartialAcks(t *testing.T) {
	cfg := Config{Bytes: 300 * 1448, NoSACK: true}
	h := noSACKHarness(t, cfg)
	lose := map[int64]bool{40 * 1448: true, 44 * 1448: true, 47 * 1448: true}
	h.fwd.drop = func(p *packet.Packet) bool {
		if lose[p.Seq] {
			delete(lose, p.Seq)
			return true
		}
		return false
	}
	h.run(t, 10*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if st.RTOs != 0 || st.FastRecoveries != 1 || st.Retransmissions != 3 || h.rcv.Duplicates != 0 {
		t.Errorf("RTOs=%d recoveries=%d retransmissions=%d duplicates=%d, want 0, 1, 3, 0",
			st.RTOs, st.FastRecoveries, st.Retransmissions, h.rcv.Duplicates)
	}
}

// TestNoSACKRandomLoss: under random loss in both directions every byte is
// delivered exactly once and in order, and the pipe never goes negative.
func TestNoSACKRandomLoss(t *testing.T) {
	for seed := range uint64(8) {
		rnd := rand.New(rand.NewPCG(seed, 3))
		cfg := Config{Bytes: 500 * 1448, NoSACK: true}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		h.fwd.drop = func(p *packet.Packet) bool { return rnd.Float64() < 0.03 }
		h.rev.drop = func(p *packet.Packet) bool {
			if p.NSACK != 0 {
				t.Fatalf("SACK block with sack off")
			}
			return rnd.Float64() < 0.01
		}
		var delivered units.Bytes
		h.rcv.OnDeliver = func(_ clock.Time, n units.Bytes) { delivered += n }
		h.snd.OnAck = func(_ clock.Time, s *Sender) {
			if s.InFlight() < 0 || s.InFlight() > s.outBytes+s.retransOut {
				t.Fatalf("seed %d: pipe %d with %d outstanding", seed, s.InFlight(), s.outBytes)
			}
		}
		h.run(t, 120*time.Second)
		if delivered != cfg.Bytes || h.rcv.DeliveredBytes != cfg.Bytes || !h.snd.Done() {
			t.Fatalf("seed %d: delivered %d (%d), want %d, done %v", seed, delivered, h.rcv.DeliveredBytes, cfg.Bytes, h.snd.Done())
		}
		if h.snd.Stats().FastRecoveries == 0 {
			t.Fatalf("seed %d: no fast recovery at 3%% loss", seed)
		}
	}
}
