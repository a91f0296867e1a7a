package bbr

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

const mss units.Bytes = 1448

// noAggregation turns off the ACK-aggregation allowance, for tests of the
// window formula that feed ACKs at irregular rates.
var noAggregation = map[string]float64{"extra_acked_gain": 0}

func newTestBBR(t testing.TB, given map[string]float64) *BBR {
	t.Helper()
	p, err := Spec.Resolve(given)
	if err != nil {
		t.Fatalf("Spec.Resolve(%v): %v", given, err)
	}
	a, err := Spec.New(cc.Config{MSS: mss, Params: p})
	if err != nil {
		t.Fatalf("Spec.New: %v", err)
	}
	return a.(*BBR)
}

// feeder hands BBR hand-made ACKs with exact rate samples: each ACK
// delivers acked bytes with a delivery-rate sample of exactly bw, an RTT
// sample rtt, and starts a new round or not, as asked.
type feeder struct {
	t         *testing.T
	b         *BBR
	now       clock.Time
	delivered units.Bytes
	mark      units.Bytes // TotalDelivered at the last round start
	// Defaults for ack.
	bw         units.Bandwidth
	rtt        time.Duration
	inFlight   units.Bytes
	inRecovery bool
	appLimited bool
	lost       units.Bytes
}

func newFeeder(t *testing.T, b *BBR) *feeder {
	t.Helper()
	f := &feeder{t: t, b: b, bw: 10 * units.Mbps, rtt: 40 * time.Millisecond, inFlight: 20 * mss}
	b.OnPacketSent(0, mss, mss, false)
	return f
}

// ack advances time by dt and delivers one ACK of two segments.
func (f *feeder) ack(dt time.Duration, newRound bool) cc.Ack {
	f.t.Helper()
	f.now = f.now.Add(dt)
	const acked = 2 * mss
	prior := f.mark - 1
	if newRound || f.mark == 0 {
		prior = f.mark
	}
	f.delivered += acked
	if newRound || f.mark == 0 {
		f.mark = f.delivered
	}
	// A sample of bw: Delivered bytes over the interval they need at bw.
	const sampleBytes = 20 * mss
	a := cc.Ack{
		AckedBytes: acked, LostBytes: f.lost,
		PriorInFlight: f.inFlight + acked, InFlight: f.inFlight,
		RTT: f.rtt, MinRTT: f.rtt, SRTT: f.rtt,
		InRecovery: f.inRecovery, CwndLimited: true,
		TotalDelivered: f.delivered,
		Rate: cc.RateSample{
			DeliveryRate: f.bw, Delivered: sampleBytes, Interval: time.Duration(float64(sampleBytes) * 8 / float64(f.bw) * 1e9),
			PriorDelivered: max(prior, 0), RTT: f.rtt, IsAppLimited: f.appLimited,
		},
	}
	f.lost = 0
	f.b.OnAck(f.now, &a)
	return a
}

// rounds feeds n rounds of k ACKs each, spread over one RTT.
func (f *feeder) rounds(n, k int) {
	f.t.Helper()
	for range n {
		for i := range k {
			f.ack(f.rtt/time.Duration(k), i == 0)
		}
	}
}

// bbrQuantum is the send quantum from Linux bbr_tso_segs_goal, written out.
func bbrQuantum(pacing units.Bandwidth) int64 {
	bytes := min(int64(pacing)/8/1024, 65535-320)
	segs := bytes / int64(mss)
	if pacing < 1200*units.Kbps {
		segs = max(segs, 1)
	} else {
		segs = max(segs, 2)
	}
	return min(segs, 127)
}

// wantTarget is bbr_inflight written out: ceil(gain*bw*minRTT) segments
// plus 3 quanta, rounded up to even, plus 2 in PROBE_BW phase 0.
func wantTarget(bw units.Bandwidth, minRTT time.Duration, gain float64, pacing units.Bandwidth, phase0 bool) units.Bytes {
	bdp := gain * float64(bw) / 8 * minRTT.Seconds() / float64(mss)
	segs := int64(math.Ceil(bdp-1e-9)) + 3*bbrQuantum(pacing)
	if segs%2 == 1 {
		segs++
	}
	if phase0 {
		segs += 2
	}
	return units.Bytes(segs) * mss
}

