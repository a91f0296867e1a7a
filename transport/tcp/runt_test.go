package tcp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestRuntStateAgainstList: the short-segment list answers segStart and
// segAt as a plain list of every segment's bounds does, while segments are
// added (a fifth of them short, some of those in a row) and acknowledged
// from the front, over enough rounds that its slice is compacted and
// reused.
func TestRuntStateAgainstList(t *testing.T) {
	const mss = 1448
	rng := rand.New(rand.NewPCG(7, 19))
	var r runtState
	var starts []int64 // starts[k], and the end of the last segment
	starts = append(starts, 0)
	una := int64(0) // first outstanding segment
	runts := 0
	for round := range 3000 {
		for range rng.IntN(8) {
			k := int64(len(starts) - 1)
			n := int64(mss)
			if rng.IntN(5) == 0 {
				n = 1 + rng.Int64N(mss-1)
				r.add(k, units.Bytes(mss-n))
				runts++
			}
			starts = append(starts, starts[k]+n)
		}
		una = min(una+rng.Int64N(6), int64(len(starts)-1))
		r.acked(una)
		for k := una; k < int64(len(starts)-1); k++ {
			if got := k*mss - r.before(k); got != starts[k] {
				t.Fatalf("round %d: segment %d starts at %d, want %d", round, k, got, starts[k])
			}
			for _, b := range []int64{starts[k], (starts[k] + starts[k+1]) / 2, starts[k+1] - 1} {
				if got := r.segAt(b, mss); got != k {
					t.Fatalf("round %d: byte %d is in segment %d, not %d", round, b, k, got)
				}
			}
		}
	}
	if runts < 1000 || cap(r.marks) > 4096 {
		t.Errorf("%d short segments, list capacity %d: want 1000 or more in a list that stays compact", runts, cap(r.marks))
	}
}

