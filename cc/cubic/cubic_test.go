package cubic

import (
	"cmp"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

const mss units.Bytes = 1448

// newCubic builds a controller through the Spec, as cc.New does.
func newCubic(t testing.TB, given map[string]float64) *Cubic {
	t.Helper()
	p, err := Spec.Resolve(given)
	if err != nil {
		t.Fatalf("Spec.Resolve(%v): %v", given, err)
	}
	return New(mss, p)
}

func segs(b units.Bytes) float64 { return float64(b) / float64(mss) }

// rfcModel is an independent reference for RFC 9438 congestion avoidance
// (§4.2-4.5) with a continuous (fractional) window in segments, written from
// the formulas rather than from the controller.
type rfcModel struct {
	c, wMax, k  float64 // k in seconds
	cwnd        float64
	wEst, alpha float64
	cwndPrior   float64
	renoFriend  bool
}

func newRFCModel(c, beta, wMax, cwndPrior, cwndEpoch float64, renoFriendly bool) *rfcModel {
	m := &rfcModel{c: c, wMax: wMax, cwnd: cwndEpoch, wEst: cwndEpoch, cwndPrior: cwndPrior, renoFriend: renoFriendly}
	if cwndEpoch >= wMax {
		m.wMax = cwndEpoch // §4.8/§4.10: K = 0, W_max = cwnd_epoch
	} else {
		m.k = math.Cbrt((wMax - cwndEpoch) / c) // eq. 2
	}
	m.alpha = 3 * (1 - beta) / (1 + beta)
	if m.wEst >= cwndPrior {
		m.alpha = 1
	}
	return m
}

func (m *rfcModel) w(t float64) float64 { d := t - m.k; return m.c*d*d*d + m.wMax }

// ack applies one ACK of segsAcked segments at t seconds into the stage.
func (m *rfcModel) ack(t, rtt, segsAcked float64) {
	if m.renoFriend {
		m.wEst += m.alpha * segsAcked / m.cwnd // eq. 4
		if m.wEst >= m.cwndPrior {
			m.alpha = 1
		}
		if m.w(t) < m.wEst {
			m.cwnd = max(m.cwnd, m.wEst)
			return
		}
	}
	target := min(max(m.w(t+rtt), m.cwnd), 1.5*m.cwnd)
	m.cwnd += (target - m.cwnd) / m.cwnd * segsAcked
}

// enterCA drives cu from a window of wMax segments through one loss and its
// recovery. It returns the driver positioned just after the ACK that ended
// recovery, and that ACK (the first of the congestion-avoidance stage).
func enterCA(t *testing.T, cu *Cubic, wMax int, rtt time.Duration) (*cctest.Driver, cc.Ack) {
	t.Helper()
	d := cctest.NewDriver(t, cu, mss)
	d.SetRTT(rtt)
	if n := d.SendWindow(); n != wMax {
		t.Fatalf("initial window sent %d segments, want %d", n, wMax)
	}
	d.LoseN(1)
	d.Retransmit()
	d.Advance(rtt)
	var first cc.Ack
	for d.InFlight() > 0 {
		a := d.AckN(min(2, int(d.InFlight()/mss)))
		if !a.InRecovery {
			first = a
		}
	}
	if d.InRecovery() || first.AckedBytes == 0 {
		t.Fatalf("recovery did not end: in recovery %v", d.InRecovery())
	}
	return d, first
}

// TestFollowsRFCModel checks the window against the RFC reference ACK by
// ACK, in the concave and convex regions (100 ms RTT, cubic dominates) and
// in the Reno-friendly region (1 ms RTT, W_est dominates).
func TestFollowsRFCModel(t *testing.T) {
	tests := []struct {
		name   string
		rtt    time.Duration
		rounds int
		// tol is the allowed |controller - model|, segments.
		tol float64
		// wantMin is the minimum number of ACKs the scenario must spend in
		// the concave, convex and Reno-friendly regions.
		wantMin [3]int
	}{
		// The controller adds whole segments while the model adds
		// fractions on every ACK: it lags by less than one segment (the
		// increments are computed from slightly different windows, which
		// could in principle add a little; observed max 0.84).
		{"cubic", 100 * time.Millisecond, 70, 1, [3]int{1000, 500, 0}},
		// In the Reno-friendly region cwnd = W_est exactly (to a byte).
		{"reno_friendly", time.Millisecond, 150, 0.001, [3]int{0, 0, 5000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0})
			d, first := enterCA(t, cu, 100, tt.rtt)
			snap := cu.Snapshot()
			if snap.WMax != 100 || snap.CwndPrior != 100 {
				t.Fatalf("after loss at 100 segments: W_max %g, cwnd_prior %g; want 100, 100", snap.WMax, snap.CwndPrior)
			}
			epoch := snap.EpochStart
			m := newRFCModel(0.4, 0.7, 100, 100, 70, true)
			m.ack(0, first.SRTT.Seconds(), segs(first.AckedBytes))
			worst := 0.0
			var concave, convex, friendly int // ACKs per region, by the model
			for range tt.rounds {
				d.RoundFunc(func(a cc.Ack) {
					ts := d.Now().Sub(epoch).Seconds()
					m.ack(ts, a.SRTT.Seconds(), segs(a.AckedBytes))
					got := segs(cu.CongestionWindow())
					if diff := math.Abs(got - m.cwnd); diff > tt.tol {
						t.Fatalf("t=%.3fs: cwnd %.4f segments, want %.4f (RFC 9438 model) within %g", ts, got, m.cwnd, tt.tol)
					} else if diff > worst {
						worst = diff
					}
					switch {
					case m.w(ts) < m.wEst:
						friendly++
					case m.cwnd < 100:
						concave++
					default:
						convex++
					}
				})
			}
			t.Logf("max |cwnd - model| = %.4f segments; ACKs in concave/convex/Reno-friendly regions: %d/%d/%d", worst, concave, convex, friendly)
			if concave < tt.wantMin[0] || convex < tt.wantMin[1] || friendly < tt.wantMin[2] {
				t.Errorf("ACKs per region (concave, convex, Reno-friendly) = (%d, %d, %d), want at least %v", concave, convex, friendly, tt.wantMin)
			}
			if got := cu.Snapshot().Alpha; got != 1 {
				t.Errorf("alpha_cubic after W_est passed cwnd_prior = %g, want 1", got)
			}
		})
	}
}