// toProbeBW drives a fresh BBR through STARTUP and DRAIN at a constant
// bandwidth, entering PROBE_BW on its last ACK.
func toProbeBW(t *testing.T, b *BBR, f *feeder) {
	t.Helper()
	inFlight := f.inFlight
	f.inFlight = 1000 * mss // keep DRAIN from ending at once
	for i := 0; b.Snapshot().Mode != Drain; i++ {
		if i == 100 {
			t.Fatalf("no DRAIN after 100 rounds at constant bandwidth")
		}
		f.rounds(1, 10)
	}
	f.inFlight = 4 * mss // drained
	f.ack(f.rtt/10, false)
	if m := b.Snapshot().Mode; m != ProbeBW {
		t.Fatalf("mode after STARTUP at constant bandwidth and a drained pipe = %v, want probe_bw", m)
	}
	f.inFlight = inFlight
}

// STARTUP keeps its high gains while the bandwidth grows by 25% a round and
// ends after 3 rounds without such growth (Linux bbr_full_bw_cnt), DRAIN
// paces at 1/high_gain until in-flight falls to the BDP target.
func TestStartupDrainProbeBW(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	f.inFlight = 200 * mss
	growth := []units.Bandwidth{1000, 2000, 4000, 8000, 9000, 9500} // kbit/s per round; 9000 and 9500 < 1.25*8000
	for i, g := range growth {
		f.bw = g * units.Kbps
		f.rounds(1, 5)
		s := b.Snapshot()
		if s.Mode != Startup || s.FullBwReached {
			t.Fatalf("round %d at %v: mode %v, full %v; want startup, false", i, f.bw, s.Mode, s.FullBwReached)
		}
		if s.PacingGain != HighGain || s.CwndGain != HighGain {
			t.Fatalf("STARTUP gains = %g, %g; want %g, %g", s.PacingGain, s.CwndGain, HighGain, HighGain)
		}
	}
	// full_bw was set at 8 Mbit/s; 9 and 9.5 are 1 and 2 rounds without
	// 25% growth; the third is the next round start.
	f.ack(f.rtt/5, true)
	s := b.Snapshot()
	if !s.FullBwReached || s.Mode != Drain {
		t.Fatalf("after 3 rounds below 125%% growth: full %v, mode %v; want true, drain", s.FullBwReached, s.Mode)
	}
	if got, want := s.PacingGain, 1/HighGain; got != want {
		t.Errorf("DRAIN pacing gain = %g, want 1/high_gain = %g", got, want)
	}
	bw := 9500 * units.Kbps
	if got, want := b.PacingRate(), units.Bandwidth(float64(bw)/HighGain*0.99); got != want {
		t.Errorf("DRAIN pacing rate = %v, want bw/high_gain*0.99 = %v", got, want)
	}
	if got, want := b.State().Ssthresh, wantTarget(bw, f.rtt, 1, b.PacingRate(), false); got != want {
		t.Errorf("ssthresh at DRAIN = %d, want inflight(bw, 1) = %d", got, want)
	}
	// Still above the target: stay in DRAIN.
	f.ack(f.rtt/5, false)
	if m := b.Snapshot().Mode; m != Drain {
		t.Fatalf("mode with in-flight above the BDP target = %v, want drain", m)
	}
	f.inFlight = wantTarget(bw, f.rtt, 1, b.PacingRate(), false)
	f.ack(f.rtt/5, false)
	if m := b.Snapshot().Mode; m != ProbeBW {
		t.Fatalf("mode with in-flight at the BDP target = %v, want probe_bw", m)
	}
}

// App-limited rounds do not count towards the full pipe, and app-limited
// samples only raise the estimate.
func TestAppLimitedSamples(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	f.rounds(1, 5)
	f.appLimited = true
	f.bw = 5 * units.Mbps
	f.rounds(5, 5)
	s := b.Snapshot()
	if s.BtlBw != 10*units.Mbps {
		t.Errorf("BtlBw after lower app-limited samples = %v, want 10Mbps", s.BtlBw)
	}
	if s.FullBwReached {
		t.Errorf("full pipe declared on application-limited rounds")
	}
	f.bw = 12 * units.Mbps
	f.ack(f.rtt/5, true)
	if got := b.Snapshot().BtlBw; got != 12*units.Mbps {
		t.Errorf("BtlBw after a higher app-limited sample = %v, want 12Mbps", got)
	}
}