// TestShortSegmentsAtWindowEdge: a sender that only the receiver's window
// holds (a congestion window of 2,000 segments on a 200 ms path, as
// Hybla's on a long one) fills the window to its right edge as Linux with
// TCP_NODELAY does: a short segment ends exactly at the edge the sender
// last learnt, and only after a whole segment in the same instant; new
// data is contiguous, retransmissions resend an original segment's exact
// bytes, and the transfer is delivered whole through losses that fall on
// short and whole segments alike. With Nagle on (UseNagle) a short
// segment goes only when no other is unacknowledged, so there are fewer.
// Without the option every segment but the last is whole.
func TestShortSegmentsAtWindowEdge(t *testing.T) {
	const mss, delay = 1448, 100 * time.Millisecond
	shorts := map[bool]int{} // by Nagle
	for _, c := range []struct{ on, nagle bool }{{false, false}, {true, false}, {true, true}} {
		on := c.on
		cfg := Config{Bytes: 3000 * mss, LinuxReceiveWindow: on}
		h := newHarness(t, cfg, fixedWindow(2000*mss), 20*units.Mbps, delay)
		if c.nagle {
			h.snd.UseNagle()
		}
		edge, _ := windowEdges(h, delay)
		type span struct{ seq, end int64 }
		orig := map[span]bool{}
		var next int64
		var lastNew clock.Time = -1
		short, shortLost, bad := 0, 0, 0
		lastShortEnd := int64(0)
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind != packet.Data {
				return false
			}
			sp := span{p.Seq, p.Seq + int64(p.Len)}
			if p.Retransmission {
				if !orig[sp] {
					bad++
					t.Errorf("retransmission [%d, %d) is no original segment", sp.seq, sp.end)
				}
				return false
			}
			if p.Seq != next {
				t.Fatalf("new segment at %d, want %d", p.Seq, next)
			}
			orig[sp] = true
			next = sp.end
			isShort := int64(p.Len) < mss && sp.end < int64(cfg.Bytes)
			if isShort {
				short++
				limit := edge()
				if sp.end != limit || lastNew != h.s.Now() {
					bad++
					if bad <= 3 {
						t.Errorf("short segment [%d, %d) at %v: the edge is %d, the last new segment went at %v", sp.seq, sp.end, h.s.Now(), limit, lastNew)
					}
				}
				if c.nagle && lastShortEnd > h.snd.una {
					bad++
					if bad <= 3 {
						t.Errorf("Nagle: short segment [%d, %d) sent while the one ending at %d is unacknowledged (SND.UNA %d)", sp.seq, sp.end, lastShortEnd, h.snd.una)
					}
				}
				lastShortEnd = sp.end
			}
			lastNew = h.s.Now()
			// Lose every 61st segment's first transmission, short or not.
			if (p.Seq/mss)%61 == 30 {
				if isShort {
					shortLost++
				}
				return true
			}
			return false
		}
		h.run(t, 60*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("on=%v: delivered %d of %d", on, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		st := h.snd.Stats()
		t.Logf("on=%v nagle=%v: %d short segments (%d of them lost), %d retransmissions, %d recoveries", on, c.nagle, short, shortLost, st.Retransmissions, st.FastRecoveries)
		if !on {
			if short != 0 {
				t.Errorf("off: %d short segments, want none", short)
			}
			continue
		}
		shorts[c.nagle] = short
		if c.nagle {
			// One short segment per round trip at most: a handful.
			if short == 0 || bad != 0 {
				t.Errorf("on, nagle: %d short segments, %d wrong: want some, none wrong", short, bad)
			}
			continue
		}
		if short < 100 || shortLost == 0 || st.Retransmissions == 0 || bad != 0 {
			t.Errorf("on: %d short segments, %d lost, %d retransmissions, %d wrong: want 100 or more, some lost and resent, none wrong", short, shortLost, st.Retransmissions, bad)
		}
	}
	if shorts[true] >= shorts[false] {
		t.Errorf("%d short segments with Nagle, %d without: want fewer with", shorts[true], shorts[false])
	}
}

// TestShortSegmentsCountAsPackets: Linux counts its congestion window
// and the data in flight in packets (tcp_cwnd_test), so a short segment
// at the window's edge takes a whole segment's room under the window. A
// sender that the receiver's window alone held for 1 s, with short
// segments still in flight when its congestion window falls to 12
// segments, never has more than 12 segments in flight after that (the
// byte count it had before let 13-15 out while short ones were in
// flight), and the transfer completes whole.
func TestShortSegmentsCountAsPackets(t *testing.T) {
	const mss, delay, cut = 1448, 100 * time.Millisecond, time.Second
	cfg := Config{Bytes: 4000 * mss, LinuxReceiveWindow: true}
	w := &stepWindow{window: func(now clock.Time) units.Bytes {
		if now < clock.Time(cut) {
			return 2000 * mss
		}
		return 12 * mss
	}}
	h := newHarness(t, cfg, w, 20*units.Mbps, delay)
	w.s = h.s
	shortInFlight, most := 0, 0
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Data || h.s.Now() < clock.Time(cut) {
			return false
		}
		// The segment being sent is on the scoreboard already.
		n, short := 0, false
		for k := h.snd.unaSeg; k < h.snd.nxtSeg(); k++ {
			if g := h.snd.seg(k); !g.sacked && (!g.lost || g.retrans) {
				n++
				short = short || g.len < mss
			}
		}
		most = max(most, n)
		if short {
			shortInFlight++
		}
		if n > 12 {
			t.Errorf("at %v: %d segments in flight under a window of 12", h.s.Now(), n)
		}
		return false
	}
	h.run(t, 60*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d of %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	t.Logf("after the cut: at most %d segments in flight; %d sends with a short segment in flight", most, shortInFlight)
	if shortInFlight == 0 || most != 12 {
		t.Errorf("%d sends with a short segment in flight, at most %d in flight: want some, and 12", shortInFlight, most)
	}
}
