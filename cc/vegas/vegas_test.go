package vegas

import (
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

func newVegas(t testing.TB, given map[string]float64) *Vegas {
	t.Helper()
	p, err := Spec.Resolve(given)
	if err != nil {
		t.Fatalf("Spec.Resolve(%v): %v", given, err)
	}
	return New(mss, p)
}

func segs(b units.Bytes) float64 { return float64(b) / float64(mss) }

func TestDiff(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		cwnd      float64
		base, rtt time.Duration
		linux     bool
		want      float64
	}{
		{20, 100 * ms, 100 * ms, false, 0},
		{20, 100 * ms, 125 * ms, false, 4},            // 20*25/125
		{22, 100 * ms, 110 * ms, false, 2},            // 22*10/110
		{20, 100 * ms, 125 * ms, true, 5},             // 20*25/100
		{20.9, 100 * ms, 110 * ms, true, 2},           // whole packets: 20*10/100
		{33, 100 * ms, 110 * ms, true, 3},             // floor(3.3)
		{10, 40 * ms, 50 * ms, false, 10 * 10.0 / 50}, // 2
	}
	for _, tt := range tests {
		if got := Diff(tt.cwnd, tt.base, tt.rtt, tt.linux); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Diff(%g, %v, %v, linux=%v) = %g, want %g", tt.cwnd, tt.base, tt.rtt, tt.linux, got, tt.want)
		}
	}
}

// model is the once-per-RTT Vegas rule of Linux tcp_vegas_cong_avoid in
// congestion avoidance, from the formulas: diff = cwnd*(rtt-base)/rtt (or
// Linux's integer cwnd*(rtt-base)/base); beta is tested before alpha.
func model(cwnd int, base, rtt time.Duration, alpha, beta float64, linux bool) int {
	var diff float64
	if linux {
		diff = float64(cwnd * int(rtt-base) / int(base))
	} else {
		diff = float64(cwnd) * (rtt - base).Seconds() / rtt.Seconds()
	}
	switch {
	case diff > beta:
		cwnd--
	case diff < alpha:
		cwnd++
	}
	return max(cwnd, 2)
}

// enterCA takes v out of slow start at cw segments through one loss at 2*cw
// with RTT base, keeping data in flight (ACK-clocked) so that Vegas does not
// restart, and returns the driver with Vegas re-enabled.
func enterCA(t *testing.T, v *Vegas, cw int, base time.Duration) *cctest.Driver {
	t.Helper()
	d := cctest.NewDriver(t, v, mss)
	d.SetRTT(base)
	d.SendWindow()
	d.LoseN(1)
	if got := v.CongestionWindow(); got != units.Bytes(cw)*mss {
		t.Fatalf("cwnd after loss at %d segments = %d, want %d", 2*cw, got, units.Bytes(cw)*mss)
	}
	if v.Snapshot().Enabled {
		t.Fatalf("Vegas enabled during recovery")
	}
	d.Retransmit()
	d.Round()
	if d.InRecovery() || !v.Snapshot().Enabled {
		t.Fatalf("after recovery: in recovery %v, Vegas enabled %v; want false, true", d.InRecovery(), v.Snapshot().Enabled)
	}
	if got := v.Snapshot().BaseRTT; got != base {
		t.Fatalf("baseRTT = %v, want %v", got, base)
	}
	return d
}

// decide runs rounds at the driver's RTT and checks every Vegas decision
// against model. It returns the final window in segments and the number of
// decisions checked.
func decide(t *testing.T, d *cctest.Driver, v *Vegas, rounds int, base time.Duration, alpha, beta float64, linux bool) (int, int) {
	t.Helper()
	checked := 0
	first := true // the first round may mix samples from the previous RTT
	for range rounds {
		d.Advance(d.RTT())
		for n := d.Outstanding(); n > 0; {
			m := min(2, n)
			before := v.CongestionWindow()
			rounds := v.Snapshot().Rounds
			d.AckN(m)
			n -= m
			if v.Snapshot().Rounds != rounds { // a decision
				if !first {
					want := model(int(before/mss), base, d.RTT(), alpha, beta, linux)
					if got := v.CongestionWindow(); got != units.Bytes(want)*mss {
						t.Fatalf("decision at cwnd %g, rtt %v: cwnd %g segments, want %d (diff %.3f)", segs(before), d.RTT(), segs(got), want, v.Snapshot().Diff)
					}
					checked++
				}
				first = false
			}
			d.SendWindow()
		}
	}
	return int(v.CongestionWindow() / mss), checked
}