func TestPacingRateAndCwndTarget(t *testing.T) {
	tests := []struct {
		bw     units.Bandwidth
		minRTT time.Duration
	}{
		{10 * units.Mbps, 40 * time.Millisecond},
		{1 * units.Mbps, 100 * time.Millisecond}, // low rate: 1-segment quanta below 1.2 Mbit/s at gain 0.75
		{100 * units.Mbps, 10 * time.Millisecond},
		{1 * units.Gbps, 200 * time.Microsecond},
	}
	for _, tt := range tests {
		b := newTestBBR(t, noAggregation) // the formula without the ACK-aggregation allowance
		f := newFeeder(t, b)
		f.bw, f.rtt = tt.bw, tt.minRTT
		toProbeBW(t, b, f)
		f.inFlight = 1000 * mss
		for range 300 { // through every phase, and long enough to reach the target
			f.ack(tt.minRTT/3, false)
			s := b.Snapshot()
			if got, want := b.PacingRate(), units.Bandwidth(float64(tt.bw)*s.PacingGain*0.99); got != want {
				t.Fatalf("%v, %v, gain %g: pacing rate %v, want gain*bw*0.99 = %v", tt.bw, tt.minRTT, s.PacingGain, got, want)
			}
			// Above target (cwnd grows by acked until it reaches it), cwnd
			// snaps to the target once the pipe is full.
			want := wantTarget(tt.bw, tt.minRTT, 2, b.PacingRate(), s.CycleIndex == 0)
			if got := b.CongestionWindow(); got > want || got < min(want, b.Snapshot().PriorCwnd) && got != want {
				t.Fatalf("%v, %v, phase %d: cwnd %d, want target %d", tt.bw, tt.minRTT, s.CycleIndex, got, want)
			}
		}
		if got, want := b.CongestionWindow(), wantTarget(tt.bw, tt.minRTT, 2, b.PacingRate(), b.Snapshot().CycleIndex == 0); got != want {
			t.Errorf("%v, %v: steady cwnd %d, want cwnd_gain*BDP + quanta = %d", tt.bw, tt.minRTT, got, want)
		}
	}
}

// startPhase is the PROBE_BW phase Linux enters for a random draw r in
// [0, 7): cycle_idx = 7 - r, then advanced.
func startPhase(r int) int { return (cycleLen - 1 - r + 1) % cycleLen }

func TestGainCycle(t *testing.T) {
	for _, seed := range []uint64{0, 1, 2, 3, 42} {
		b := newTestBBR(t, map[string]float64{"seed": float64(seed)})
		wantStart := 0
		if seed != 0 {
			wantStart = startPhase(rand.New(rand.NewPCG(seed, pcgStream)).IntN(cycleRand))
		}
		f := newFeeder(t, b)
		toProbeBW(t, b, f)
		if got := b.Snapshot().CycleIndex; got != wantStart {
			t.Fatalf("seed %d: start phase %d, want %d", seed, got, wantStart)
		}
		// With plenty in flight, the 1.25 phase ends after one min_rtt
		// (in-flight reached 1.25*BDP), the 0.75 phase after one min_rtt
		// (not yet drained), the 1.0 phases after one min_rtt each.
		f.inFlight = 1000 * mss
		var gains []float64
		last := -1
		for range 16 * 4 {
			f.ack(f.rtt/3, false)
			if s := b.Snapshot(); s.CycleIndex != last {
				last = s.CycleIndex
				gains = append(gains, s.PacingGain)
			}
		}
		for i, g := range gains {
			if want := pacingGainCycle[(wantStart+i)%cycleLen]; g != want {
				t.Fatalf("seed %d: phase %d of the cycle has gain %g, want %g (sequence %v)", seed, i, g, want, gains)
			}
		}
		if len(gains) < 16 {
			t.Errorf("seed %d: %d phases in 64 ACKs of min_rtt/3, want at least 16", seed, len(gains))
		}
	}
}

