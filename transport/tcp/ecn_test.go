package tcp

import (
	"slices"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// ecnEvents records the controller's congestion events with their kind.
type ecnEvents struct {
	cc.Algorithm
	ecn, loss, inCWR, ends int
	// The window just before and after the echo's event.
	cwndBeforeECN, cwndAfterECN units.Bytes
}

// Ssthresh passes the wrapped controller's on, so that the transport
// paces its reductions with PRR as it does the controller's.
func (e *ecnEvents) Ssthresh() units.Bytes { return e.Algorithm.(prrTarget).Ssthresh() }

func (e *ecnEvents) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	switch {
	case ev.ECN:
		e.ecn++
	case ev.InCWR:
		e.inCWR++
	default:
		e.loss++
	}
	if ev.ECN {
		e.cwndBeforeECN = e.CongestionWindow()
	}
	e.Algorithm.OnCongestionEvent(now, ev)
	if ev.ECN {
		e.cwndAfterECN = e.CongestionWindow()
	}
}

func (e *ecnEvents) OnRecoveryEnd(now clock.Time) {
	e.ends++
	e.Algorithm.OnRecoveryEnd(now)
}

// echoLog records every ACK the receiver sends: its cumulative ACK and
// whether it carried ECE.
type echoLog struct {
	ackNo []int64
	ece   []bool
}

func logEchoes(h *harness) *echoLog {
	l := &echoLog{}
	h.rev.drop = func(p *packet.Packet) bool {
		if p.Kind == packet.Ack {
			l.ackNo = append(l.ackNo, p.AckNo)
			l.ece = append(l.ece, p.ECN&packet.ECE != 0)
		}
		return false
	}
	return l
}

// TestECNEcho: one segment marked CE. The receiver echoes ECE on every
// ACK from that segment's until the first segment with CWR (RFC 3168
// §6.1.3, Linux TCP_ECN_DEMAND_CWR); the sender reduces its window once
// (Reno: to half), sets CWR on exactly one segment, retransmits nothing,
// and ends the reduction once data above its point is acknowledged.
// Without ECN configured the sender's segments are not ECT and the mark
// cannot be set.
func TestECNEcho(t *testing.T) {
	for _, on := range []bool{true, false} {
		cfg := Config{Bytes: 400 * 1448}
		if on {
			cfg.ECN = ECNRFC3168
		}
		alg := &ecnEvents{Algorithm: reno(1448)}
		h := newHarness(t, cfg, alg, 10*units.Mbps, 20*time.Millisecond)
		acks := logEchoes(h)
		var ect, cwr int
		var cwrSeq int64 = -1
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind != packet.Data {
				return false
			}
			if p.ECN&packet.ECT != 0 {
				ect++
			}
			if p.ECN&packet.CWR != 0 {
				cwr++
				cwrSeq = p.Seq
			}
			if p.Seq == 60*1448 && !p.Retransmission {
				p.Mark()
			}
			return false
		}
		h.run(t, 20*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("ecn=%v: delivered %d of %d", on, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if st.Retransmissions != 0 || st.FastRecoveries != 0 {
			t.Errorf("ecn=%v: %d retransmissions, %d recoveries; want none", on, st.Retransmissions, st.FastRecoveries)
		}
		if !on {
			if ect != 0 || alg.ecn != 0 || h.snd.ECNReductions() != 0 {
				t.Errorf("without ECN: %d ECT segments, %d echoes, %d reductions; want none", ect, alg.ecn, h.snd.ECNReductions())
			}
			continue
		}
		if ect != int(st.SegmentsSent) {
			t.Errorf("%d of %d data segments ECT, want all (no retransmissions)", ect, st.SegmentsSent)
		}
		if alg.ecn != 1 || alg.ends != 1 || h.snd.ECNReductions() != 1 || cwr != 1 {
			t.Errorf("%d echo events, %d ends, %d reductions, %d CWR segments; want 1 each", alg.ecn, alg.ends, h.snd.ECNReductions(), cwr)
		}
		if want := max(alg.cwndBeforeECN/2, 2*1448); alg.cwndAfterECN != want {
			t.Errorf("window %d after the echo (%d before), want half: %d", alg.cwndAfterECN, alg.cwndBeforeECN, want)
		}
		// ECE exactly on the ACKs from the marked segment's to the CWR
		// segment's (exclusive).
		for i, a := range acks.ackNo {
			want := a > 60*1448 && a <= cwrSeq
			if acks.ece[i] != want {
				t.Errorf("ACK %d (ackNo %d): ECE %v, want %v (mark at %d, CWR at %d)", i, a, acks.ece[i], want, 60*1448, cwrSeq)
				break
			}
		}
	}
}

// TestECNLossDuringReduction: a segment marked and, just after it, one
// lost. The loss found during the echo's reduction turns it into fast
// recovery without a second reduction (Linux tcp_enter_recovery: no
// ssthresh call inside a reduction), so the window ends at half, not a
// quarter, and the one lost segment is resent.
func TestECNLossDuringReduction(t *testing.T) {
	cfg := Config{Bytes: 400 * 1448, ECN: ECNRFC3168}
	alg := &ecnEvents{Algorithm: reno(1448)}
	h := newHarness(t, cfg, alg, 10*units.Mbps, 20*time.Millisecond)
	dropped := false
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Data || p.Retransmission {
			return false
		}
		switch p.Seq {
		case 60 * 1448:
			p.Mark()
		case 63 * 1448:
			if !dropped {
				dropped = true
				return true
			}
		}
		return false
	}
	var ssthresh units.Bytes
	h.snd.OnAck = func(now clock.Time, s *Sender) {
		if alg.inCWR == 1 && ssthresh == 0 {
			ssthresh = s.CC().(prrTarget).Ssthresh()
		}
	}
	h.run(t, 20*time.Second)
	st := h.snd.Stats()
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	if alg.ecn != 1 || alg.inCWR != 1 || alg.loss != 0 || st.FastRecoveries != 1 || st.Retransmissions != 1 {
		t.Errorf("events: %d echo, %d loss in the reduction, %d plain loss; %d recoveries, %d retransmissions; want 1, 1, 0, 1, 1",
			alg.ecn, alg.inCWR, alg.loss, st.FastRecoveries, st.Retransmissions)
	}
	if want := alg.cwndBeforeECN / 2; ssthresh != want {
		t.Errorf("ssthresh %d in the recovery (window %d before the echo), want half: %d, one reduction", ssthresh, alg.cwndBeforeECN, want)
	}
}

