package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
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

// ackLog records what the controller is told on each ACK, forwarding to
// Reno (including Ssthresh, so the transport still paces with PRR).
type ackLog struct {
	*newreno.Reno
	acked []units.Bytes
}

func (l *ackLog) OnAck(now clock.Time, a *cc.Ack) {
	l.acked = append(l.acked, a.AckedBytes)
	l.Reno.OnAck(now, a)
}

// TestNoSACKDeliveredAccounting: the ACK that fills a hole acknowledges
// the whole run of segments the receiver had buffered, but the duplicate
// ACKs already counted those as delivered, so the controller is told of the
// hole only (Linux tcp_remove_reno_sacks: max(acked - sacked_out, 1)) and
// does not grow its window on the buffered run.
func TestNoSACKDeliveredAccounting(t *testing.T) {
	cfg := Config{Bytes: 200 * 1448, NoSACK: true}
	alg := &ackLog{Reno: reno(1448).(*newreno.Reno)}
	h := newHarness(t, cfg, alg, 10*units.Mbps, 20*time.Millisecond)
	dropped := false
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Seq == 30*1448 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	h.run(t, 10*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes || h.snd.Stats().FastRecoveries != 1 {
		t.Fatalf("delivered %d of %d, %d recoveries", h.rcv.DeliveredBytes, cfg.Bytes, h.snd.Stats().FastRecoveries)
	}
	var total, most units.Bytes
	for _, a := range alg.acked {
		total += a
		most = max(most, a)
	}
	// Delayed ACKs cover two segments; the hole-filling ACK would cover
	// the dozens that arrived after the hole.
	if most > 2*1448 {
		t.Errorf("the controller was told of %d bytes on one ACK, want at most two segments", most)
	}
	if total >= cfg.Bytes {
		t.Errorf("the controller was told of %d bytes, want fewer than the %d sent: the duplicates' segments count on arrival", total, cfg.Bytes)
	}
}

// TestNoSACKHoldAtRecoveryPoint: when the first segment sent after fast
// recovery began is lost, the ACK that ends the repair stops exactly at
// the recovery point, and Linux stays in recovery until something above it
// is acknowledged (RFC 6582's guard against false fast retransmits): the
// hole is repaired by the retransmission timer, not by a second fast
// recovery.
func TestNoSACKHoldAtRecoveryPoint(t *testing.T) {
	cfg := Config{Bytes: 200 * 1448, NoSACK: true}
	h := noSACKHarness(t, cfg)
	point := int64(-1)
	h.snd.OnAck = func(_ clock.Time, s *Sender) {
		if point < 0 && s.phase == recovery {
			point = s.recoveryPoint
		}
	}
	var first, second bool
	h.fwd.drop = func(p *packet.Packet) bool {
		switch {
		case p.Seq == 30*1448 && !first:
			first = true
			return true
		case p.Seq == point && !second:
			second = true
			return true
		}
		return false
	}
	h.run(t, 20*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes || !second {
		t.Fatalf("delivered %d of %d; segment at the recovery point (%d) dropped: %v", h.rcv.DeliveredBytes, cfg.Bytes, point, second)
	}
	if st.FastRecoveries != 1 || st.RTOs != 1 || st.Retransmissions != 2 {
		t.Errorf("recoveries=%d RTOs=%d retransmissions=%d, want 1, 1, 2", st.FastRecoveries, st.RTOs, st.Retransmissions)
	}
}