// The 0.75 phase ends early once in-flight is down to the BDP target, and
// the 1.25 phase lasts past min_rtt until in-flight reaches 1.25*BDP.
func TestGainCycleInflightConditions(t *testing.T) {
	b := newTestBBR(t, nil) // seed 0: start at phase 0
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	target125 := wantTarget(f.bw, f.rtt, 1.25, b.PacingRate(), true)
	f.inFlight = target125 - 3*mss // PriorInFlight = InFlight + 2 segments: just below
	for range 10 {
		f.ack(f.rtt/2, false)
	}
	if got := b.Snapshot().CycleIndex; got != 0 {
		t.Fatalf("phase after 5 min_rtt below the 1.25 target = %d, want 0 (keep probing)", got)
	}
	f.inFlight = target125 - 2*mss
	f.ack(time.Millisecond, false)
	if got := b.Snapshot().CycleIndex; got != 1 {
		t.Fatalf("phase after reaching the 1.25 target = %d, want 1", got)
	}
	f.inFlight = wantTarget(f.bw, f.rtt, 1, b.PacingRate(), false) - 2*mss
	f.ack(time.Millisecond, false)
	if got := b.Snapshot().CycleIndex; got != 2 {
		t.Errorf("phase after in-flight fell to the BDP target within min_rtt = %d, want 2", got)
	}
	// A loss ends probing early too, once the phase is full length.
	b2 := newTestBBR(t, nil)
	f2 := newFeeder(t, b2)
	toProbeBW(t, b2, f2)
	f2.inFlight = 10 * mss
	f2.ack(f2.rtt/2, false)
	f2.lost = mss
	f2.ack(f2.rtt/2+time.Millisecond, false)
	if got := b2.Snapshot().CycleIndex; got != 1 {
		t.Errorf("phase after a loss in a full-length 1.25 phase = %d, want 1", got)
	}
}

func TestRandomStartPhaseDistribution(t *testing.T) {
	counts := make([]int, cycleLen)
	const seeds = 1400
	for seed := 1; seed <= seeds; seed++ {
		b := newTestBBR(t, map[string]float64{"seed": float64(seed)})
		b.resetProbeBwMode(0)
		counts[b.cycleIdx]++
	}
	if counts[1] != 0 {
		t.Errorf("start phase 1 (the 0.75 drain) chosen %d times, want never", counts[1])
	}
	// Each of the 7 phases has p = 1/7: mean 200, sd sqrt(1400/7*6/7) =
	// 13.1; allow 4 sd.
	for i, c := range counts {
		if i != 1 && math.Abs(float64(c)-seeds/7) > 4*13.1 {
			t.Errorf("start phase %d chosen %d times of %d, want %d +- 52", i, c, seeds, seeds/7)
		}
	}
}

func TestProbeRTT(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	minRTT := b.Snapshot().MinRTT
	stamp := b.Snapshot().MinRTTStamp
	f.rtt = 50 * time.Millisecond // queueing: no refresh
	f.inFlight = 60 * mss
	for f.now.Add(10*time.Millisecond) <= stamp.Add(10*time.Second) {
		f.ack(10*time.Millisecond, false)
		if m := b.Snapshot().Mode; m == ProbeRTT {
			t.Fatalf("PROBE_RTT at %v, before min_rtt (stamped %v) was 10 s old", f.now, stamp)
		}
	}
	before := b.CongestionWindow()
	f.ack(10*time.Millisecond, false) // now past stamp + 10 s
	s := b.Snapshot()
	if s.Mode != ProbeRTT {
		t.Fatalf("mode after min_rtt expired = %v, want probe_rtt", s.Mode)
	}
	if got := b.CongestionWindow(); got != 4*mss {
		t.Errorf("PROBE_RTT cwnd = %d, want 4 segments", got)
	}
	if s.PriorCwnd != before {
		t.Errorf("saved cwnd = %d, want %d", s.PriorCwnd, before)
	}
	if s.MinRTT != f.rtt {
		t.Errorf("min_rtt after expiry = %v, want the new sample %v (old %v)", s.MinRTT, f.rtt, minRTT)
	}
	// In-flight falls to 4 segments: the 200 ms timer starts. Rounds pass
	// meanwhile, so BBR leaves at the first ACK after 200 ms.
	f.inFlight = 4 * mss
	f.ack(time.Millisecond, false)
	armed := f.now
	for f.now.Add(20*time.Millisecond) <= armed.Add(200*time.Millisecond) {
		f.ack(20*time.Millisecond, true)
		if b.Snapshot().Mode != ProbeRTT {
			t.Fatalf("left PROBE_RTT at %v, %v after arming, want more than 200ms", f.now, f.now.Sub(armed))
		}
	}
	f.ack(time.Millisecond, false)
	s = b.Snapshot()
	if s.Mode != ProbeBW {
		t.Fatalf("mode after 200 ms and a round = %v, want probe_bw", s.Mode)
	}
	if s.MinRTTStamp != f.now {
		t.Errorf("min_rtt stamp after PROBE_RTT = %v, want %v (refreshed)", s.MinRTTStamp, f.now)
	}
	if got := b.CongestionWindow(); got < min(before, s.TargetCwnd) {
		t.Errorf("cwnd after PROBE_RTT = %d, want restored towards %d (target %d)", got, before, s.TargetCwnd)
	}
}