func TestCongestionAvoidanceFollowsModel(t *testing.T) {
	const base = 100 * time.Millisecond
	tests := []struct {
		name        string
		cw          int
		rtt         time.Duration
		alpha, beta float64
		linux       bool
		want        int // fixed point, segments
	}{
		// diff = cwnd*10/110 = cwnd/11: hold for 22 <= cwnd <= 44.
		{"grow to alpha", 16, 110 * time.Millisecond, 2, 4, false, 22},
		{"shrink to beta", 50, 110 * time.Millisecond, 2, 4, false, 44},
		{"hold", 30, 110 * time.Millisecond, 2, 4, false, 30},
		// Linux: diff = floor(cwnd*10/100): hold for 20 <= cwnd <= 49.
		{"linux grow", 16, 110 * time.Millisecond, 2, 4, true, 20},
		{"linux shrink", 60, 110 * time.Millisecond, 2, 4, true, 49},
		// NSGA-II-like thresholds (paper 003: alpha 8, beta 15).
		// diff = cwnd*25/125 = cwnd/5: hold for 40 <= cwnd <= 75.
		{"wide", 90, 125 * time.Millisecond, 8, 15, false, 75},
		// alpha > beta: beta wins above it, alpha below; the window
		// oscillates around diff = beta.
		{"alpha above beta", 30, 110 * time.Millisecond, 6, 3, false, 33},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newVegas(t, map[string]float64{"iw": float64(2 * tt.cw), "alpha": tt.alpha, "beta": tt.beta, "linux_diff": b2f(tt.linux)})
			d := enterCA(t, v, tt.cw, base)
			d.SetRTT(tt.rtt)
			got, checked := decide(t, d, v, 40, base, tt.alpha, tt.beta, tt.linux)
			if tt.name == "alpha above beta" {
				// 33*10/110 = 3 is not > 3 and < 6: grow to 34; 34/11 > 3:
				// shrink to 33; and so on.
				if got != 33 && got != 34 {
					t.Errorf("final cwnd %d segments, want 33 or 34 (oscillating around diff = beta)", got)
				}
			} else if got != tt.want {
				t.Errorf("final cwnd %d segments, want %d", got, tt.want)
			}
			if checked < 30 {
				t.Errorf("only %d decisions checked in 40 rounds, want at least 30", checked)
			}
		})
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// With two or fewer RTT samples in a round Vegas behaves as Reno for that
// round (Linux: cntRTT <= 2), even though the delay says "too fast".
func TestRenoWhenFewSamples(t *testing.T) {
	const base = 100 * time.Millisecond
	tests := []struct {
		ackEvery int
		vegas    bool // Vegas decides (one segment less per round), else Reno (grows)
	}{
		{2, true},   // 15 samples a round: diff = 30*50/150 = 10 > beta: shrink
		{20, false}, // 2 samples a round (30-40 segments): Reno, on the round-ending ACK only
		{40, false}, // 1 sample: the ACK covers the window; Reno adds a segment
	}
	for _, tt := range tests {
		v := newVegas(t, map[string]float64{"iw": 60})
		d := enterCA(t, v, 30, base)
		d.AckEvery = tt.ackEvery
		d.SetRTT(150 * time.Millisecond)
		d.Round() // settle the round boundaries at the new RTT
		d.Round()
		before := int(v.CongestionWindow() / mss)
		decisions := 0
		for range 6 {
			d.Advance(d.RTT())
			for n := d.Outstanding(); n > 0; {
				m := min(tt.ackEvery, n)
				rounds := v.Snapshot().Rounds
				d.AckN(m)
				n -= m
				if v.Snapshot().Rounds != rounds {
					decisions++
				}
				d.SendWindow()
			}
		}
		// Round boundaries drift against the driver's rounds as the window
		// changes, so count the decisions rather than assume one per round.
		got := int(v.CongestionWindow() / mss)
		switch {
		case decisions < 5:
			t.Errorf("ACK every %d segments: %d decisions in 6 rounds, want at least 5", tt.ackEvery, decisions)
		case tt.vegas && got != before-decisions:
			t.Errorf("ACK every %d segments: cwnd %d -> %d after %d decisions, want %d (Vegas: one less each)", tt.ackEvery, before, got, decisions, before-decisions)
		case !tt.vegas && (got <= before || got > before+decisions):
			t.Errorf("ACK every %d segments: cwnd %d -> %d after %d decisions, want Reno growth (at most one segment each)", tt.ackEvery, before, got, decisions)
		}
	}
}