// After each round the window has caught up with W_cubic at the end of the
// round (cwnd aims at W_cubic(t+RTT) during a round that lasts one RTT).
func TestWindowTracksCurveEachRound(t *testing.T) {
	const rtt = 100 * time.Millisecond
	cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0, "reno_friendly": 0})
	d, _ := enterCA(t, cu, 100, rtt)
	snap := cu.Snapshot()
	cv := NewCurve(0.4, 100, 70)
	if math.Abs(snap.K.Seconds()-cv.K.Seconds()) > 1e-9 {
		t.Fatalf("K = %v, want %v", snap.K, cv.K)
	}
	for r := range 60 {
		d.Round()
		want := cv.Window(d.Now().Sub(snap.EpochStart))
		got := segs(cu.CongestionWindow())
		// Within a round the increments are computed from the window at
		// each ACK, so the window ends slightly short of the target; the
		// shortfall is at most (target-cwnd)^2/(2*cwnd) plus one segment
		// of quantisation: under 2 segments here, and 1.5 % in relative
		// terms.
		if math.Abs(got-want) > 2 {
			t.Errorf("round %d (t=%v): cwnd %.2f segments, want W_cubic(t) = %.2f within 2", r, d.Now().Sub(snap.EpochStart), got, want)
		}
	}
}