// When a round takes longer than 200 ms, PROBE_RTT lasts until it ends.
func TestProbeRTTLastsARound(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.rtt = 500 * time.Millisecond
	for i := 0; b.Snapshot().Mode != ProbeRTT; i++ {
		if i == 1000 {
			t.Fatalf("no PROBE_RTT after 50 s without a new min_rtt")
		}
		f.ack(50*time.Millisecond, false)
	}
	f.inFlight = 4 * mss
	f.ack(time.Millisecond, false) // arms the 200 ms timer and a round
	for range 10 {
		f.ack(50*time.Millisecond, false) // 500 ms, but no round start
	}
	if m := b.Snapshot().Mode; m != ProbeRTT {
		t.Fatalf("left PROBE_RTT after 500 ms without a round: mode %v", m)
	}
	// The feeder's first round-start ACK still refers to data sent before
	// the timer was armed; the second delivers data sent after.
	f.ack(time.Millisecond, true)
	f.ack(time.Millisecond, true)
	if m := b.Snapshot().Mode; m != ProbeBW {
		t.Errorf("mode after the round ended = %v, want probe_bw", m)
	}
}

// Samples taken in PROBE_RTT, at 4 segments in flight, are treated as
// application-limited (Linux sets tp->app_limited): they neither lower the
// estimate when the window expires nor count towards the LT estimator.
func TestProbeRTTSamplesAreAppLimited(t *testing.T) {
	b := newTestBBR(t, map[string]float64{"bw_window_rounds": 2})
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.rtt = 50 * time.Millisecond
	for i := 0; b.Snapshot().Mode != ProbeRTT; i++ {
		if i == 1000 {
			t.Fatalf("no PROBE_RTT after 50 s without a new min_rtt")
		}
		f.ack(50*time.Millisecond, true)
	}
	// Segments sent from now on deliver at a low rate.
	f.bw = 1 * units.Mbps
	f.inFlight = 4 * mss
	for range 5 {
		f.ack(50*time.Millisecond, true)
	}
	if got := b.Snapshot().BtlBw; got != 10*units.Mbps {
		t.Errorf("BtlBw after PROBE_RTT's low-rate rounds = %v, want 10Mbps kept", got)
	}
}

func TestProbeRTTDisabled(t *testing.T) {
	b := newTestBBR(t, map[string]float64{"probe_rtt_duration": 0})
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.rtt = 50 * time.Millisecond
	for range 300 {
		f.ack(100*time.Millisecond, false)
		if b.Snapshot().Mode == ProbeRTT {
			t.Fatalf("entered PROBE_RTT with probe_rtt_duration = 0")
		}
	}
	if got := b.Snapshot().MinRTT; got != f.rtt {
		t.Errorf("min_rtt after expiry = %v, want refreshed to %v", got, f.rtt)
	}
}

