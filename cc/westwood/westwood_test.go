package westwood

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/cc/newreno"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

const mss = 1448

func newWestwood(t *testing.T, given map[string]float64) *Westwood {
	t.Helper()
	p, err := Spec.Resolve(given)
	if err != nil {
		t.Fatal(err)
	}
	return New(mss, p)
}

func ms(n int64) clock.Time { return clock.Time(time.Duration(n) * time.Millisecond) }

// TestEstimatorByHand follows tcp_westwood.c with HZ = 1000 (a jiffy is a
// millisecond) in Linux 6.18's order (each ACK's RTT sample before the
// estimator sees the ACK): ACKs of two segments every 10 ms with 100 ms
// RTT samples. The first ACK's bytes are not counted (first_ack). The
// first window ends on the first ACK more than an RTT (100 jiffies) after
// the handshake, at 110 ms, with the nine counted ACKs before it: 26,064
// bytes / 110 jiffies = 236 bytes a jiffy, which fills both filters. The
// second ends at 220 ms with eleven ACKs (the one at 110 ms opened it):
// 31,856 / 110 = 289; bw_ns_est = (7 x 236 + 289) >> 3 = 242, bw_est =
// (7 x 236 + 242) >> 3 = 236. The minimum RTT is 100 jiffies from the
// first ACK on. After a fast recovery the window and threshold are 236 x
// 100 / 1448 = 16 segments.
func TestEstimatorByHand(t *testing.T) {
	w := newWestwood(t, map[string]float64{"hz": 1000})
	w.OnEstablished(0, 100*time.Millisecond, 100*time.Millisecond)
	ack := func(at int64) {
		w.OnAck(ms(at), &cc.Ack{AckedBytes: 2 * mss, RTT: 100 * time.Millisecond, CwndLimited: true})
	}
	ack(10)
	if w.rttMin != 100 || w.rtt != 100 || w.bk != 0 {
		t.Fatalf("after the first ACK: rtt_min %d, rtt %d, bk %d; want 100, 100 and nothing counted", w.rttMin, w.rtt, w.bk)
	}
	for at := int64(20); at <= 100; at += 10 {
		ack(at)
	}
	if w.bwEst != 0 || w.bk != 9*2*mss {
		t.Fatalf("before 110 ms: bw_est %d, bk %d; want 0 and %d", w.bwEst, w.bk, 9*2*mss)
	}
	ack(110)
	if w.bwNsEst != 236 || w.bwEst != 236 {
		t.Fatalf("after the first window: bw_ns_est %d, bw_est %d; want 236, 236", w.bwNsEst, w.bwEst)
	}
	for at := int64(120); at <= 220; at += 10 {
		ack(at)
	}
	if w.bwNsEst != 242 || w.bwEst != 236 {
		t.Fatalf("after the second window: bw_ns_est %d, bw_est %d; want 242, 236", w.bwNsEst, w.bwEst)
	}
	bw, rtt := w.Estimate()
	if bw != 236*8*1000 || rtt != 100*time.Millisecond {
		t.Fatalf("Estimate() = %v, %v; want 1.888 Mbit/s and 100 ms", bw, rtt)
	}
	// Reno's reduction during the recovery, then CA_EVENT_COMPLETE_CWR.
	cwnd := w.CongestionWindow()
	w.OnCongestionEvent(ms(230), &cc.LossEvent{PriorInFlight: cwnd})
	if got := w.Ssthresh(); got != cwnd/mss/2*mss {
		t.Fatalf("ssthresh in recovery %d, want Reno's half of %d in whole segments", got, cwnd)
	}
	w.OnRecoveryEnd(ms(300))
	if got, want := w.CongestionWindow(), units.Bytes(16*mss); got != want || w.Ssthresh() != want {
		t.Fatalf("after recovery: cwnd %d, ssthresh %d; want both %d (16 segments)", got, w.Ssthresh(), want)
	}
}

// TestTimeout: a retransmission timeout sets the window to the flight
// plus one segment (tcp_enter_loss) and the threshold to the estimate
// (CA_EVENT_LOSS), and the next ACK restarts the minimum RTT from the
// latest sample; a second timeout keeps the threshold.
func TestTimeout(t *testing.T) {
	w := newWestwood(t, map[string]float64{"hz": 1000})
	w.OnEstablished(0, 0, 0)
	for at := int64(10); at <= 400; at += 10 {
		rtt := 100 * time.Millisecond
		if at > 300 {
			rtt = 150 * time.Millisecond // a path change
		}
		w.OnAck(ms(at), &cc.Ack{AckedBytes: 2 * mss, RTT: rtt, CwndLimited: true})
	}
	if w.rttMin != 100 {
		t.Fatalf("rtt_min %d, want 100", w.rttMin)
	}
	want := max(units.Bytes(w.bwEst*w.rttMin/mss), 2) * mss
	w.OnRetransmissionTimeout(ms(500), 0)
	if w.CongestionWindow() != mss || w.Ssthresh() != want {
		t.Fatalf("after a timeout: cwnd %d, ssthresh %d; want %d and %d", w.CongestionWindow(), w.Ssthresh(), mss, want)
	}
	w.OnRetransmissionTimeout(ms(900), 0)
	if w.Ssthresh() != want {
		t.Fatalf("a second timeout moved ssthresh to %d, want %d kept", w.Ssthresh(), want)
	}
	w.OnAck(ms(1000), &cc.Ack{AckedBytes: mss, RTT: 150 * time.Millisecond, CwndLimited: true})
	if w.rttMin != 150 {
		t.Fatalf("rtt_min %d after the timeout's next ACK, want the latest sample's 150", w.rttMin)
	}
}

