package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/cc/cubic"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestLinuxRACKTimerFiresOnceForTheLatest: two holes near the end of a
// transfer, 50 and 52, each with one delivered segment above it, so that
// RACK's reordering window (a quarter of the minimum RTT) holds both. By
// default the reordering timer is armed for the first hole's deadline,
// marks it and re-arms itself for the second. As Linux
// (tcp_rack_detect_loss records the maximum wait, tcp_rack_mark_lost adds
// TCP_TIMEOUT_MIN, and rack.rtt_us changes only with RACK's state) it
// fires once, TimeoutMin after the later hole's deadline, and marks both.
func TestLinuxRACKTimerFiresOnceForTheLatest(t *testing.T) {
	const mss = 1448
	type fire struct {
		at, want clock.Time
		marked   int64
	}
	run := func(linux bool) []fire {
		cfg := Config{Bytes: 54 * mss, NoDelayedAck: true, LinuxRACKTimer: linux}
		// A window of 8 segments: after the first flight each segment
		// leaves on an ACK, so the two holes' send times differ.
		h := newHarness(t, cfg, reducer{cwnd: 8 * mss, ssth: 4 * mss}, 10*units.Mbps, 10*time.Millisecond)
		sent := map[int64]clock.Time{}
		h.fwd.drop = func(p *packet.Packet) bool {
			k := p.Seq / mss
			if p.Kind != packet.Data {
				return false
			}
			if _, again := sent[k]; again {
				return false
			}
			sent[k] = h.s.Now()
			return k == 50 || k == 52
		}
		var fires []fire
		s := h.snd
		s.rackT = h.s.NewTimer(func(now clock.Time) {
			// Where the rule says the timer belongs, from the state it
			// was armed in (no ACK arrives in between).
			want := sent[52].Add(s.rackRTT + s.rackReoWnd() + s.cfg.TimeoutMin)
			before := s.stats.MarkedLost
			s.onRACKTimer(now)
			fires = append(fires, fire{now, want, s.stats.MarkedLost - before})
		})
		h.run(t, 10*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux %v: delivered %d, want %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		if st := s.Stats(); st.RTOs != 0 || st.Retransmissions != 2 {
			t.Errorf("linux %v: %d RTOs, %d retransmissions; want 0 and 2", linux, st.RTOs, st.Retransmissions)
		}
		return fires
	}
	def := run(false)
	lx := run(true)
	if len(lx) != 1 || lx[0].marked != 2 || lx[0].at != lx[0].want {
		t.Errorf("Linux's timer: fired %+v; want once, TimeoutMin after the later hole's deadline, marking both", lx)
	}
	if len(def) != 2 || def[0].marked != 1 || def[1].marked != 1 || len(lx) > 0 && def[0].at >= lx[0].at {
		t.Errorf("default timer: fired %+v; want twice, marking one hole each, the first before Linux's", def)
	}
}

// TestLinuxRACKTimerDeliversExactlyOnce: transfers under random loss with
// Config.LinuxRACKTimer, with and without RACK's rule for retransmissions,
// complete with every byte handed over once and in order, and repeat
// exactly. After every ACK the reordering timer is armed no earlier than
// TimeoutMin after the latest deadline among the originals waiting for
// RACK (found here by scanning the whole scoreboard), so one expiry marks
// them all; the default's timer, armed for the earliest, fails this.
func TestLinuxRACKTimerDeliversExactlyOnce(t *testing.T) {
	const mss = 1448
	check := func(linux, retx bool, seed uint64) (Stats, int) {
		cfg := Config{Bytes: 1500 * mss, LinuxRACKTimer: linux, RACKRetransmissions: retx}
		h := newHarness(t, cfg, cubic.New(mss, nil), 20*units.Mbps, 15*time.Millisecond)
		rnd := rand.New(rand.NewPCG(seed, 5))
		h.fwd.drop = func(p *packet.Packet) bool { return p.Kind == packet.Data && rnd.Float64() < 0.03 }
		var got units.Bytes
		h.rcv.OnDeliver = func(_ clock.Time, n units.Bytes) { got += n }
		early := 0
		h.snd.OnAck = func(now clock.Time, s *Sender) {
			if s.sacked == 0 || s.rackXmit == 0 {
				return
			}
			latest := clock.Never
			wait := s.rackRTTNow() + s.rackReoWnd()
			for k := s.unaSeg; k < s.nxtSeg(); k++ {
				g := s.seg(k)
				if g.sacked || g.lost || g.retrans || g.everRetrans {
					continue
				}
				if g.sentAt > s.rackXmit || (g.sentAt == s.rackXmit && k >= s.rackXmitSeg) {
					break
				}
				if d := g.sentAt.Add(wait); d > now {
					latest = d
				}
			}
			// Armed by the last ACK that advanced RACK for the latest
			// deadline then (no earlier than any now: the waiting set
			// only shrinks between such ACKs and RACK's RTT holds),
			// plus TimeoutMin; the RTO's cap is far on this path.
			if latest != clock.Never && (!s.rackT.Armed() || s.rackT.Deadline() < latest.Add(s.cfg.TimeoutMin)) {
				early++
			}
		}
		h.run(t, 120*time.Second)
		if got != cfg.Bytes || h.rcv.RcvNxt() != int64(cfg.Bytes) {
			t.Fatalf("linux %v retx %v seed %d: %d bytes handed over, next expected %d, want %d", linux, retx, seed, got, h.rcv.RcvNxt(), cfg.Bytes)
		}
		return h.snd.Stats(), early
	}
	defaultEarly := 0
	for _, retx := range []bool{false, true} {
		for seed := uint64(1); seed <= 4; seed++ {
			a, early := check(true, retx, seed)
			if b, _ := check(true, retx, seed); a != b {
				t.Errorf("retx %v seed %d: two runs differ: %+v and %+v", retx, seed, a, b)
			}
			if early > 0 {
				t.Errorf("retx %v seed %d: after %d ACKs the timer was due before the latest waiting original", retx, seed, early)
			}
			if a.FastRecoveries == 0 {
				t.Errorf("retx %v seed %d: no fast recovery under 3%% loss", retx, seed)
			}
			_, e := check(false, retx, seed)
			defaultEarly += e
		}
	}
	if defaultEarly == 0 {
		t.Error("the default timer was never due before the latest waiting original: the check finds nothing")
	}
}