func TestFastConvergence(t *testing.T) {
	tests := []struct {
		fc       float64
		wantWMax float64
	}{
		{1, 90 * 1.7 / 2},
		{0, 90},
	}
	for _, tt := range tests {
		cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0, "fast_convergence": tt.fc})
		d, _ := enterCA(t, cu, 100, 100*time.Millisecond)
		// Grow to 90 segments (< W_max = 100), then lose again.
		for segs(cu.CongestionWindow()) < 90 {
			d.Round()
		}
		cu.reno.SetCwnd(90 * mss) // land exactly on 90 for an exact check
		d.SendWindow()
		d.LoseN(1)
		snap := cu.Snapshot()
		if math.Abs(snap.WMax-tt.wantWMax) > 1e-9 {
			t.Errorf("fast_convergence=%g: W_max after loss at 90 < 100 = %g, want %g", tt.fc, snap.WMax, tt.wantWMax)
		}
		if got, want := cu.CongestionWindow(), units.Bytes(0.7*90*float64(mss)); got != want {
			t.Errorf("fast_convergence=%g: cwnd after loss = %d, want beta*cwnd = %d", tt.fc, got, want)
		}
	}
}

func TestMultiplicativeDecrease(t *testing.T) {
	tests := []struct {
		beta   float64
		cwnd   int // segments
		wantSS units.Bytes
	}{
		{0.7, 100, 70 * mss},
		{0.5, 100, 50 * mss},
		{0.7, 2, 2 * mss}, // floor of 2 segments (RFC 9438 §4.6)
	}
	for _, tt := range tests {
		cu := newCubic(t, map[string]float64{"iw": float64(tt.cwnd), "beta": tt.beta, "hystart": 0})
		d := cctest.NewDriver(t, cu, mss)
		d.SendWindow()
		d.LoseN(1)
		if got := cu.Ssthresh(); got != tt.wantSS {
			t.Errorf("beta %g, cwnd %d: ssthresh = %d, want %d", tt.beta, tt.cwnd, got, tt.wantSS)
		}
		if got := cu.CongestionWindow(); got != tt.wantSS {
			t.Errorf("beta %g, cwnd %d: cwnd = %d, want %d", tt.beta, tt.cwnd, got, tt.wantSS)
		}
		if st := cu.State(); st.Mode != "recovery" {
			t.Errorf("mode after loss = %q, want recovery", st.Mode)
		}
		// No growth while the transport is in recovery.
		before := cu.CongestionWindow()
		d.Advance(d.RTT())
		d.AckN(1)
		if got := cu.CongestionWindow(); got != before {
			t.Errorf("cwnd grew in recovery: %d -> %d", before, got)
		}
	}
}

// RFC 9438 §4.8: a timeout cuts cwnd to one segment and ssthresh to
// beta*cwnd; the next stage starts from its own window with K = 0.
func TestTimeout(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0})
	d, _ := enterCA(t, cu, 100, 50*time.Millisecond)
	for range 5 {
		d.Round()
	}
	cwnd := cu.CongestionWindow()
	d.SendWindow()
	d.Timeout()
	if got := cu.CongestionWindow(); got != mss {
		t.Errorf("cwnd after RTO = %d, want 1 MSS = %d", got, mss)
	}
	if got, want := cu.Ssthresh(), units.Bytes(float64(cwnd)*0.7); got != want {
		t.Errorf("ssthresh after RTO = %d, want 0.7*%d = %d", got, cwnd, want)
	}
	// The transport reports InRecovery until everything sent before the
	// timeout is delivered; slow start runs meanwhile (Linux TCP_CA_Loss).
	n := d.Retransmit()
	d.Advance(d.RTT())
	for d.Outstanding() > 2 {
		if a := d.AckN(2); !a.InRecovery {
			t.Fatalf("ACK during timeout recovery reports InRecovery false")
		}
	}
	// Slow start stops at ssthresh; congestion avoidance may add a fraction
	// of a segment after it.
	if got, want := cu.CongestionWindow(), min(units.Bytes(n-1)*mss, cu.Ssthresh()); got < want || got > want+mss {
		t.Errorf("cwnd after %d segments delivered in timeout recovery = %d, want min(1+%d segments, ssthresh) = %d (+ < 1 MSS)", n-2, got, n-2, want)
	}
	d.AckAll()
	for cu.Ssthresh() > cu.CongestionWindow() {
		d.Advance(d.RTT())
		d.AckAll()
		d.SendWindow()
	}
	d.Advance(d.RTT())
	d.AckAll()
	snap := cu.Snapshot()
	if !snap.InEpoch || snap.K != 0 || snap.WMax != 0 {
		t.Fatalf("first stage after RTO: in epoch %v, K %v, W_max %g; want true, 0, 0", snap.InEpoch, snap.K, snap.WMax)
	}
	// The stage began at ssthresh (slow start stops there); its curve's
	// plateau is that window.
	if got, want := snap.CurveWMax, segs(cu.Ssthresh()); math.Abs(got-want) > 1e-9 {
		t.Errorf("curve plateau after RTO = %g segments, want cwnd_epoch = %g", got, want)
	}
}

