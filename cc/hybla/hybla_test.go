package hybla

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/units"
)

const mss = 1448

func newHybla(t *testing.T, given map[string]float64) *Hybla {
	t.Helper()
	p, err := Spec.Resolve(given)
	if err != nil {
		t.Fatal(err)
	}
	return New(mss, p)
}

func segs(b units.Bytes) int64 { return int64(b / mss) }

// TestInit: hybla_init sets the window to rho segments, rho = SRTT / 25
// ms in eighths (srtt_us, eight times the SRTT in microseconds, divided by
// rtt0 in microseconds), at least 1.
func TestInit(t *testing.T) {
	for _, tt := range []struct {
		srtt       time.Duration
		rho3ls     int64
		cwnd       int64
		noHandshke bool
	}{
		{600 * time.Millisecond, 192, 24, false}, // a GEO satellite hop
		{62500 * time.Microsecond, 20, 2, false},
		{30 * time.Millisecond, 9, 1, false},
		{20 * time.Millisecond, 8, 1, false}, // below rtt0: rho = 1, the window one segment
		{0, 0, 10, true},                     // no sample: the initial window
	} {
		h := newHybla(t, nil)
		h.OnEstablished(0, tt.srtt, tt.srtt)
		if h.Rho() != tt.rho3ls || segs(h.CongestionWindow()) != tt.cwnd {
			t.Errorf("SRTT %v: rho_3ls %d, cwnd %d segments; want %d, %d", tt.srtt, h.Rho(), segs(h.CongestionWindow()), tt.rho3ls, tt.cwnd)
		}
	}
}

func ack(h *Hybla, srtt time.Duration) {
	h.OnAck(0, &cc.Ack{AckedBytes: 2 * mss, SRTT: srtt, RTT: srtt, CwndLimited: true})
}

// TestSlowStart: with rho_3ls = 20 (rho 2 and a half) each ACK adds
// (2^2 x hybla_fraction(4)) - 128 = 4 x 181 - 128 = 596/128 segments:
// four, and 84/128 carried. Ten ACKs from 2 segments: 2 + 40 + 840/128
// = 48 segments (6 carried over, 72/128 left). The threshold caps it.
func TestSlowStart(t *testing.T) {
	h := newHybla(t, nil)
	srtt := 62500 * time.Microsecond
	h.OnEstablished(0, srtt, srtt)
	for range 10 {
		ack(h, srtt)
	}
	if got := segs(h.CongestionWindow()); got != 48 || h.cents != 72 {
		t.Fatalf("after 10 ACKs: cwnd %d segments, %d/128 carried; want 48, 72", got, h.cents)
	}
	h.reno.SetSsthresh(50 * mss)
	ack(h, srtt)
	if got := segs(h.CongestionWindow()); got != 50 {
		t.Fatalf("cwnd %d segments past ssthresh 50", got)
	}
}

// TestCongestionAvoidance: each ACK adds rho^2/cwnd segments (rho2_7ls /
// cwnd in 1/128ths), so a window's worth of ACKs, one per segment, adds
// about rho^2 segments: a flow with rho = 8 (200 ms against rtt0's 25)
// grows 64 segments a round trip where Reno grows one.
func TestCongestionAvoidance(t *testing.T) {
	for _, tt := range []struct {
		srtt time.Duration
		rho  int64
	}{{200 * time.Millisecond, 8}, {50 * time.Millisecond, 2}, {25 * time.Millisecond, 1}} {
		h := newHybla(t, nil)
		h.OnEstablished(0, tt.srtt, tt.srtt)
		h.reno.SetSsthresh(400 * mss)
		h.reno.SetCwnd(400 * mss)
		for round := range 3 {
			start := segs(h.CongestionWindow())
			for range start {
				h.OnAck(0, &cc.Ack{AckedBytes: mss, SRTT: tt.srtt, CwndLimited: true})
			}
			grown := segs(h.CongestionWindow()) - start
			// Within a round the window grows, so each ACK adds a
			// little less than rho^2/start.
			if want := tt.rho * tt.rho; grown > want || grown < want*9/10-1 {
				t.Errorf("rho %d, round %d from %d segments: grew %d, want about %d", tt.rho, round, start, grown, want)
			}
		}
	}
}

// TestLossState: outside the open state Linux's Hybla grows by Reno's
// rules (hybla_state; here a timeout's loss state): slow start by the
// segments acknowledged, not 2^rho - 1 per ACK.
func TestLossState(t *testing.T) {
	h := newHybla(t, nil)
	srtt := 600 * time.Millisecond
	h.OnEstablished(0, srtt, srtt)
	h.reno.SetCwnd(100 * mss)
	h.OnRetransmissionTimeout(0, 0)
	if segs(h.CongestionWindow()) != 1 || segs(h.Ssthresh()) != 50 {
		t.Fatalf("after a timeout: cwnd %d, ssthresh %d segments; want 1 and 50", segs(h.CongestionWindow()), segs(h.Ssthresh()))
	}
	h.OnAck(0, &cc.Ack{AckedBytes: 2 * mss, SRTT: srtt, CwndLimited: true, InLoss: true})
	if got := segs(h.CongestionWindow()); got != 3 {
		t.Fatalf("a loss-state ACK of 2 segments took cwnd 1 -> %d, want Reno's 3", got)
	}
	h.OnAck(0, &cc.Ack{AckedBytes: 2 * mss, SRTT: srtt, CwndLimited: true})
	if got := segs(h.CongestionWindow()); got != 50 {
		t.Fatalf("an open-state ACK with rho 24 took cwnd 3 -> %d, want ssthresh's 50", got)
	}
	// Recovery and an ECN reduction do not grow it at all (Linux does
	// not call cong_avoid in those states).
	h.OnAck(0, &cc.Ack{AckedBytes: 2 * mss, SRTT: srtt, CwndLimited: true, InRecovery: true})
	h.OnAck(0, &cc.Ack{AckedBytes: 2 * mss, SRTT: srtt, CwndLimited: true, CWR: true})
	if got := segs(h.CongestionWindow()); got != 50 {
		t.Fatalf("recovery ACKs moved cwnd to %d", got)
	}
}

