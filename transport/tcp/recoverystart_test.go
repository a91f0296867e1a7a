package tcp

import (
	"fmt"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// episodes records when the controller is told a recovery starts and
// ends.
type episodes struct {
	cc.Algorithm
	starts, ends []clock.Time
	lost         []units.Bytes
	onStart      func() // if set, called at each start
}

func (e *episodes) OnCongestionEvent(now clock.Time, ev *cc.LossEvent) {
	if e.onStart != nil {
		e.onStart()
	}
	e.starts = append(e.starts, now)
	e.lost = append(e.lost, ev.LostBytes)
	e.Algorithm.OnCongestionEvent(now, ev)
}

func (e *episodes) OnRecoveryEnd(now clock.Time) {
	e.ends = append(e.ends, now)
	e.Algorithm.OnRecoveryEnd(now)
}

// TestRecoveryStartAfterLossesInRecovery: segment 30 is lost, and the
// first new segment sent in the recovery it starts (at its recovery
// point) is lost too, while the retransmission of 30 is held 30 ms on the
// way: later segments are SACKed, the new segment is marked lost and
// resent (so is the held retransmission, spuriously), and the new
// segment's retransmission is still on its way when the held one's ACK
// reaches the recovery point. Linux (tcp_time_to_recover: lost_out)
// starts the next recovery on that same ACK, with its own congestion
// response; by default the sender waits for an ACK that marks a new
// loss, and none comes, so the second loss gets none.
func TestRecoveryStartAfterLossesInRecovery(t *testing.T) {
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 300 * 1448, LinuxRecoveryStart: linux}
		alg := &episodes{Algorithm: reno(1448)}
		h := newHarness(t, cfg, alg, 10*units.Mbps, 20*time.Millisecond)
		retransmitted := false
		var second int64 = -1
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Retransmission {
				retransmitted = true
				return false
			}
			if p.Seq == 30*1448 {
				return true
			}
			if retransmitted && second < 0 {
				second = p.Seq // the first new segment of the recovery
				return true
			}
			return false
		}
		held := false
		h.fwd.hold = func(p *packet.Packet) time.Duration {
			if p.Retransmission && p.Seq == 30*1448 && !held {
				held = true
				return 30 * time.Millisecond
			}
			return 0
		}
		var markedAt clock.Time = -1 // when the second loss was marked, in recovery
		var point int64
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if point == 0 && s.phase == recovery {
				point = s.recoveryPoint
			}
			if markedAt < 0 && second >= s.una && s.phase == recovery && s.una < point && s.seg(second/1448).lost {
				markedAt = now
			}
		}
		h.run(t, 20*time.Second)
		st := h.snd.Stats()
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux %v: delivered %d, want %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if second != point {
			t.Fatalf("linux %v: the second loss is segment %d, the recovery point %d: the case needs them equal", linux, second/1448, point/1448)
		}
		if markedAt < 0 {
			t.Fatalf("linux %v: the second loss was not marked before the recovery point was acknowledged: the case needs it", linux)
		}
		if st.RTOs != 0 || st.Retransmissions != 3 {
			t.Fatalf("linux %v: %d timeouts, %d retransmissions, want 0 and 3", linux, st.RTOs, st.Retransmissions)
		}
		if !linux {
			if st.FastRecoveries != 1 || len(alg.starts) != 1 {
				t.Errorf("default: %d recoveries (%d congestion events), want 1", st.FastRecoveries, len(alg.starts))
			}
			continue
		}
		if st.FastRecoveries != 2 || len(alg.starts) != 2 || len(alg.ends) != 2 {
			t.Fatalf("linux: %d recoveries, %d congestion events and %d ends, want 2, 2 and 2", st.FastRecoveries, len(alg.starts), len(alg.ends))
		}
		// The second starts on the ACK that ended the first, for a loss
		// already marked (no bytes newly lost on it).
		if alg.starts[1] != alg.ends[0] || alg.starts[1] <= markedAt {
			t.Errorf("linux: the first recovery ended at %v, the second started at %v (the loss was marked at %v): want the same ACK", alg.ends[0], alg.starts[1], markedAt)
		}
		if alg.lost[1] != 0 {
			t.Errorf("linux: the second congestion event reports %d bytes lost, want 0 (marked in the first recovery)", alg.lost[1])
		}
	}
}