func TestSetMinRTTWindowAtRunTime(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.rtt = 50 * time.Millisecond
	for range 10 {
		f.ack(100*time.Millisecond, false) // 1 s: within 10 s
	}
	if b.Snapshot().Mode == ProbeRTT {
		t.Fatalf("PROBE_RTT before the window expired")
	}
	if err := b.SetParam("min_rtt_window", 0.5); err != nil {
		t.Fatal(err)
	}
	f.ack(time.Millisecond, false)
	if s := b.Snapshot(); s.Mode != ProbeRTT || s.MinRTT != f.rtt {
		t.Errorf("after shrinking min_rtt_window below the sample's age: mode %v, min_rtt %v; want probe_rtt, %v", s.Mode, s.MinRTT, f.rtt)
	}
}

func TestSetBwWindowAtRunTime(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.bw = 5 * units.Mbps
	f.rounds(4, 4)
	if got := b.Snapshot().BtlBw; got != 10*units.Mbps {
		t.Fatalf("BtlBw 4 rounds after the drop = %v, want 10Mbps (window 10)", got)
	}
	if err := b.SetParam("bw_window_rounds", 3); err != nil {
		t.Fatal(err)
	}
	if got := b.Snapshot().BtlBw; got != 5*units.Mbps {
		t.Errorf("BtlBw after shrinking the window to 3 rounds = %v, want 5Mbps", got)
	}
	if err := b.SetParam("bw_window_rounds", 20); err != nil {
		t.Fatal(err)
	}
	if got := b.Snapshot().BtlBw; got != 10*units.Mbps {
		t.Errorf("BtlBw after growing the window to 20 rounds = %v, want 10Mbps (samples retained)", got)
	}
}

// Loss recovery: one round of packet conservation, then growth towards the
// target, and the saved window restored at the end.
func TestRecovery(t *testing.T) {
	b := newTestBBR(t, nil)
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	f.inFlight = 30 * mss
	f.rounds(2, 10)
	saved := b.CongestionWindow()
	b.OnCongestionEvent(f.now, &cc.LossEvent{PriorInFlight: 30 * mss, LostBytes: 3 * mss})
	if got := b.Snapshot().PriorCwnd; got != saved {
		t.Errorf("saved cwnd = %d, want %d", got, saved)
	}
	f.inRecovery = true
	f.inFlight = 25 * mss
	f.lost = 3 * mss
	f.ack(time.Millisecond, false)
	if got, want := b.CongestionWindow(), 25*mss+2*mss; got != want {
		t.Errorf("cwnd on entering recovery = %d, want in-flight + acked = %d", got, want)
	}
	if !b.Snapshot().PacketConservation {
		t.Errorf("packet conservation off in the first round of recovery")
	}
	// Within the round the window never falls below in-flight + acked.
	f.inFlight = 26 * mss
	f.ack(time.Millisecond, false)
	if got, want := b.CongestionWindow(), 28*mss; got != want {
		t.Errorf("cwnd in packet conservation = %d, want %d", got, want)
	}
	// A new round: conservation ends and cwnd grows by acked (at most
	// twice the delivery rate) towards the target. Recovery restarted the
	// round at its first ACK, so the feeder's first round-start ACK still
	// belongs to it (and conserves: cwnd stays at in-flight + acked); the
	// second ends it.
	f.ack(time.Millisecond, true)
	if !b.Snapshot().PacketConservation {
		t.Errorf("packet conservation ended before the recovery round did")
	}
	f.ack(time.Millisecond, true)
	if b.Snapshot().PacketConservation {
		t.Errorf("packet conservation still on after a round")
	}
	if got, want := b.CongestionWindow(), 30*mss; got != want {
		t.Errorf("cwnd after the first round of recovery = %d, want 28+2 segments = %d", got, want)
	}
	f.inRecovery = false
	f.ack(time.Millisecond, false)
	if got := b.CongestionWindow(); got < saved && got != b.Snapshot().TargetCwnd {
		t.Errorf("cwnd after recovery = %d, want the saved %d (capped by target %d)", got, saved, b.Snapshot().TargetCwnd)
	}
}

// timeOut takes b to PROBE_BW and through a retransmission timeout with
// 30 segments in flight, and returns the window it had before.
func timeOut(t *testing.T, b *BBR, f *feeder) units.Bytes {
	t.Helper()
	toProbeBW(t, b, f)
	saved := b.CongestionWindow()
	f.inFlight = 30 * mss
	f.ack(time.Millisecond, false)
	b.OnRetransmissionTimeout(f.now, 0)
	return saved
}

