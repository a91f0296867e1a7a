package tcp

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/cubic"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// reducer is a controller with a fixed window and a fixed slow-start
// threshold, so that PRR's arithmetic can be checked segment by segment.
type reducer struct{ cwnd, ssth units.Bytes }

func (r reducer) OnPacketSent(clock.Time, units.Bytes, units.Bytes, bool) {}
func (r reducer) OnAck(clock.Time, *cc.Ack)                               {}
func (r reducer) OnCongestionEvent(clock.Time, *cc.LossEvent)             {}
func (r reducer) OnRecoveryEnd(clock.Time)                                {}
func (r reducer) OnRetransmissionTimeout(clock.Time, units.Bytes)         {}
func (r reducer) CongestionWindow() units.Bytes                           { return r.cwnd }
func (r reducer) PacingRate() units.Bandwidth                             { return 0 }
func (r reducer) Ssthresh() units.Bytes                                   { return r.ssth }

// TestPRRDivisor: while the flight is above the slow-start threshold, PRR
// sends ceil(delivered * ssthresh / D) segments in all, at least the fast
// retransmission, where D is the flight when recovery began in RFC 6937
// and the congestion window then in Linux (tcp_cwnd_reduction's
// prior_cwnd). A receive window of 30 segments holds the flight well
// below a window of 90, so the two differ threefold: the segments counted
// on the wire after each ACK must be exactly the formula's.
func TestPRRDivisor(t *testing.T) {
	const mss = 1448
	for _, linux := range []bool{false, true} {
		t.Run(fmt.Sprintf("linux=%v", linux), func(t *testing.T) {
			cfg := Config{Bytes: 400 * mss, NoDelayedAck: true, RecvWindow: 30 * mss, LinuxPRR: linux}
			h := newHarness(t, cfg, reducer{cwnd: 90 * mss, ssth: 15 * mss}, 10*units.Mbps, 20*time.Millisecond)
			const ssth = 15
			dropped := false
			sent := int64(0) // segments sent in recovery
			h.fwd.drop = func(p *packet.Packet) bool {
				if h.snd.phase == recovery {
					sent++
				}
				if p.Seq == 100*mss && !dropped {
					dropped = true
					return true
				}
				return false
			}
			// OnAck runs after the recovery state is updated and before
			// the ACK's segments go, so each call sees the previous ACK's
			// sends.
			var checked int
			var prevDelivered int64 = -1
			h.snd.OnAck = func(now clock.Time, s *Sender) {
				if s.phase != recovery {
					prevDelivered = -1
					return
				}
				if prevDelivered >= 0 {
					div := s.prrRecoverFS
					want := max((prevDelivered*ssth+div-1)/div, 1)
					if sent != want {
						t.Errorf("after %d segments delivered: %d sent in recovery, want ceil(%d * %d / %d) = %d", prevDelivered, sent, prevDelivered, ssth, div, want)
					}
					checked++
				}
				prevDelivered = -1
				if s.segs(s.InFlight()) > ssth {
					prevDelivered = s.prrDelivered
				}
			}
			h.run(t, 10*time.Second)
			if h.rcv.DeliveredBytes != cfg.Bytes {
				t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
			}
			if st := h.snd.Stats(); st.FastRecoveries != 1 || st.RTOs != 0 {
				t.Fatalf("%d recoveries and %d RTOs, want 1 and 0", st.FastRecoveries, st.RTOs)
			}
			if checked < 5 {
				t.Fatalf("only %d ACKs in the proportional part of recovery", checked)
			}
			div, want := h.snd.prrRecoverFS, int64(90)
			if !linux {
				want = 29 // the receive window less the lost segment
			}
			if div < want-1 || div > want+1 {
				t.Errorf("divisor %d segments, want %d (+-1)", div, want)
			}
		})
	}
}

// TestLinuxPRRTimerEntry: a loss near the end of a transfer, with only two
// segments SACKed above it, is found by RACK's reordering timer, not by an
// ACK. Linux then starts recovery counting one segment delivered
// (tcp_rack_reo_timeout's tcp_cwnd_reduction(sk, 1, 0, 0)); RFC 6937 has
// delivered none. Either way the retransmission goes at once and the
// transfer completes.
func TestLinuxPRRTimerEntry(t *testing.T) {
	const mss = 1448
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 200 * mss, LinuxPRR: linux}
		h := newHarness(t, cfg, reno(mss), 10*units.Mbps, 20*time.Millisecond)
		dropped := false
		var atRetx int64 = -1
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Seq == 197*mss {
				if !dropped {
					dropped = true
					return true
				}
				atRetx = h.snd.prrDelivered
			}
			return false
		}
		h.run(t, 10*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux=%v: delivered %d, want %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		st := h.snd.Stats()
		if st.FastRecoveries != 1 || st.RTOs != 0 || st.Retransmissions != 1 {
			t.Fatalf("linux=%v: %d recoveries, %d RTOs, %d retransmissions, want 1, 0, 1", linux, st.FastRecoveries, st.RTOs, st.Retransmissions)
		}
		want := int64(0)
		if linux {
			want = 1
		}
		if atRetx != want {
			t.Errorf("linux=%v: %d segments counted delivered when the retransmission went, want %d", linux, atRetx, want)
		}
	}
}

// TestLinuxPRRDeliversExactlyOnce: with Linux's PRR, NewReno and CUBIC
// transfers through random loss, with and without SACK, deliver every
// byte exactly once and in order, and the same seed gives the same run.
func TestLinuxPRRDeliversExactlyOnce(t *testing.T) {
	const mss = 1448
	for _, sack := range []bool{true, false} {
		for name, alg := range map[string]func() cc.Algorithm{
			"newreno": func() cc.Algorithm { return reno(mss) },
			"cubic":   func() cc.Algorithm { return cubic.New(mss, nil) },
		} {
			for seed := uint64(1); seed <= 4; seed++ {
				run := func() Stats {
					cfg := Config{Bytes: 1500 * mss, LinuxPRR: true, NoSACK: !sack}
					h := newHarness(t, cfg, alg(), 20*units.Mbps, 15*time.Millisecond)
					rnd := rand.New(rand.NewPCG(seed, 9))
					h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.03 }
					var got units.Bytes
					h.rcv.OnDeliver = func(_ clock.Time, n units.Bytes) { got += n }
					h.snd.OnAck = func(_ clock.Time, s *Sender) {
						// Linux's window never falls below the flight:
						// a negative allowance would outlast this ACK
						// and keep a later timeout's repair waiting.
						if s.phase == recovery && s.prrAllow < 0 {
							t.Fatalf("%s sack=%v seed %d: PRR allowance %d in recovery", name, sack, seed, s.prrAllow)
						}
					}
					h.run(t, 120*time.Second)
					if got != cfg.Bytes || h.rcv.RcvNxt() != int64(cfg.Bytes) {
						t.Fatalf("%s sack=%v seed %d: %d bytes handed over, next expected %d, want %d", name, sack, seed, got, h.rcv.RcvNxt(), cfg.Bytes)
					}
					return h.snd.Stats()
				}
				a, b := run(), run()
				if a != b {
					t.Errorf("%s sack=%v seed %d: two runs differ: %+v and %+v", name, sack, seed, a, b)
				}
				if a.FastRecoveries == 0 {
					t.Errorf("%s sack=%v seed %d: no fast recovery under 3%% loss", name, sack, seed)
				}
			}
		}
	}
}