// TestRecoveryStartNotWithPacketTimers: Mockets' per-packet timers are
// not Linux's loss detection, and the option leaves them alone: with one
// original lost in every 37 segments the transfer is the same with and
// without it.
func TestRecoveryStartNotWithPacketTimers(t *testing.T) {
	run := func(linux bool) (Stats, clock.Time) {
		cfg := Config{Bytes: 300 * 1448, PacketTimers: true, AckInterval: 5 * time.Millisecond, LinuxRecoveryStart: linux}
		h := newHarness(t, cfg, reno(1448), 10*units.Mbps, 20*time.Millisecond)
		var done clock.Time
		h.snd.OnDone = func(now clock.Time) { done = now }
		lost := map[int64]bool{}
		h.fwd.drop = func(p *packet.Packet) bool {
			if !p.Retransmission && (p.Seq/1448)%37 == 30 && !lost[p.Seq] {
				lost[p.Seq] = true
				return true
			}
			return false
		}
		h.run(t, 30*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux %v: delivered %d, want %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		return h.snd.Stats(), done
	}
	st, done := run(false)
	stL, doneL := run(true)
	if st != stL || done != doneL {
		t.Errorf("with the option: %+v, done at %v; without: %+v, done at %v", stL, doneL, st, done)
	}
	if st.Retransmissions == 0 {
		t.Errorf("no retransmissions: the case needs losses")
	}
}

// TestRecoveryFromLossState: every new segment from 40 on is lost until a
// timeout fires, and in the timeout's loss state the retransmission of
// segment 41 is lost too; the retransmission of 42, sent after it in the
// same instant, is SACKed, and RACK's time rule finds 41's lost before
// SND.UNA reaches the loss state's recovery point: on that ACK when the
// reordering window is zero (one SACKed segment is enough with a
// duplicate threshold of 1), otherwise on the reordering timer. Linux
// (tcp_fastretrans_alert's FLAG_LOST_RETRANS; tcp_rack_reo_timeout) then
// enters fast recovery from the loss state, with a new recovery point and
// a congestion response; by default the sender resends it within the
// loss state and never enters recovery.
func TestRecoveryFromLossState(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dupThresh int32
		onAck     bool // found on an ACK, not by the reordering timer
	}{
		{"reordering timer", 0, false},
		{"ACK", 1, true},
	} {
		for _, linux := range []bool{false, true} {
			name := fmt.Sprintf("%s, linux %v", tc.name, linux)
			cfg := Config{Bytes: 300 * 1448, LinuxRecoveryStart: linux, RACKRetransmissions: true, DupThresh: tc.dupThresh}
			alg := &episodes{Algorithm: reno(1448)}
			h := newHarness(t, cfg, alg, 10*units.Mbps, 20*time.Millisecond)
			lostRetx := false
			h.fwd.drop = func(p *packet.Packet) bool {
				if !p.Retransmission {
					return p.Seq >= 40*1448 && h.snd.Stats().RTOs == 0
				}
				if p.Seq == 41*1448 && !lostRetx {
					lostRetx = true
					return true
				}
				return false
			}
			var lossPoint int64 = -1 // SND.NXT at the timeout: the loss state's recovery point
			acks := map[clock.Time]bool{}
			h.snd.OnAck = func(now clock.Time, s *Sender) {
				acks[now] = true
				if lossPoint < 0 && s.phase == lossPhase {
					lossPoint = s.recoveryPoint
				}
			}
			var inLoss []bool // whether each recovery began before SND.UNA reached it
			alg.onStart = func() { inLoss = append(inLoss, lossPoint >= 0 && h.snd.una < lossPoint) }
			h.run(t, 20*time.Second)
			st := h.snd.Stats()
			if h.rcv.DeliveredBytes != cfg.Bytes {
				t.Fatalf("%s: delivered %d, want %d", name, h.rcv.DeliveredBytes, cfg.Bytes)
			}
			if st.RTOs != 1 || !lostRetx || h.snd.LostRetransmits() != 1 {
				t.Fatalf("%s: %d timeouts, retransmission of 41 lost %v, %d found lost: the case needs 1, true and 1",
					name, st.RTOs, lostRetx, h.snd.LostRetransmits())
			}
			if !linux {
				if st.FastRecoveries != 0 || len(alg.starts) != 0 {
					t.Errorf("%s: %d recoveries (%d congestion events), want none", name, st.FastRecoveries, len(alg.starts))
				}
				continue
			}
			if lossPoint < 0 {
				t.Fatalf("%s: no ACK in the loss state: the case needs one", name)
			}
			if st.FastRecoveries != 1 || len(inLoss) != 1 || !inLoss[0] {
				t.Fatalf("%s: %d recoveries, begun in the loss state: %v; want 1, begun in it", name, st.FastRecoveries, inLoss)
			}
			if acks[alg.starts[0]] != tc.onAck {
				t.Errorf("%s: the recovery began at %v, on an ACK: %v; the case wants %v", name, alg.starts[0], acks[alg.starts[0]], tc.onAck)
			}
		}
	}
}