func TestRetransmissionTimeout(t *testing.T) {
	// tcp.Sender reports InRecovery until the data outstanding at the
	// timeout is delivered (which may take longer or shorter than the
	// 30 segments outstanding here, with SACKed or lost data); other
	// transports may not report it at all.
	tests := []struct {
		name     string
		reported int // ACKs with InRecovery after the timeout
		restored int // ACKs after the timeout when the window is restored
	}{
		{"reported past the outstanding data", 20, 21},
		{"reported shorter", 3, 4},
		{"not reported", 0, 15},
	}
	for _, tt := range tests {
		b := newTestBBR(t, noAggregation)
		f := newFeeder(t, b)
		saved := timeOut(t, b, f)
		if got := b.CongestionWindow(); got != mss {
			t.Errorf("%s: cwnd after RTO = %d, want 1 segment", tt.name, got)
		}
		if got := b.Snapshot().PriorCwnd; got != saved {
			t.Errorf("%s: saved cwnd = %d, want %d", tt.name, got, saved)
		}
		f.inFlight = mss
		restore := min(saved, b.Snapshot().TargetCwnd)
		for i := 1; i <= 25; i++ {
			f.inRecovery = i <= tt.reported
			f.ack(time.Millisecond, false)
			got := b.CongestionWindow()
			switch {
			case i == 1 && got != 4*mss:
				// Retransmissions are delivered: the window grows by what
				// is acked, at least to 4 segments.
				t.Errorf("%s: cwnd after the first ACK following an RTO = %d, want max(1+2, 4) segments = %d", tt.name, got, 4*mss)
			case i < tt.restored && got >= restore:
				t.Errorf("%s: cwnd %d restored at ACK %d, before the episode ended at ACK %d", tt.name, got, i, tt.restored)
			case i >= tt.restored && got < restore:
				t.Errorf("%s: cwnd %d at ACK %d, want restored to min(saved %d, target) = %d from ACK %d", tt.name, got, i, saved, restore, tt.restored)
			}
		}
	}
}

// A token-bucket policer: deliveries at a steady 2 Mbit/s with 25% of the
// data lost. Two consistent lossy intervals of at least 4 rounds make BBR
// pace at their average with gain 1, for 48 rounds.
func TestLongTermBandwidth(t *testing.T) {
	for _, on := range []bool{true, false} {
		b := newTestBBR(t, map[string]float64{"lt_bw": b2f(on)})
		f := newFeeder(t, b)
		toProbeBW(t, b, f)
		// The policer: 2 Mbit/s delivered, one segment lost per two
		// delivered... per round of 5 ACKs (10 segments), 3 segments lost.
		const policed = 2 * units.Mbps
		f.bw = policed
		f.rtt = 40 * time.Millisecond
		perACK := time.Duration(float64(2*mss) * 8 / float64(policed) * 1e9)
		used := false
		for r := range 30 {
			for i := range 5 {
				if i == 4 {
					f.lost = 3 * mss
				}
				f.ack(perACK, i == 0)
			}
			if s := b.Snapshot(); s.LtUseBw && !used {
				used = true
				if math.Abs(float64(s.LtBw)-float64(policed))/float64(policed) > 0.01 {
					t.Errorf("lt_bw = %v after %d rounds, want within 1%% of the policed %v", s.LtBw, r, policed)
				}
				if s.Bw != s.LtBw || s.PacingGain != 1 {
					t.Errorf("with lt_bw in use: bw %v (lt %v), pacing gain %g; want bw = lt_bw, gain 1", s.Bw, s.LtBw, s.PacingGain)
				}
			}
		}
		if used != on {
			t.Fatalf("lt_bw=%v: policer detected = %v", on, used)
		}
		if !on {
			continue
		}
		// 48 rounds later BBR stops using lt_bw and probes again.
		f.lost = 0
		f.bw = 10 * units.Mbps
		for range 48 {
			f.rounds(1, 2)
		}
		if b.Snapshot().LtUseBw {
			t.Errorf("lt_bw still in use after 48 more rounds")
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestInitialPacingRate(t *testing.T) {
	b := newTestBBR(t, nil)
	// Before any RTT sample: high_gain * 10 segments / 1 ms.
	want := units.Bandwidth(float64(units.BandwidthFromDelta(10*mss, time.Millisecond)) * HighGain * 0.99)
	if got := b.PacingRate(); got != want {
		t.Errorf("initial pacing rate = %v, want %v", got, want)
	}
	if got := b.CongestionWindow(); got != 10*mss {
		t.Errorf("initial cwnd = %d, want %d", got, 10*mss)
	}
}

func TestSpecAndSetParam(t *testing.T) {
	p, err := Spec.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"iw": 10, "bw_window_rounds": 10, "min_rtt_window": 10, "probe_rtt_duration": 0.2,
		"high_gain": 2 / math.Ln2, "cwnd_gain": 2, "lt_bw": 1, "seed": 0}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("default %s = %g, want %g", k, p[k], v)
		}
	}
	errs := []struct {
		name    string
		v       float64
		wantErr string
	}{
		{"bw_window_rounds", 0, "out of range"},
		{"bw_window_rounds", 101, "out of range"},
		{"bw_window_rounds", 2.5, "whole number"},
		{"min_rtt_window", 0, "out of range"},
		{"cwnd_gain", math.Inf(1), "finite"},
		{"rtprop", 1, `no parameter "rtprop"`},
	}
	for _, tt := range errs {
		err := newTestBBR(t, nil).SetParam(tt.name, tt.v)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("SetParam(%q, %g) = %v, want error containing %q", tt.name, tt.v, err, tt.wantErr)
		}
	}
	b := newTestBBR(t, nil)
	for _, name := range Spec.ParamNames() {
		ps, _ := Spec.Param(name)
		if err := b.SetParam(name, ps.Max); err != nil {
			t.Errorf("SetParam(%q, max %g) = %v", name, ps.Max, err)
		}
	}
}

