package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/netsim/packet"
)

// TestTimeoutStates: a transfer built to time out three times in known
// states. Segment 10 is lost; RACK finds the hole from the SACKs of 11-19
// and fast recovery retransmits it, but that retransmission and all new
// data (20 on) are lost, so the first timeout comes in fast recovery. Its
// own retransmission of 10 is lost too: the second timeout is a backed-off
// one. The third copy of 10 arrives, SND.UNA advances to 20 in the loss
// state, and every copy of 25 sent before 3 s is lost, so the loss state
// times out once more, a first timeout again (SND.UNA advanced since the
// last). Linux counts the first as TCPSackRecoveryFail, the third as
// TCPLossFailures and the second as neither.
func TestTimeoutStates(t *testing.T) {
	const mss = 1448
	cfg := Config{Bytes: 40 * mss, NoDelayedAck: true, NoTLP: true}
	h := newHarness(t, cfg, reno(mss), 10*units.Mbps, 10*time.Millisecond)
	sent := map[int64]int{}
	h.fwd.drop = func(p *packet.Packet) bool {
		if p.Kind != packet.Data {
			return false
		}
		k := p.Seq / mss
		sent[k]++
		switch {
		case k == 10:
			return sent[k] <= 3
		case k == 25:
			return h.s.Now() < clock.Time(3*time.Second)
		case k >= 20:
			return sent[k] == 1
		}
		return false
	}
	var states []string
	s := h.snd
	s.rtoT = h.s.NewTimer(func(now clock.Time) {
		states = append(states, map[phase]string{open: "open", recovery: "recovery", lossPhase: "loss"}[s.phase])
		s.onRTO(now)
	})
	h.run(t, 30*time.Second)
	if h.rcv.DeliveredBytes != cfg.Bytes {
		t.Fatalf("delivered %d, want %d", h.rcv.DeliveredBytes, cfg.Bytes)
	}
	inRecovery, inLoss := s.TimeoutStates()
	t.Logf("timeouts in states %v", states)
	if inRecovery != 1 || inLoss != 1 || s.Stats().RTOs < 3 {
		t.Errorf("%d timeouts (%v): %d first in recovery, %d first in the loss state; want 1 and 1 of at least 3", s.Stats().RTOs, states, inRecovery, inLoss)
	}
	if st := s.State(); st.RTOsInRecovery != inRecovery || st.RTOsInLoss != inLoss {
		t.Errorf("State reports %d and %d, TimeoutStates %d and %d", st.RTOsInRecovery, st.RTOsInLoss, inRecovery, inLoss)
	}
}
