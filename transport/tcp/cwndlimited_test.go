package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/units"
)

// TestCwndLatch checks the verdict's rule against tcp_cwnd_validate's
// three conditions, each alone.
func TestCwndLatch(t *testing.T) {
	for _, c := range []struct {
		name     string
		held     cwndLatch
		full     bool
		una, nxt int64
		out      int32
		want     cwndLatch
	}{
		{"a full send replaces a held verdict at once", cwndLatch{false, 5, 40}, true, 10, 30, 20, cwndLatch{true, 20, 30}},
		{"a send that did not fill holds a full verdict within its window", cwndLatch{true, 20, 30}, false, 29, 33, 4, cwndLatch{true, 20, 30}},
		{"with more packets out too", cwndLatch{true, 20, 30}, false, 29, 55, 26, cwndLatch{true, 20, 30}},
		{"and replaces it once SND.UNA reaches the window's end", cwndLatch{true, 20, 30}, false, 30, 34, 4, cwndLatch{false, 4, 34}},
		{"a not-used verdict yields to more packets out", cwndLatch{false, 4, 34}, false, 31, 40, 9, cwndLatch{false, 9, 40}},
		{"but not to as many or fewer", cwndLatch{false, 9, 40}, false, 32, 41, 9, cwndLatch{false, 9, 40}},
	} {
		l := c.held
		l.validate(c.full, c.una, c.nxt, c.out)
		if l != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, l, c.want)
		}
	}
}

// TestLinuxCwndLimitedSlowStart: a flow that its send buffer holds to 20
// segments out stops growing its window at about 20 segments by default,
// where the buffer, not the window, stops its sends; with
// Config.LinuxCwndLimited, slow start grows it on to twice the packets
// out, as tcp_is_cwnd_limited allows ("ensure cwnd grows to twice what
// was ACKed"), and no further.
func TestLinuxCwndLimitedSlowStart(t *testing.T) {
	const mss = 1448
	for _, linux := range []bool{false, true} {
		cfg := Config{PendingQueue: 20 * mss, NoDelayedAck: true, LinuxCwndLimited: linux}
		alg := reno(mss)
		h := newHarness(t, cfg, alg, 100*units.Mbps, 10*time.Millisecond)
		h.run(t, 2*time.Second)
		st := alg.(cc.Inspector).State()
		segs := st.Cwnd / mss
		t.Logf("linux %v: cwnd %d segments (ssthresh %d bytes), %d segments sent, %d retransmitted", linux, segs, st.Ssthresh, h.snd.Stats().SegmentsSent, h.snd.Stats().Retransmissions)
		if h.snd.Stats().Retransmissions != 0 {
			t.Fatalf("linux %v: %d retransmissions on a path that loses nothing", linux, h.snd.Stats().Retransmissions)
		}
		switch {
		case !linux && (segs < 20 || segs > 22):
			t.Errorf("by default: cwnd %d segments, want 20-22 (where the buffer first stopped a send)", segs)
		case linux && (segs < 40 || segs > 41):
			t.Errorf("with the option: cwnd %d segments, want 40-41 (twice the 20 out, overshot by at most one ACK's segment)", segs)
		}
	}
}