// A second timeout while the window is already collapsed keeps the first
// timeout's ssthresh, and a timeout during fast recovery keeps recovery's.
func TestTimeoutKeepsSsthresh(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0})
	d := cctest.NewDriver(t, cu, mss)
	d.SendWindow()
	d.LoseN(1)
	ss := cu.Ssthresh()
	d.Timeout()
	if got := cu.Ssthresh(); got != ss {
		t.Errorf("RTO during recovery: ssthresh = %d, want recovery's %d", got, ss)
	}
	d.Timeout()
	if got := cu.Ssthresh(); got != ss {
		t.Errorf("second RTO: ssthresh = %d, want %d", got, ss)
	}
}

func TestNoGrowthWhenNotCwndLimited(t *testing.T) {
	for _, iw := range []float64{10, 100} { // slow start, and congestion avoidance
		cu := newCubic(t, map[string]float64{"iw": iw, "hystart": 0})
		d := cctest.NewDriver(t, cu, mss)
		if iw == 100 {
			d, _ = enterCA(t, cu, 100, 100*time.Millisecond)
		}
		d.AppLimited = true
		before := cu.CongestionWindow()
		for range 10 {
			d.Send(4)
			d.Advance(100 * time.Millisecond)
			d.AckAll()
		}
		if got := cu.CongestionWindow(); got != before {
			t.Errorf("iw %g: application-limited sender's cwnd changed %d -> %d", iw, before, got)
		}
	}
}

// RFC 9438 §5.8: t excludes idle periods; the epoch moves by the time
// since the last send when sending resumes with nothing in flight.
func TestIdleShiftsEpoch(t *testing.T) {
	const rtt = 100 * time.Millisecond
	cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0})
	d, _ := enterCA(t, cu, 100, rtt)
	d.Round() // refills while ACKs arrive: the last send is now
	lastSend := d.Now()
	d.Advance(rtt)
	d.AckAll() // the pipe drains: the application stops sending
	start := cu.Snapshot().EpochStart
	d.Advance(5 * time.Second)
	d.Send(1)
	idle := d.Now().Sub(lastSend)
	if got, want := cu.Snapshot().EpochStart, start.Add(idle); got != want {
		t.Errorf("epoch after %v without sending = %v, want %v", idle, got, want)
	}
	// A send with data still in flight is not a restart.
	d.Advance(time.Second)
	d.Send(1)
	if got, want := cu.Snapshot().EpochStart, start.Add(idle); got != want {
		t.Errorf("epoch moved on a send with data in flight: %v, want %v", got, want)
	}
}

func TestSlowStartDoublesPerRound(t *testing.T) {
	cu := newCubic(t, map[string]float64{"hystart": 0})
	d := cctest.NewDriver(t, cu, mss)
	want := 10 * mss
	for r := range 6 {
		if got := cu.CongestionWindow(); got != want {
			t.Fatalf("round %d: cwnd %d, want %d", r, got, want)
		}
		d.Round()
		want *= 2
	}
	if st := cu.State(); st.Mode != "slow_start" || st.Ssthresh != 0 {
		t.Errorf("State() = %+v, want slow_start with no ssthresh", st)
	}
}