// In slow start Vegas doubles the window each round until diff > gamma,
// then sets cwnd = min(cwnd, cwnd*baseRTT/rtt + 1) and leaves slow start.
func TestSlowStartExit(t *testing.T) {
	const base = 100 * time.Millisecond
	v := newVegas(t, nil)
	d := cctest.NewDriver(t, v, mss)
	d.SetRTT(base)
	for range 3 {
		d.Round()
	}
	if st := v.State(); st.Mode != "slow_start" {
		t.Fatalf("mode after 3 rounds at the base RTT = %q, want slow_start", st.Mode)
	}
	// The queue builds: RTT 150 ms gives diff = cwnd/3 > gamma = 1.
	d.SetRTT(150 * time.Millisecond)
	exited := false
	for r := 0; r < 3 && !exited; r++ {
		d.Advance(d.RTT())
		for n := d.Outstanding(); n > 0 && !exited; {
			m := min(2, n)
			before := v.CongestionWindow()
			minBefore := v.Snapshot().MinRTT
			rounds := v.Snapshot().Rounds
			d.AckN(m)
			n -= m
			if v.Snapshot().Rounds != rounds && v.State().Mode != "slow_start" {
				exited = true
				rtt := min(minBefore, d.RTT())
				target := units.Bytes(float64(before) * float64(base) / float64(rtt))
				want := min(before, target+mss)
				if got := v.CongestionWindow(); got != want {
					t.Errorf("cwnd at slow-start exit = %d, want min(%d, %d*%v/%v + MSS) = %d", got, before, before, base, rtt, want)
				}
				if got := v.Ssthresh(); got != v.CongestionWindow() {
					t.Errorf("ssthresh at exit = %d, want cwnd %d", got, v.CongestionWindow())
				}
			}
			d.SendWindow()
		}
	}
	if !exited {
		t.Fatalf("Vegas did not leave slow start with diff > gamma")
	}
}

func TestLossHalvesAndDisables(t *testing.T) {
	v := newVegas(t, map[string]float64{"iw": 40})
	d := cctest.NewDriver(t, v, mss)
	d.SendWindow()
	d.LoseN(2)
	if got := v.CongestionWindow(); got != 20*mss {
		t.Errorf("cwnd after loss at 40 segments = %d, want %d", got, 20*mss)
	}
	if got := v.Ssthresh(); got != 20*mss {
		t.Errorf("ssthresh after loss = %d, want %d", got, 20*mss)
	}
	if v.Snapshot().Enabled || v.State().Mode != "recovery" {
		t.Errorf("during recovery: Vegas enabled %v, mode %q; want false, recovery", v.Snapshot().Enabled, v.State().Mode)
	}
	d.Retransmit()
	d.Round()
	if !v.Snapshot().Enabled || v.State().Mode != "congestion_avoidance" {
		t.Errorf("after recovery: Vegas enabled %v, mode %q; want true, congestion_avoidance", v.Snapshot().Enabled, v.State().Mode)
	}
}

