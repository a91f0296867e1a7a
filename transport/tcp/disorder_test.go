package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// ackWatch is Reno that checks, on every ACK, what the sender reports
// against the sender's own state at that moment.
type ackWatch struct {
	*newreno.Reno
	t                          *testing.T
	h                          *harness
	prevUna                    int64
	held, disorder, grewOnHold int
	// grewOnSACK counts ACKs in the open state that only SACKed data and
	// grew the window anyway.
	grewOnSACK int
}

func (w *ackWatch) OnAck(now clock.Time, a *cc.Ack) {
	s := w.h.snd
	advanced := s.una > w.prevUna
	w.prevUna = s.una
	if a.HoldWindow == advanced && s.caState != caUntracked {
		w.t.Errorf("at %v: HoldWindow %v on an ACK that advanced SND.UNA: %v", now, a.HoldWindow, advanced)
	}
	leftOut := s.sacked > 0 || s.renoSacked > 0 || s.lost > 0 || s.retransOut > 0 || s.n > 0 && s.seg(s.unaSeg).everRetrans
	if a.Disorder && (s.phase != open || !leftOut) {
		w.t.Errorf("at %v: Disorder reported in phase %d with SACKed, lost or retransmitted data outstanding: %v", now, s.phase, leftOut)
	}
	if a.Disorder {
		w.disorder++
	}
	before := w.CongestionWindow()
	w.Reno.OnAck(now, a)
	if a.HoldWindow {
		w.held++
		if w.CongestionWindow() != before {
			w.grewOnHold++
		}
	}
	if !advanced && s.phase == open && w.CongestionWindow() > before {
		w.grewOnSACK++
	}
}

// TestLinuxWindowGrowth: with Config.LinuxWindowGrowth, an ACK that only
// SACKs data is reported as holding the window (and Reno's does not
// move on it), every other delivering ACK is not, and the duplicate ACKs
// before recovery starts are in Disorder, which is never reported outside
// the open state or with nothing SACKed, lost or retransmitted
// outstanding; without it neither is ever reported, and Reno grows its
// window on the SACKs before recovery starts. Two single losses, each in
// its own window.
func TestLinuxWindowGrowth(t *testing.T) {
	for _, linux := range []bool{false, true} {
		cfg := Config{Bytes: 400 * 1448, NoDelayedAck: true, LinuxWindowGrowth: linux}
		w := &ackWatch{Reno: newreno.New(1448, map[string]float64{"iw": 10, "beta": 0.5}), t: t}
		h := newHarness(t, cfg, w, 10*units.Mbps, 20*time.Millisecond)
		w.h = h
		dropped := map[int64]bool{}
		h.fwd.drop = func(p *packet.Packet) bool {
			if p.Kind == packet.Data && (p.Seq == 30*1448 || p.Seq == 150*1448) && !dropped[p.Seq] {
				dropped[p.Seq] = true
				return true
			}
			return false
		}
		h.run(t, 20*time.Second)
		if h.rcv.DeliveredBytes != cfg.Bytes {
			t.Fatalf("linux %v: delivered %d of %d", linux, h.rcv.DeliveredBytes, cfg.Bytes)
		}
		st := h.snd.Stats()
		t.Logf("linux %v: %d ACKs held the window, %d in Disorder, %d grew it by a SACK alone in the open state; %d recoveries, %d timeouts", linux, w.held, w.disorder, w.grewOnSACK, st.FastRecoveries, st.RTOs)
		if st.FastRecoveries != 2 || st.RTOs != 0 {
			t.Errorf("linux %v: %d recoveries and %d timeouts, want 2 and 0", linux, st.FastRecoveries, st.RTOs)
		}
		if w.grewOnHold > 0 {
			t.Errorf("linux %v: the window grew on %d ACKs that held it", linux, w.grewOnHold)
		}
		if !linux && (w.held > 0 || w.disorder > 0 || w.grewOnSACK == 0) {
			t.Errorf("without the option: %d ACKs held the window, %d in Disorder, %d grew it by a SACK alone; want none, none and some", w.held, w.disorder, w.grewOnSACK)
		}
		if linux && (w.held == 0 || w.disorder == 0 || w.grewOnSACK > 0) {
			t.Errorf("with the option: %d ACKs held the window, %d in Disorder, %d grew it by a SACK alone; want some, some and none", w.held, w.disorder, w.grewOnSACK)
		}
	}
}

// TestTrackDisorder follows Linux's rule for entering and leaving
// Disorder (tcp_fastretrans_alert, tcp_try_keep_open): the open state is
// looked at again only on a dubious ACK, one ending another state, or any
// ACK while in Disorder.
func TestTrackDisorder(t *testing.T) {
	h := newHarness(t, Config{Bytes: 100 * 1448, LinuxWindowGrowth: true}, reno(1448), 10*units.Mbps, 20*time.Millisecond)
	s := h.snd
	if s.caState != caOpen {
		t.Fatalf("caState %d after InitSender with the option, want open", s.caState)
	}
	for _, c := range []struct {
		name         string
		phase, prior phase
		from         caState
		dubious      bool
		retransOut   units.Bytes
		sacked       units.Bytes
		want         caState
	}{
		{"a SACK in the open state", open, open, caOpen, true, 0, 1448, caDisorder},
		{"a plain ACK with a probe's retransmission out stays open", open, open, caOpen, false, 1448, 0, caOpen},
		{"a duplicate ACK with it goes to Disorder", open, open, caOpen, true, 1448, 0, caDisorder},
		{"in Disorder every ACK looks again", open, open, caDisorder, false, 0, 0, caOpen},
		{"Disorder stays while SACKed data is out", open, open, caDisorder, false, 0, 1448, caDisorder},
		{"the end of a recovery looks", open, recovery, caOpen, false, 0, 1448, caDisorder},
		{"the end of a timeout's loss state looks", open, lossPhase, caOpen, false, 1448, 0, caDisorder},
		{"recovery is not Disorder", recovery, open, caDisorder, true, 0, 1448, caOpen},
	} {
		s.phase, s.caState, s.retransOut, s.sacked = c.phase, c.from, c.retransOut, c.sacked
		s.trackDisorder(c.prior, c.dubious)
		if s.caState != c.want {
			t.Errorf("%s: caState %d, want %d", c.name, s.caState, c.want)
		}
	}
	off := newHarness(t, Config{Bytes: 100 * 1448}, reno(1448), 10*units.Mbps, 20*time.Millisecond).snd
	if off.caState != caUntracked {
		t.Errorf("caState %d without the option, want untracked", off.caState)
	}
}