func TestNewRejectsNilSource(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "bbr: nil rand.Source") {
			t.Errorf("New(cfg, nil) panic = %v, want \"bbr: nil rand.Source...\"", r)
		}
	}()
	p, _ := Spec.Resolve(nil)
	New(ConfigFromParams(mss, p), nil)
}

// New with an injected source draws start phases from it.
func TestNewUsesInjectedSource(t *testing.T) {
	p, _ := Spec.Resolve(nil)
	b := New(ConfigFromParams(mss, p), rand.NewPCG(7, 9))
	ref := rand.New(rand.NewPCG(7, 9))
	for range 10 {
		b.resetProbeBwMode(0)
		if got, want := b.cycleIdx, startPhase(ref.IntN(cycleRand)); got != want {
			t.Fatalf("start phase %d, want %d", got, want)
		}
	}
}

func TestOnAckDoesNotAllocate(t *testing.T) {
	b := newTestBBR(t, map[string]float64{"seed": 5})
	f := newFeeder(t, b)
	toProbeBW(t, b, f)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		i++
		b.OnPacketSent(f.now, mss, 20*mss, false)
		f.ack(f.rtt/5, i%5 == 0)
	})
	if allocs != 0 {
		t.Errorf("OnPacketSent+OnAck allocate %g times per call, want 0", allocs)
	}
}

func BenchmarkOnAck(b *testing.B) {
	p, _ := Spec.Resolve(map[string]float64{"seed": 1})
	a, _ := Spec.New(cc.Config{MSS: mss, Params: p})
	bb := a.(*BBR)
	ack := cc.Ack{AckedBytes: 2 * mss, InFlight: 40 * mss, PriorInFlight: 42 * mss, RTT: 40 * time.Millisecond, SRTT: 40 * time.Millisecond, CwndLimited: true,
		Rate: cc.RateSample{Delivered: 40 * mss, Interval: 46 * time.Millisecond, RTT: 40 * time.Millisecond}}
	var now clock.Time
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(2317 * time.Microsecond) // 2 segments at 10 Mbit/s
		ack.TotalDelivered += 2 * mss
		ack.Rate.PriorDelivered = ack.TotalDelivered - 40*mss // a round every 20 ACKs
		bb.OnAck(now, &ack)
	}
}