// TestDisorderPausesVegas: where the transport reports Linux's Disorder
// state, tcp_vegas_state disables Vegas there (Reno's rule grows the
// window) and enables it with a fresh round when the open state returns;
// an ACK that holds the window (cc.Ack.HoldWindow) grows nothing but
// still gives Vegas its RTT sample (pkts_acked).
func TestDisorderPausesVegas(t *testing.T) {
	v := newVegas(t, map[string]float64{"iw": 40})
	enterCA(t, v, 20, 100*time.Millisecond)
	if !v.Snapshot().Enabled {
		t.Fatal("Vegas not enabled in congestion avoidance")
	}
	delivered := v.lastDelivered
	v.OnAck(0, &cc.Ack{AckedBytes: mss, RTT: 90 * time.Millisecond, TotalDelivered: delivered + mss, CwndLimited: true, Disorder: true})
	if v.Snapshot().Enabled {
		t.Error("Vegas enabled in Disorder")
	}
	cwnd := v.CongestionWindow()
	samples := v.Snapshot().Samples
	v.OnAck(0, &cc.Ack{AckedBytes: 3 * mss, RTT: 95 * time.Millisecond, TotalDelivered: delivered + 4*mss, CwndLimited: true, Disorder: true, HoldWindow: true})
	if v.CongestionWindow() != cwnd || v.Snapshot().Samples != samples+1 {
		t.Errorf("a held ACK: cwnd %d -> %d, samples %d -> %d; want the window kept and one sample more", cwnd, v.CongestionWindow(), samples, v.Snapshot().Samples)
	}
	v.OnAck(0, &cc.Ack{AckedBytes: mss, RTT: 95 * time.Millisecond, TotalDelivered: delivered + 5*mss, CwndLimited: true})
	if sn := v.Snapshot(); !sn.Enabled || sn.Samples != 0 || v.nextRoundDelivered != delivered+5*mss {
		t.Errorf("back in the open state: enabled %v, %d samples, round from %d; want true, 0, %d", sn.Enabled, sn.Samples, v.nextRoundDelivered, delivered+5*mss)
	}
}

func TestTimeoutRestarts(t *testing.T) {
	v := newVegas(t, map[string]float64{"iw": 40})
	d := enterCA(t, v, 20, 100*time.Millisecond)
	d.Timeout()
	if got := v.CongestionWindow(); got != mss {
		t.Errorf("cwnd after RTO = %d, want %d", got, mss)
	}
	if got := v.Ssthresh(); got != 10*mss {
		t.Errorf("ssthresh after RTO at 20 segments = %d, want %d", got, 10*mss)
	}
	// Linux re-initialises Vegas (CA_EVENT_TX_START at the retransmission):
	// baseRTT is forgotten and relearnt.
	if got := v.Snapshot().BaseRTT; got != 0 {
		t.Errorf("baseRTT after RTO = %v, want 0 (forgotten)", got)
	}
	n := d.Retransmit()
	d.SetRTT(80 * time.Millisecond)
	d.Advance(d.RTT())
	d.AckAll() // retransmissions give no RTT sample (Karn)
	// Slow start ran while the transport reported InRecovery (Linux
	// TCP_CA_Loss calls cong_avoid).
	if got, want := v.CongestionWindow(), min(units.Bytes(n+1)*mss, v.Ssthresh()); got != want {
		t.Errorf("cwnd after %d segments delivered in timeout recovery = %d, want %d", n, got, want)
	}
	d.Round()
	if got := v.Snapshot().BaseRTT; got != 80*time.Millisecond {
		t.Errorf("baseRTT relearnt after RTO = %v, want 80ms", got)
	}
}

func TestIdleRestartForgetsBaseRTT(t *testing.T) {
	v := newVegas(t, nil)
	d := cctest.NewDriver(t, v, mss)
	d.Round()
	d.Advance(d.RTT())
	d.AckAll()
	if got := v.Snapshot().BaseRTT; got != 100*time.Millisecond {
		t.Fatalf("baseRTT = %v, want 100ms", got)
	}
	d.Advance(time.Second)
	d.Send(1) // nothing in flight: Linux CA_EVENT_TX_START
	if got := v.Snapshot().BaseRTT; got != 0 {
		t.Errorf("baseRTT after idle restart = %v, want 0", got)
	}
}

func TestNoGrowthWhenNotCwndLimited(t *testing.T) {
	v := newVegas(t, map[string]float64{"iw": 40})
	d := enterCA(t, v, 20, 100*time.Millisecond)
	d.AppLimited = true
	before := v.CongestionWindow()
	for range 10 {
		d.Round() // diff = 0 < alpha: Vegas would add a segment per round
	}
	if got := v.CongestionWindow(); got != before {
		t.Errorf("application-limited cwnd %d -> %d, want unchanged", before, got)
	}
}