// TestDisorderAndHeldACKs: where the transport reports Linux's Disorder
// state, Hybla grows by Reno's rule there (hybla_state clears hybla_en
// outside TCP_CA_Open): in congestion avoidance with rho 24, an ACK adds
// rho^2/cwnd = 11 segments in the open state and Reno's fraction of one
// in Disorder; and an ACK the transport says holds the window
// (cc.Ack.HoldWindow: Linux does not call cong_avoid) changes nothing,
// not even rho.
func TestDisorderAndHeldACKs(t *testing.T) {
	h := newHybla(t, nil)
	srtt := 600 * time.Millisecond
	h.OnEstablished(0, srtt, srtt)
	h.reno.SetCwnd(50 * mss)
	h.reno.SetSsthresh(20 * mss)
	h.OnAck(0, &cc.Ack{AckedBytes: mss, SRTT: srtt, CwndLimited: true, Disorder: true})
	if got := segs(h.CongestionWindow()); got != 50 {
		t.Fatalf("a Disorder ACK took cwnd 50 -> %d, want Reno's 50 (one segment per window of ACKs)", got)
	}
	h.OnAck(0, &cc.Ack{AckedBytes: mss, SRTT: 100 * time.Millisecond, CwndLimited: true, HoldWindow: true})
	if got := segs(h.CongestionWindow()); got != 50 || h.Rho() != 192 {
		t.Fatalf("a held ACK: cwnd %d segments, rho_3ls %d; want 50 and 192 kept", got, h.Rho())
	}
	h.OnAck(0, &cc.Ack{AckedBytes: mss, SRTT: srtt, CwndLimited: true})
	if got := segs(h.CongestionWindow()); got != 61 {
		t.Fatalf("an open-state ACK took cwnd 50 -> %d, want 61 (rho^2/cwnd = 576/50)", got)
	}
}

// TestRhoFollowsMinimumSRTT: rho is recomputed only when the SRTT falls
// below the smallest seen (a queue that fills does not raise it).
func TestRhoFollowsMinimumSRTT(t *testing.T) {
	h := newHybla(t, nil)
	h.OnEstablished(0, 200*time.Millisecond, 200*time.Millisecond)
	ack(h, 400*time.Millisecond)
	if h.Rho() != 64 {
		t.Fatalf("rho_3ls %d after a larger SRTT, want 64 kept", h.Rho())
	}
	ack(h, 100*time.Millisecond)
	if h.Rho() != 32 {
		t.Fatalf("rho_3ls %d after a smaller SRTT, want 32", h.Rho())
	}
	if err := h.SetParam("rtt0", 0.05); err != nil || h.Rho() != 16 {
		t.Fatalf("rtt0 = 50 ms: rho_3ls %d (err %v), want 16", h.Rho(), err)
	}
}

// TestPathRTTIndependence is Hybla's claim: under random loss its
// throughput at an RTT of rho x rtt0 is that of Reno at rtt0, where Reno's
// own falls as 1/RTT. At 0.5% loss on a 100 Mbit/s link (never the limit
// here), Hybla at 200 ms (rho = 8) against NewReno at 25 ms, both ACKing
// every segment (Hybla grows per ACK, Reno per segment): within 25%;
// NewReno at 200 ms gets a fraction of it.
func TestPathRTTIndependence(t *testing.T) {
	run := func(alg cc.Algorithm, base time.Duration) units.Bandwidth {
		cfg := cctest.PathConfig{Rate: 100 * units.Mbps, BaseRTT: base, MSS: mss, AckEvery: 1, Drop: cctest.RandomDrop(0.005)}
		p := cctest.NewPath(t, alg, cfg, nil)
		if e, ok := alg.(cc.Establisher); ok {
			e.OnEstablished(0, base, base)
		}
		p.Run(200 * time.Second)
		return units.BandwidthFromDelta(p.Stats().Delivered, 200*time.Second)
	}
	reno := func() cc.Algorithm { return newreno.New(mss, map[string]float64{"iw": 10, "beta": 0.5, "linux": 1}) }
	hybla := run(newHybla(t, nil), 200*time.Millisecond)
	reno25 := run(reno(), 25*time.Millisecond)
	reno200 := run(reno(), 200*time.Millisecond)
	t.Logf("hybla at 200 ms %v, newreno at 25 ms %v, newreno at 200 ms %v", hybla, reno25, reno200)
	if r := float64(hybla) / float64(reno25); math.Abs(r-1) > 0.25 {
		t.Errorf("Hybla at 200 ms / NewReno at 25 ms = %.2f, want 1 +- 0.25", r)
	}
	if hybla < 4*reno200 {
		t.Errorf("Hybla at 200 ms %v, want at least 4x NewReno's %v at the same RTT", hybla, reno200)
	}
}