// TestAccurateEcho: with ECNDCTCP (DCTCP's receiver) each ACK's ECE is the
// CE state of the newest segment it acknowledges, and a change of state
// is acknowledged at once (dctcp_ece_ack_update), so no ACK covers
// segments of both states.
func TestAccurateEcho(t *testing.T) {
	cfg := Config{Bytes: 300 * 1448, ECN: ECNDCTCP}
	h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	acks := logEchoes(h)
	marked := func(seg int64) bool { return seg >= 100 && seg < 111 || seg == 150 }
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind == packet.Data && marked(p.Seq/1448) {
			p.Mark()
		}
		return false
	}
	h.run(t, 20*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	prev := int64(0)
	n := 0
	for i, a := range acks.ackNo {
		if a <= prev {
			continue
		}
		newest := (a - 1) / 1448
		if acks.ece[i] != marked(newest) {
			t.Errorf("ACK of %d: ECE %v, but the newest segment it acknowledges (%d) is marked %v", a, acks.ece[i], newest, marked(newest))
		}
		for s := prev / 1448; s < newest; s++ {
			if marked(s) != marked(newest) {
				t.Errorf("ACK of %d covers segments %d (marked %v) and %d (marked %v)", a, s, marked(s), newest, marked(newest))
				break
			}
		}
		prev = a
		n++
	}
	if n < 150 {
		t.Errorf("only %d ACKs advanced", n)
	}
}

// ackCounter counts the ACKs a receiver sends.
type ackCounter struct {
	pool *packet.Pool
	n    int
}

func (a *ackCounter) Receive(_ clock.Time, p *packet.Packet) {
	a.n++
	a.pool.Put(p)
}

// TestNotECTQuickAck: on an ECN connection, a segment without ECT after
// ECT ones (a retransmission) puts the receiver in quick-ACK mode for two
// segments (__tcp_ecn_check_ce's Not-ECT case): it and the next are
// acknowledged at once, the one after is held for a delayed ACK again.
// Without ECN the same segment is held.
func TestNotECTQuickAck(t *testing.T) {
	for _, mode := range []ECNMode{ECNRFC3168, ECNOff} {
		s := sim.New()
		pool := &packet.Pool{}
		out := &ackCounter{pool: pool}
		r := NewReceiver(Config{ECN: mode}, 0, s, pool, out)
		seg := func(i int64, bits packet.ECNBits) int {
			before := out.n
			p := pool.Get()
			p.Kind, p.Seq, p.Len, p.Size, p.ECN = packet.Data, i*1448, 1448, 1500, bits
			r.Receive(clock.Time(i)*clock.Time(time.Millisecond), p)
			return out.n - before
		}
		// Past the connection's initial quick ACKs, in ECT pairs.
		for i := range int64(40) {
			seg(i, packet.ECT)
		}
		if seg(40, packet.ECT)+seg(41, packet.ECT) != 1 {
			t.Fatalf("%v: an in-order pair was not acknowledged once", mode)
		}
		got := []int{seg(42, 0), seg(43, packet.ECT), seg(44, packet.ECT)}
		want := []int{1, 1, 0}
		if mode == ECNOff {
			want = []int{0, 1, 0}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: ACKs sent for a segment without ECT and the next two: %v, want %v", mode, got, want)
		}
	}
}
