package newreno

import (
	"strings"
	"testing"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/units"
)

const mss = 1000

func newReno(t *testing.T, params map[string]float64) *Reno {
	t.Helper()
	a, err := cc.New("newreno", mss, params)
	if err != nil {
		t.Fatal(err)
	}
	return a.(*Reno)
}

// ackRound acknowledges one window's worth of bytes in MSS-sized ACKs.
func ackRound(r *Reno) {
	w := r.CongestionWindow()
	for acked := 0; acked < int(w); acked += mss {
		r.OnAck(0, &cc.Ack{AckedBytes: mss, CwndLimited: true})
	}
}

func TestWindowEvolution(t *testing.T) {
	tests := []struct {
		name  string
		drive func(r *Reno)
		cwnd  int // segments
		ssth  int // segments; 0: infinite
		mode  string
	}{
		{"initial window", func(*Reno) {}, 10, 0, "slow_start"},
		{"slow start doubles per round", func(r *Reno) { ackRound(r); ackRound(r) }, 40, 0, "slow_start"},
		{"loss halves", func(r *Reno) { ackRound(r); r.OnCongestionEvent(0, &cc.LossEvent{}) }, 10, 10, "recovery"},
		{"no growth in recovery", func(r *Reno) {
			r.OnCongestionEvent(0, &cc.LossEvent{})
			r.OnAck(0, &cc.Ack{AckedBytes: 5 * mss, CwndLimited: true, InRecovery: true})
		}, 5, 5, "recovery"},
		{"congestion avoidance adds one MSS per window", func(r *Reno) {
			r.OnCongestionEvent(0, &cc.LossEvent{})
			r.OnRecoveryEnd(0)
			ackRound(r)
			ackRound(r)
		}, 7, 5, "congestion_avoidance"},
		{"application-limited ACKs do not grow", func(r *Reno) {
			r.OnAck(0, &cc.Ack{AckedBytes: 10 * mss})
		}, 10, 0, "slow_start"},
		{"timeout collapses to one segment", func(r *Reno) { ackRound(r); r.OnRetransmissionTimeout(0, 0) }, 1, 10, "slow_start"},
		{"second timeout keeps ssthresh", func(r *Reno) {
			ackRound(r)
			r.OnRetransmissionTimeout(0, 0)
			r.OnRetransmissionTimeout(0, 0)
		}, 1, 10, "slow_start"},
		{"slow start stops at ssthresh", func(r *Reno) {
			ackRound(r)
			r.OnRetransmissionTimeout(0, 0)
			for range 5 {
				ackRound(r)
			}
		}, 11, 10, "congestion_avoidance"},
		{"ssthresh floor is two segments", func(r *Reno) {
			r.OnRetransmissionTimeout(0, 0)
			r.OnCongestionEvent(0, &cc.LossEvent{})
		}, 2, 2, "recovery"},
	}
	for _, tt := range tests {
		r := newReno(t, nil)
		tt.drive(r)
		st := r.State()
		if st.Cwnd != units.Bytes(tt.cwnd*mss) || st.Ssthresh != units.Bytes(tt.ssth*mss) || st.Mode != tt.mode {
			t.Errorf("%s: cwnd %d ssthresh %d mode %s, want %d, %d, %s", tt.name, st.Cwnd/mss, st.Ssthresh/mss, st.Mode, tt.cwnd, tt.ssth, tt.mode)
		}
	}
}

func TestParams(t *testing.T) {
	r := newReno(t, map[string]float64{"iw": 4, "beta": 0.7})
	if r.CongestionWindow() != 4*mss {
		t.Errorf("iw 4: cwnd %d", r.CongestionWindow())
	}
	ackRound(r) // 8 segments
	r.OnCongestionEvent(0, &cc.LossEvent{})
	if r.CongestionWindow() != 5600 {
		t.Errorf("beta 0.7 after 8 segments: cwnd %d, want 5600", r.CongestionWindow())
	}
	if err := r.SetParam("iw", 20); err != nil || r.CongestionWindow() != 5600 {
		t.Errorf("iw after the first ACK must not change the window: %v, cwnd %d", err, r.CongestionWindow())
	}
	for _, bad := range []struct {
		name string
		v    float64
	}{{"beta", 1.5}, {"iw", 0}, {"gamma", 1}} {
		if err := r.SetParam(bad.name, bad.v); err == nil || !strings.Contains(err.Error(), "newreno") {
			t.Errorf("SetParam(%s, %g): %v", bad.name, bad.v, err)
		}
	}
}

// TestWholeSegments: with "linux" the window is Linux's packet count, so an
// odd window halves to the segment below (tcp_reno_ssthresh: cwnd >> 1),
// never to a fraction, the next increase comes after that many segments
// are acknowledged, and a timeout's threshold is rounded the same way;
// without it RFC 5681's bytes keep the half segment.
func TestWholeSegments(t *testing.T) {
	for _, c := range []struct {
		linux          float64
		after, ssAfter units.Bytes // window after the loss; ssthresh after a timeout from 9 segments
		acksToGrow     int         // segments acknowledged before the window grows again
	}{
		{1, 3 * mss, 4 * mss, 3},
		{0, 3*mss + mss/2, 4*mss + mss/2, 4},
	} {
		r := newReno(t, map[string]float64{"iw": 7, "linux": c.linux})
		r.OnCongestionEvent(0, &cc.LossEvent{})
		r.OnRecoveryEnd(0)
		if r.CongestionWindow() != c.after {
			t.Errorf("linux=%v: window 7 segments halves to %d bytes, want %d", c.linux, r.CongestionWindow(), c.after)
		}
		n := 0
		for w := r.CongestionWindow(); r.CongestionWindow() == w; n++ {
			r.OnAck(0, &cc.Ack{AckedBytes: mss, CwndLimited: true})
		}
		if n != c.acksToGrow {
			t.Errorf("linux=%v: window grew after %d segments acknowledged, want %d", c.linux, n, c.acksToGrow)
		}
		r2 := newReno(t, map[string]float64{"iw": 9, "linux": c.linux})
		r2.OnRetransmissionTimeout(0, 0)
		if r2.Ssthresh() != c.ssAfter {
			t.Errorf("linux=%v: timeout from 9 segments gives ssthresh %d, want %d", c.linux, r2.Ssthresh(), c.ssAfter)
		}
	}
}