// TestECNReduction: the end of an ECN reduction is CA_EVENT_COMPLETE_CWR
// too.
func TestECNReduction(t *testing.T) {
	w := newWestwood(t, nil)
	d := cctest.NewDriver(t, w, mss)
	for range 8 {
		d.Round()
	}
	d.Echo()
	d.Round()
	for d.LastAck().CWR {
		d.Round()
	}
	if want := max(units.Bytes(w.bwEst*w.rttMin/mss), 2) * mss; w.Ssthresh() != want {
		t.Fatalf("after an ECN reduction: ssthresh %d, want the estimate's %d", w.Ssthresh(), want)
	}
}

// TestPathRandomLoss: on a 10 Mbit/s, 50 ms path with a one-BDP buffer,
// the estimate converges to the link's rate when nothing is lost, and
// under 1% random loss Westwood+ keeps its window near the measured
// bandwidth-delay product where Reno halves it, so it delivers much more
// (the simulator's dumbbell: 4.8 against NewReno's 2.5 Mbit/s).
func TestPathRandomLoss(t *testing.T) {
	const rate = 10 * units.Mbps
	cfg := cctest.PathConfig{Rate: rate, BaseRTT: 50 * time.Millisecond, QueueLimit: 42 * mss, MSS: mss}
	w := newWestwood(t, nil)
	p := cctest.NewPath(t, w, cfg, nil)
	p.Run(60 * time.Second)
	bw, rtt := w.Estimate()
	t.Logf("lossless: goodput %v, estimate %v, min RTT %v", units.BandwidthFromDelta(p.Stats().Delivered, 60*time.Second), bw, rtt)
	if e := math.Abs(float64(bw)/float64(rate) - 1); e > 0.1 {
		t.Errorf("estimate %v, want within 10%% of the link's %v", bw, rate)
	}
	if rtt < 50*time.Millisecond || rtt > 60*time.Millisecond {
		t.Errorf("min RTT %v, want the path's 50 ms plus a packet time, to a 4 ms jiffy", rtt)
	}

	cfg.Drop = cctest.RandomDrop(0.01)
	goodput := map[string]units.Bandwidth{}
	for name, alg := range map[string]cc.Algorithm{
		"westwood": newWestwood(t, nil),
		"newreno":  newreno.New(mss, map[string]float64{"iw": 10, "beta": 0.5, "linux": 1}),
	} {
		p := cctest.NewPath(t, alg, cfg, nil)
		p.Run(60 * time.Second)
		goodput[name] = units.BandwidthFromDelta(p.Stats().Delivered, 60*time.Second)
	}
	t.Logf("1%% loss: westwood %v, newreno %v", goodput["westwood"], goodput["newreno"])
	if goodput["westwood"] < goodput["newreno"]*3/2 {
		t.Errorf("under 1%% random loss Westwood+ delivered %v, want at least 1.5x NewReno's %v", goodput["westwood"], goodput["newreno"])
	}
}

// TestSetParam: hz may change mid-run without moving the estimate's
// meaning (the counts are rescaled); bad values are refused.
func TestSetParam(t *testing.T) {
	w := newWestwood(t, map[string]float64{"hz": 1000})
	w.OnEstablished(0, 0, 0)
	for at := int64(10); at <= 500; at += 10 {
		w.OnAck(ms(at), &cc.Ack{AckedBytes: 2 * mss, RTT: 100 * time.Millisecond, CwndLimited: true})
	}
	bw, rtt := w.Estimate()
	if err := w.SetParam("hz", 250); err != nil {
		t.Fatal(err)
	}
	bw2, rtt2 := w.Estimate()
	if math.Abs(float64(bw2)/float64(bw)-1) > 0.01 || rtt2 != rtt {
		t.Fatalf("hz 1000 -> 250 moved the estimate from %v, %v to %v, %v", bw, rtt, bw2, rtt2)
	}
	if err := w.SetParam("hz", 50); err == nil {
		t.Fatal("hz = 50 accepted")
	}
}