func TestHystart(t *testing.T) {
	tests := []struct {
		name   string
		detect float64
		// bump is the RTT increase from round bumpFrom on (default 3);
		// gap the ACK spacing.
		bump, gap time.Duration
		bumpFrom  int
		// wantExit is the window (segments) at which slow start must end,
		// 0 for never (within the rounds run).
		wantExit float64
	}{
		// Delay: from round 3 (32 segments) the RTT is 20 ms above
		// delay_min = 100 ms, more than clamp(100ms/8, 4ms, 16ms) =
		// 12.5 ms; 10 ms is not.
		{"delay", HystartDelay, 20 * time.Millisecond, 0, 0, 32},
		{"delay below threshold", HystartDelay, 10 * time.Millisecond, 0, 0, 0},
		// From round 2 (16 segments: 8 ACKs) the delay is up, but Linux
		// compares only after HYSTART_MIN_SAMPLES = 8 samples in a round.
		{"delay needs 8 samples", HystartDelay, 20 * time.Millisecond, 0, 2, 32},
		// ACK train: ACKs 1 ms apart; a round of 16 segments gives 8 ACKs
		// spanning 7 ms > delay_min/2 = 5 ms.
		{"ack train", HystartACKTrain, 0, time.Millisecond, 0, 16},
		// ACKs 0.1 ms apart: the train of 32 ACKs at 64 segments spans
		// 3.1 ms, too short; 64 ACKs at 128 segments span 6.3 ms.
		{"ack train dense", HystartACKTrain, 0, 100 * time.Microsecond, 0, 128},
		{"ack train spaced out", HystartACKTrain, 0, 3 * time.Millisecond, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cu := newCubic(t, map[string]float64{"iw": 4, "hystart_detect": tt.detect})
			d := cctest.NewDriver(t, cu, mss)
			base := 100 * time.Millisecond
			if tt.gap > 0 {
				base = 10 * time.Millisecond
			}
			exit := 0.0
			for r := range 6 {
				rtt := base
				if from := cmp.Or(tt.bumpFrom, 3); r >= from {
					rtt += tt.bump
				}
				w := segs(cu.CongestionWindow())
				d.SendWindow()
				d.Advance(rtt)
				d.AckAllSpaced(tt.gap)
				if exit == 0 && cu.Snapshot().HystartFound {
					exit = w
				}
			}
			if exit != tt.wantExit {
				t.Fatalf("slow start ended at %g segments, want %g (0 = never)", exit, tt.wantExit)
			}
			if exit > 0 && cu.Ssthresh() < units.Bytes(exit)*mss {
				t.Errorf("ssthresh %d after HyStart exit at %g segments, want at least cwnd at detection", cu.Ssthresh(), exit)
			}
		})
	}
}

func TestHystartOffSlowStartsUntilLoss(t *testing.T) {
	cu := newCubic(t, map[string]float64{"hystart": 0, "iw": 4})
	d := cctest.NewDriver(t, cu, mss)
	for r := range 6 {
		rtt := 100 * time.Millisecond
		if r >= 3 {
			rtt += 50 * time.Millisecond
		}
		d.SendWindow()
		d.Advance(rtt)
		d.AckAll()
	}
	if got, want := cu.CongestionWindow(), 4*64*mss; got != want {
		t.Errorf("cwnd after 6 rounds without HyStart = %d, want %d", got, want)
	}
}

func TestSpecDefaults(t *testing.T) {
	p, err := Spec.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"iw": 10, "beta": 0.7, "c": 0.4, "fast_convergence": 1, "reno_friendly": 1,
		"hystart": 1, "hystart_detect": 3, "hystart_low_window": 16, "hystart_ack_delta": 0.002, "linux": 0, "hz": 250}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("default %s = %g, want %g", k, p[k], v)
		}
	}
	if len(p) != len(want) {
		t.Errorf("Resolve(nil) has %d parameters, want %d", len(p), len(want))
	}
	a, err := cc.New("cubic", mss, nil)
	if err != nil {
		t.Fatalf(`cc.New("cubic"): %v`, err)
	}
	if got := a.CongestionWindow(); got != 10*mss {
		t.Errorf("initial window = %d, want %d", got, 10*mss)
	}
}