// NSGA-II changes alpha and beta between runs or while running; the next
// decision uses the new thresholds.
func TestSetParamAtRunTime(t *testing.T) {
	const base = 100 * time.Millisecond
	v := newVegas(t, map[string]float64{"iw": 60})
	d := enterCA(t, v, 30, base)
	d.SetRTT(110 * time.Millisecond)
	if got, _ := decide(t, d, v, 20, base, 2, 4, false); got != 30 {
		t.Fatalf("cwnd %d, want 30 (held: diff 2.7 in [2, 4])", got)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"alpha", 3}, {"beta", 5}} {
		if err := v.SetParam(p.name, p.v); err != nil {
			t.Fatal(err)
		}
	}
	// diff = cwnd/11 < 3 until cwnd = 33.
	if got, _ := decide(t, d, v, 20, base, 3, 5, false); got != 33 {
		t.Errorf("cwnd after alpha=3, beta=5: %d, want 33", got)
	}
	// alpha > beta is accepted (documented) and not an error.
	if err := v.SetParam("alpha", 10); err != nil {
		t.Errorf("SetParam(alpha=10 > beta=5) = %v, want nil", err)
	}
}

// "iw" sets the window before the first ACK and is ignored after it.
func TestSetParamIW(t *testing.T) {
	v := newVegas(t, nil)
	if err := v.SetParam("iw", 20); err != nil {
		t.Fatal(err)
	}
	if got := v.CongestionWindow(); got != 20*mss {
		t.Errorf("cwnd after iw=20 before any ACK = %d, want %d", got, 20*mss)
	}
	d := cctest.NewDriver(t, v, mss)
	d.Round()
	before := v.CongestionWindow()
	if err := v.SetParam("iw", 5); err != nil {
		t.Fatal(err)
	}
	if got := v.CongestionWindow(); got != before {
		t.Errorf("iw=5 after ACKs changed cwnd %d -> %d", before, got)
	}
}

func TestSetParamErrors(t *testing.T) {
	tests := []struct {
		name    string
		v       float64
		wantErr string
	}{
		{"alpha", -1, "out of range"},
		{"beta", 1e9, "out of range"},
		{"linux_diff", 0.5, "whole number"},
		{"delta", 1, `no parameter "delta" (accepted: iw, alpha, beta, gamma, linux_diff)`},
	}
	for _, tt := range tests {
		err := newVegas(t, nil).SetParam(tt.name, tt.v)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("SetParam(%q, %g) = %v, want error containing %q", tt.name, tt.v, err, tt.wantErr)
		}
	}
}

func TestSpecDefaults(t *testing.T) {
	p, err := Spec.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"iw": 10, "alpha": 2, "beta": 4, "gamma": 1, "linux_diff": 0}
	for k, val := range want {
		if p[k] != val {
			t.Errorf("default %s = %g, want %g", k, p[k], val)
		}
	}
	if _, err := cc.New("vegas", mss, map[string]float64{"alpha": 8, "beta": 15}); err != nil {
		t.Errorf(`cc.New("vegas", alpha 8, beta 15): %v`, err)
	}
}

func TestOnAckDoesNotAllocate(t *testing.T) {
	v := newVegas(t, map[string]float64{"iw": 40})
	d := enterCA(t, v, 20, 100*time.Millisecond)
	a := d.LastAck()
	now := d.Now()
	var delivered units.Bytes = a.TotalDelivered
	allocs := testing.AllocsPerRun(1000, func() {
		now = now.Add(time.Millisecond)
		delivered += 2 * mss
		a.TotalDelivered = delivered
		a.Rate.PriorDelivered = delivered - 20*mss
		v.OnPacketSent(now, mss, 20*mss, false)
		v.OnAck(now, &a)
	})
	if allocs != 0 {
		t.Errorf("OnPacketSent+OnAck allocate %g times per call, want 0", allocs)
	}
}

func BenchmarkOnAck(b *testing.B) {
	p, _ := Spec.Resolve(nil)
	v := New(mss, p)
	v.reno.SetSsthresh(20 * mss)
	a := cc.Ack{AckedBytes: 2 * mss, RTT: 50 * time.Millisecond, SRTT: 50 * time.Millisecond, CwndLimited: true, InFlight: 20 * mss}
	var now clock.Time
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(100 * time.Microsecond)
		a.TotalDelivered += 2 * mss
		a.Rate.PriorDelivered = a.TotalDelivered - 20*mss // a decision every 10 ACKs
		a.RTT = 50*time.Millisecond + time.Duration(a.TotalDelivered%7)*time.Millisecond
		v.OnAck(now, &a)
	}
}