func TestSetParam(t *testing.T) {
	tests := []struct {
		name    string
		v       float64
		wantErr string
	}{
		{"beta", 0.8, ""},
		{"c", 1.2, ""},
		{"hystart", 0, ""},
		{"beta", 1.5, "out of range"},
		{"hystart", 0.5, "whole number"},
		{"alpha", 1, `no parameter "alpha"`},
		{"c", math.NaN(), "finite"},
	}
	for _, tt := range tests {
		cu := newCubic(t, nil)
		err := cu.SetParam(tt.name, tt.v)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("SetParam(%q, %g) = %v, want nil", tt.name, tt.v, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("SetParam(%q, %g) = %v, want error containing %q", tt.name, tt.v, err, tt.wantErr)
		}
	}
}

// "iw" sets the window before the first ACK and is ignored after it.
func TestSetParamIW(t *testing.T) {
	cu := newCubic(t, nil)
	if err := cu.SetParam("iw", 20); err != nil {
		t.Fatal(err)
	}
	if got := cu.CongestionWindow(); got != 20*mss {
		t.Errorf("cwnd after iw=20 before any ACK = %d, want %d", got, 20*mss)
	}
	d := cctest.NewDriver(t, cu, mss)
	d.Round()
	before := cu.CongestionWindow()
	if err := cu.SetParam("iw", 5); err != nil {
		t.Fatal(err)
	}
	if got := cu.CongestionWindow(); got != before {
		t.Errorf("iw=5 after ACKs changed cwnd %d -> %d", before, got)
	}
}

// Changing C mid-stage re-derives K from the same W_max and cwnd_epoch.
func TestSetParamCRecomputesK(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 100, "hystart": 0})
	enterCA(t, cu, 100, 100*time.Millisecond)
	if err := cu.SetParam("c", 4); err != nil {
		t.Fatal(err)
	}
	if got, want := cu.Snapshot().K.Seconds(), math.Cbrt(30.0/4); math.Abs(got-want) > 1e-9 {
		t.Errorf("K after C=4 = %.9fs, want %.9fs", got, want)
	}
	if err := cu.SetParam("beta", 0.5); err != nil {
		t.Fatal(err)
	}
	if got := cu.Snapshot().Alpha; got != 1 && math.Abs(got-AlphaCubic(0.5)) > 1e-15 {
		t.Errorf("alpha after beta=0.5 = %g, want %g", got, AlphaCubic(0.5))
	}
}

func TestOnAckDoesNotAllocate(t *testing.T) {
	cu := newCubic(t, map[string]float64{"iw": 100})
	d, a := enterCA(t, cu, 100, 100*time.Millisecond)
	now := d.Now()
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Millisecond)
		cu.OnPacketSent(now, mss, 50*mss, false)
		cu.OnAck(now, &a)
	})
	if allocs != 0 {
		t.Errorf("OnPacketSent+OnAck allocate %g times per call, want 0", allocs)
	}
}

func BenchmarkOnAck(b *testing.B) {
	p, _ := Spec.Resolve(nil)
	cu := New(mss, p)
	cu.reno.SetSsthresh(10 * mss) // congestion avoidance
	a := cc.Ack{AckedBytes: 2 * mss, RTT: 50 * time.Millisecond, SRTT: 50 * time.Millisecond, MinRTT: 50 * time.Millisecond, CwndLimited: true}
	var now clock.Time
	ev := cc.LossEvent{}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		cu.OnAck(now, &a)
		// A loss every 5000 ACKs keeps the window in a realistic range.
		if n++; n%5000 == 0 {
			cu.OnCongestionEvent(now, &ev)
			cu.OnRecoveryEnd(now)
		}
	}
}
