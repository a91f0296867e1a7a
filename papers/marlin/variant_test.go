package marlin

import (
	"bytes"
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/transport/tcp"
)

// TestCompactRewardTerms checks each term of CompactReward for sign and
// scale: time costs one per second, delivering at RefRate pays it back,
// a retransmission costs RetxCost, RTT inflation costs QueueCost per
// second per nominal RTT (never a bonus below the nominal, capped).
func TestCompactRewardTerms(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	if r := CompactReward(0.1, 0, 0, 1); !near(r, -0.1) {
		t.Errorf("idle step: %g, want -0.1 (one tenth of a second)", r)
	}
	if r := CompactReward(0.1, RefRate*0.1, 0, 1); !near(r, 0) {
		t.Errorf("delivering at RefRate: %g, want 0", r)
	}
	if r := CompactReward(0.1, 2*RefRate*0.1, 0, 1); !(r > 0) {
		t.Errorf("delivering at twice RefRate: %g, want > 0", r)
	}
	base := CompactReward(0.1, 5000, 0, 1)
	for _, n := range []int64{1, 10, 50} {
		if d := base - CompactReward(0.1, 5000, n, 1); !near(d, RetxCost*float64(n)) {
			t.Errorf("%d retransmissions cost %g, want %g", n, d, RetxCost*float64(n))
		}
	}
	if d := CompactReward(1, 0, 0, 1) - CompactReward(1, 0, 0, 2); !near(d, QueueCost) {
		t.Errorf("a second at twice the nominal RTT costs %g, want %g", d, QueueCost)
	}
	if CompactReward(1, 0, 0, 0.5) != CompactReward(1, 0, 0, 1) {
		t.Error("an RTT below the nominal earned a bonus")
	}
	if d := CompactReward(1, 0, 0, 1) - CompactReward(1, 0, 0, 100); !near(d, QueueCost*maxInflation) {
		t.Errorf("100x inflation costs %g, want the cap %g", d, QueueCost*maxInflation)
	}
	// 50 retransmissions are worth one second, as documented.
	if !near(50*RetxCost, 1) {
		t.Errorf("50 retransmissions cost %g s, the docs say 1", 50*RetxCost)
	}
}

// TestCompactFeaturesCraftedTrace feeds the compact meter a hand-made
// sequence of sender states and RTT samples and checks every feature
// against values computed by hand, including the windows' expiry.
func TestCompactFeaturesCraftedTrace(t *testing.T) {
	const floor = 14480
	var m compactMeter
	m.reset(0, 600_000, floor, int(DefaultCapacityWindow/StepInterval), int(DefaultMinRTTWindow/StepInterval))
	out := make([]float32, CompactFeatures)
	step := func(k int, st tcp.FlowState, rtts ...time.Duration) compactStep {
		for _, r := range rtts {
			m.onRTT(r)
		}
		return m.measure(clock.Time(time.Duration(k)*100*time.Millisecond), st, out)
	}
	check := func(k int, want [CompactFeatures]float64) {
		t.Helper()
		for i, w := range want {
			if math.Abs(float64(out[i])-w) > 1e-4 {
				t.Errorf("step %d: %s = %g, want %g", k, CompactFeatureNames[i], out[i], w)
			}
		}
	}
	// Step 1: nothing delivered yet, no data RTT sample: the handshake's
	// RTT stands in, the BDP estimate is the floor.
	st := tcp.FlowState{Cwnd: floor, SndNxt: floor, MinRTT: time.Second, LatestRTT: time.Second}
	st.Stats.SegmentsSent = 10
	s := step(1, st)
	if s.bdp != floor || s.minRTT != time.Second {
		t.Fatalf("step 1: bdp %v, min RTT %v; want the floor and the handshake's 1 s", s.bdp, s.minRTT)
	}
	check(1, [CompactFeatures]float64{0, -4, 0, 0, 0, 0, 0.005, 0.6})
	// Step 2: 16 KB delivered, samples of 1 s and 1.5 s, one of four
	// segments retransmitted. Rate over the two steps: 80 KB/s.
	st = tcp.FlowState{Cwnd: 64000, SndUna: 16000, SndNxt: 70000, Delivered: 16000, MinRTT: time.Second, LatestRTT: 1500 * time.Millisecond}
	st.Stats.SegmentsSent, st.Stats.Retransmissions = 14, 1
	s = step(2, st, time.Second, 1500*time.Millisecond)
	if s.bdp != 80000 || s.capacity != 80000 {
		t.Fatalf("step 2: bdp %v capacity %g, want 80000 and 80000", s.bdp, s.capacity)
	}
	check(2, [CompactFeatures]float64{1, math.Log2(2.5), math.Log2(1.5), 0.25, math.Log2(0.8), math.Log2(0.675), 0.01, 0.584})
	// Step 3: nothing new delivered, a 0.5 s sample: the rate over three
	// steps is 53.3 KB/s against the 80 KB/s maximum; the minimum RTT and
	// so the BDP estimate halve.
	st.LatestRTT = 500 * time.Millisecond
	s = step(3, st, 500*time.Millisecond)
	if s.bdp != 40000 {
		t.Fatalf("step 3: bdp %v, want 40000", s.bdp)
	}
	check(3, [CompactFeatures]float64{(16000 / 0.3) / 80000, math.Log2(2.5), 0, 0, math.Log2(1.6), math.Log2(54000.0 / 40000), 0.015, 0.584})
	// Nothing more is delivered. The 80 KB/s rate (step 2) leaves the 2-s
	// capacity window at step 22, leaving step 3's 53.3 KB/s; step 4's
	// 40 KB/s is the maximum at step 23.
	for k := 4; k <= 23; k++ {
		s = step(k, st)
		want := 80000.0
		switch {
		case k == 22:
			want = 16000 / 0.3
		case k == 23:
			want = 40000
		}
		if math.Abs(s.capacity-want) > 1e-6 {
			t.Fatalf("step %d: capacity %g, want %g", k, s.capacity, want)
		}
	}
	// The 0.5 s minimum (step 3) leaves the 5-s RTT window at step 53;
	// with no sample since, the handshake's MinRTT stands in again.
	for k := 24; k <= 53; k++ {
		s = step(k, st)
		want := 500 * time.Millisecond
		if k == 53 {
			want = time.Second
		}
		if s.minRTT != want {
			t.Fatalf("step %d: min RTT %v, want %v", k, s.minRTT, want)
		}
	}
}

// TestBDPWindow checks the compact action's mapping, with the default
// span (0 and 2 alike) and others.
func TestBDPWindow(t *testing.T) {
	const mss = 1448
	for _, c := range []struct {
		a    float32
		span float64
		bdp  units.Bytes
		want units.Bytes
	}{
		{0, 0, 20000, 20000},
		{1, 0, 20000, 80000},
		{-1, 0, 20000, 5000},
		{0.5, 0, 20000, 40000},
		{1, 0, 100000, WindowCap},
		{-1, 0, 2000, mss},
		{float32(math.NaN()), 0, 20000, 20000},
		{7, 0, 20000, 80000},
		{1, 2, 20000, 80000},
		{-1, 4, 80000, 5000},
		{1, 4, 8000, 128000},
		{0.5, 4, 20000, 80000},
		{-1, 1, 20000, 10000},
		{-7, 3, 80000, 10000},
		{0, 8, 20000, 20000},
	} {
		if got := BDPWindow(c.a, c.span, c.bdp, mss); got != c.want {
			t.Errorf("BDPWindow(%g, span %g, %v) = %v, want %v", c.a, c.span, c.bdp, got, c.want)
		}
	}
}

// TestCompactEnv checks the compact environment's shape, that its
// episodes end when the transfer completes, that the reward's time and
// delivery terms add up over an episode, and that a seed reproduces it.
func TestCompactEnv(t *testing.T) {
	if _, err := NewEnv(EnvConfig{Base: base(t), Loss: 0.03, Action: ActionBDP}); err == nil {
		t.Error("the bdp action accepted without the compact variant")
	}
	if _, err := NewEnv(EnvConfig{Base: base(t), Loss: 0.03, Variant: "tiny"}); err == nil {
		t.Error("variant \"tiny\" accepted")
	}
	run := func() ([]float32, float64, int) {
		e, err := NewTrainingEnv(EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 300_000, Variant: VariantCompact, Action: ActionBDP})
		if err != nil {
			t.Fatal(err)
		}
		if d := e.ObservationSpace().Dim(); d != CompactObservationSize {
			t.Fatalf("observation of %d values, want %d", d, CompactObservationSize)
		}
		e.Reset(7)
		var all []float32
		ret, steps := 0.0, 0
		for {
			obs, r, term, trunc, _ := e.Step([]float32{1})
			all = append(all, obs...)
			ret += r
			steps++
			if term || trunc {
				break
			}
		}
		return all, ret, steps
	}
	a, ret, steps := run()
	b, ret2, _ := run()
	if ret != ret2 || !bytesEqual(a, b) {
		t.Error("same seed, different compact episodes")
	}
	if steps >= EpisodeSteps {
		t.Fatalf("a 300 KB transfer at four BDPs did not finish in %d steps", steps)
	}
	// Return = B/RefRate - T - priced retransmissions and queueing, so it
	// is at most B/RefRate - T.
	T := float64(steps) * StepInterval.Seconds()
	if ub := 300_000/RefRate - T + 1e-9; ret > ub || ret < ub-20 {
		t.Errorf("return %g over %d steps, want a little below %g", ret, steps, ub)
	}
}

// bytesEqual compares bit for bit (NaNs included, -0 apart from 0).
func bytesEqual(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestCompactTrainingDeterministic trains the compact variant twice at a
// tiny size with one seed and once with another: the same seed must give
// the same policy bit for bit, another seed a different one, and the
// policy must record its variant and fit its spaces.
func TestCompactTrainingDeterministic(t *testing.T) {
	train := func(seed uint64) []byte {
		res, err := Train(context.Background(), TrainConfig{
			Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: seed, Randomize: true,
			Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		if PolicyVariant(res.Policy) != VariantCompact || PolicyAction(res.Policy) != ActionBDP {
			t.Fatalf("policy records variant %q action %q", PolicyVariant(res.Policy), PolicyAction(res.Policy))
		}
		if err := CheckPolicy(res.Policy); err != nil {
			t.Fatal(err)
		}
		return policyBytes(t, res)
	}
	a, b, c := train(3), train(3), train(4)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different policies")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 3 and 4 gave the same policy")
	}
}

// TestShippedCompactPolicy checks the built-in compact policy: it records
// its variant and training command, fits the compact spaces and no other,
// and on the same three transfers at 3% loss it finishes every one and is
// faster than CUBIC, as docs/marlin.md reports over 100.
func TestShippedCompactPolicy(t *testing.T) {
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPolicy(p); err != nil {
		t.Fatal(err)
	}
	if PolicyVariant(p) != VariantCompact || !strings.Contains(p.Meta.Command, "--variant compact") || p.Meta.TrainingWallS <= 0 {
		t.Fatalf("built-in compact policy: variant %q, meta %+v", PolicyVariant(p), p.Meta)
	}
	if err := p.Check(PolicySpaces()); err == nil {
		t.Error("the compact policy fits the paper's 980-value observation")
	}
	q := p.Clone()
	q.Meta.Extra = maps.Clone(p.Meta.Extra)
	q.Meta.Extra["variant"] = VariantPaper
	if err := CheckPolicy(q); err == nil {
		t.Error("a compact network labelled as the paper's variant was accepted")
	}
	rows, out, err := Evaluate(context.Background(), EvalConfig{
		Base: base(t), Runs: 3, Losses: []float64{0.03}, Schemes: []Scheme{Marlin, CUBIC}, Policy: p,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if !o.Finished {
			t.Errorf("%s seed %d did not finish", o.Scheme, o.Seed)
		}
	}
	if rows[0].Scheme != Marlin || rows[1].Scheme != CUBIC || rows[0].TransferTime >= rows[1].TransferTime {
		t.Errorf("compact %.2f s against CUBIC %.2f s on the same transfers: want faster", rows[0].TransferTime, rows[1].TransferTime)
	}
}

// TestCompactFilterWindows: the capacity and minimum-RTT windows set how
// long a maximum and a minimum survive. After a rate of 80 KB/s and a
// 0.5 s sample, nothing more arrives: with a 1-s capacity window the
// estimate starts falling at step 12 (it would hold to step 21 with the
// default 2 s), and with a 2-s minimum-RTT window the minimum expires at
// step 22 (step 52 with the default 5 s).
func TestCompactFilterWindows(t *testing.T) {
	const floor = 14480
	var m compactMeter
	m.reset(0, 600_000, floor, 10, 20)
	out := make([]float32, CompactFeatures)
	step := func(k int, st tcp.FlowState, rtts ...time.Duration) compactStep {
		for _, r := range rtts {
			m.onRTT(r)
		}
		return m.measure(clock.Time(time.Duration(k)*StepInterval), st, out)
	}
	st := tcp.FlowState{Cwnd: floor, SndNxt: floor, MinRTT: time.Second, LatestRTT: time.Second}
	step(1, st)
	st = tcp.FlowState{Cwnd: 64000, SndUna: 16000, SndNxt: 70000, Delivered: 16000, MinRTT: time.Second, LatestRTT: 500 * time.Millisecond}
	step(2, st, 500*time.Millisecond)
	for k := 3; k <= 22; k++ {
		s := step(k, st)
		wantCap := 80000.0
		if j := k - 9; j >= 3 {
			// The oldest rate left in the window, step j's, is the
			// largest: 16 KB over the j steps so far (at most the 5 of the
			// rate window), then nothing once step 2 leaves that window.
			wantCap = 0
			if j <= 6 {
				wantCap = 16000 / (float64(min(j, 5)) * StepInterval.Seconds())
			}
		}
		if math.Abs(s.capacity-wantCap) > 1e-6 {
			t.Fatalf("step %d: capacity %g, want %g", k, s.capacity, wantCap)
		}
		wantRTT := 500 * time.Millisecond
		if k == 22 {
			wantRTT = time.Second // the handshake's, as no sample is left
		}
		if s.minRTT != wantRTT {
			t.Fatalf("step %d: min RTT %v, want %v", k, s.minRTT, wantRTT)
		}
	}
}

// TestBDPSpanOption: the span is refused outside [1, MaxBDPSpan] and
// without the BDP action; a trained policy records it, CheckPolicy reads
// it back and refuses bad ones, the evaluation runs the policy with it,
// and the demonstrator's action maps the same window whatever the span.
func TestBDPSpanOption(t *testing.T) {
	for _, c := range []EnvConfig{
		{Variant: VariantCompact, Action: ActionBDP, BDPSpan: 0.5},
		{Variant: VariantCompact, Action: ActionBDP, BDPSpan: MaxBDPSpan + 1},
		{Variant: VariantCompact, Action: ActionBDP, BDPSpan: math.NaN()},
		{Variant: VariantCompact, Action: ActionLog2, BDPSpan: 4},
		{Variant: VariantPaper, BDPSpan: 4},
	} {
		c.Base = base(t)
		if _, err := NewEnv(c); err == nil {
			t.Errorf("NewEnv accepted span %g with variant %q, action %q", c.BDPSpan, c.Variant, c.Action)
		}
	}
	if _, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 1, BDPSpan: 4}); err == nil {
		t.Error("Train accepted a BDP span for the paper's variant")
	}

	// The demonstrator's action reaches the same window under any span
	// (within the span's reach: 4 nominal BDPs on SATCOM are above four
	// estimates at the start, so the spans' windows differ there).
	for _, span := range []float64{0, 3, 4} {
		e, err := NewEnv(EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP, BDPSpan: span, DemoScale: 1})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(1)
		act := []float32{0}
		for k := range 150 { // past the switch at 10 s
			act[0] = float32(e.DemoAction())
			want, est := e.demoWindow(), e.compact.bdp
			if math.Abs(float64(act[0])) >= 1 {
				want = BDPWindow(act[0], span, est, e.mss) // clipped: what the span reaches
			}
			if got := BDPWindow(act[0], span, est, e.mss); math.Abs(float64(got-want)) > 1+float64(want)*1e-6 {
				t.Fatalf("span %g, step %d: the demonstrated action gives %v, want %v", span, k, got, want)
			}
			e.Step(act)
		}
	}

	p := tinyCompactPolicy(t, 1, func(c *TrainConfig) { c.BDPSpan = 4 })
	if span, err := PolicyBDPSpan(p); err != nil || span != 4 {
		t.Fatalf("policy span %g (%v), want 4", span, err)
	}
	e, err := NewPolicyEvalEnv(base(t), 0.03, 600_000, 120*time.Second, p)
	if err != nil {
		t.Fatal(err)
	}
	if span := e.core.cfg.BDPSpan; span != 4 {
		t.Errorf("evaluation environment span %g, want 4", span)
	}
	checkRefusedMeta(t, p, []metaCase{
		{"bdp_span", "wide", "bdp_span"},
		{"bdp_span", "0.5", "from 1 to 8"},
		{"bdp_span", "9", "from 1 to 8"},
		{"bdp_span", "NaN", "from 1 to 8"},
		{"action", ActionLog2, "bdp_span needs"},
	})
}

// metaCase is one bad policy option: the key, its value and what the
// error must name.
type metaCase struct{ key, v, want string }

// checkRefusedMeta checks that p with each case's option is refused by
// CheckPolicy, with an error naming what the case wants, and by Evaluate.
func checkRefusedMeta(t *testing.T, p *policy.Policy, cases []metaCase) {
	t.Helper()
	for _, bad := range cases {
		q := p.Clone()
		q.Meta.Extra = maps.Clone(p.Meta.Extra)
		q.Meta.Extra[bad.key] = bad.v
		if err := CheckPolicy(q); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%q: CheckPolicy said %v, want an error naming %q", bad.key, bad.v, err, bad.want)
		}
		if _, _, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: 1, Losses: []float64{0.03}, Schemes: []Scheme{Marlin}, Policy: q}); err == nil {
			t.Errorf("%s=%q: Evaluate ran the policy", bad.key, bad.v)
		}
	}
}

// TestFilterWindowOptions: the windows are refused outside whole steps up
// to MaxFilterWindow and outside the compact variant; a trained policy
// records them, CheckPolicy reads them back and refuses bad ones, and the
// evaluation runs the policy with them.
func TestFilterWindowOptions(t *testing.T) {
	for _, c := range []EnvConfig{
		{Variant: VariantCompact, Action: ActionBDP, CapacityWindow: 150 * time.Millisecond},
		{Variant: VariantCompact, Action: ActionBDP, MinRTTWindow: MaxFilterWindow + StepInterval},
		{Variant: VariantCompact, Action: ActionBDP, CapacityWindow: -time.Second},
		{Variant: VariantPaper, CapacityWindow: time.Second},
	} {
		c.Base = base(t)
		if _, err := NewEnv(c); err == nil {
			t.Errorf("NewEnv accepted capacity window %v, minimum-RTT window %v, variant %q", c.CapacityWindow, c.MinRTTWindow, c.Variant)
		}
	}
	if _, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 1, CapacityWindow: time.Second}); err == nil {
		t.Error("Train accepted a capacity window for the paper's variant")
	}
	p := tinyCompactPolicy(t, 1, func(c *TrainConfig) { c.CapacityWindow, c.MinRTTWindow = time.Second, 3*time.Second })
	cw, rw, err := PolicyFilterWindows(p)
	if err != nil || cw != time.Second || rw != 3*time.Second {
		t.Fatalf("policy windows %v, %v (%v); want 1s, 3s", cw, rw, err)
	}
	e, err := NewPolicyEvalEnv(base(t), 0.03, 600_000, 120*time.Second, p)
	if err != nil {
		t.Fatal(err)
	}
	if bw, rtt := e.core.cfg.filterSteps(); bw != 10 || rtt != 30 {
		t.Errorf("evaluation environment filters of %d and %d steps, want 10 and 30", bw, rtt)
	}
	checkRefusedMeta(t, p, []metaCase{
		{"capacity_window", "soon", "capacity_window"},
		{"capacity_window", "0s", "multiple"},
		{"min_rtt_window", "250ms", "multiple"},
		{"min_rtt_window", "20s", "10s"},
	})
	q := p.Clone()
	q.Meta.Extra = maps.Clone(p.Meta.Extra)
	q.Meta.Extra["variant"] = VariantPaper
	if err := CheckPolicy(q); err == nil {
		t.Error("CheckPolicy accepted filter windows on a paper-variant policy")
	}
}

// TestRTTFeatureOption: the minimum-RTT feature is refused outside the
// compact variant; with it each step has CFMinRTT appended, equal to
// log2 of the BDP estimate's minimum RTT over 250 ms, while the other
// features and the rewards are those of the same episode without it; a
// trained policy records it and has 9 x 4 inputs, CheckPolicy reads it
// back and refuses bad values, and the evaluation runs the policy with it.
func TestRTTFeatureOption(t *testing.T) {
	if _, err := NewEnv(EnvConfig{Base: base(t), RTTFeature: true}); err == nil || !strings.Contains(err.Error(), "minimum-RTT feature") {
		t.Errorf("NewEnv accepted the RTT feature for the paper's variant: %v", err)
	}
	if _, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 1, RTTFeature: true}); err == nil {
		t.Error("Train accepted the RTT feature for the paper's variant")
	}

	// The same episode, with and without the feature.
	cfg := EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP}
	plain, err := NewEnv(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RTTFeature = true
	with, err := NewEnv(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d := with.ObservationSpace().Dim(); d != CompactFeaturesRTT {
		t.Fatalf("observation of %d values with the feature, want %d", d, CompactFeaturesRTT)
	}
	plain.Reset(3)
	with.Reset(3)
	var onSATCOM, onUHF int
	for k := range 200 { // past the switch at 10 s
		a := []float32{float32(math.Sin(float64(k) / 7))}
		o1, r1, term1, _, _ := plain.Step(a)
		o2, r2, term2, _, _ := with.Step(a)
		if r1 != r2 || term1 != term2 || !bytesEqual(o1, o2[:CompactFeatures]) {
			t.Fatalf("step %d: the feature changed the episode: reward %g against %g, features %v against %v", k, r2, r1, o2[:CompactFeatures], o1)
		}
		// The BDP estimate over the capacity estimate is the minimum RTT
		// the feature reports (the estimate is floored at the initial
		// window, so compare only above the floor).
		if with.compact.bdp > with.compact.floor && o2[CFCapacity] > -4 && o2[CFCapacity] < 4 {
			capacity := math.Exp2(float64(o2[CFCapacity])) * capacityUnit
			minRTT := float64(with.compact.bdp) / capacity
			want := math.Min(math.Max(math.Log2(minRTT/rttUnit.Seconds()), -4), 4)
			if math.Abs(float64(o2[CFMinRTT])-want) > 0.01 {
				t.Fatalf("step %d: %s = %g, want %g (BDP estimate %v over capacity %g B/s)", k, MinRTTFeatureName, o2[CFMinRTT], want, with.compact.bdp, capacity)
			}
		}
		switch {
		case k >= 15 && k < 95 && o2[CFMinRTT] >= 2: // SATCOM, after the handshake: 1 s round trip, at least
			onSATCOM++
		case k >= 150 && o2[CFMinRTT] >= 0 && o2[CFMinRTT] < 2: // UHF: 250 ms, at least
			onUHF++
		}
		if term1 {
			break
		}
	}
	if onSATCOM < 80 || onUHF == 0 {
		t.Errorf("%s at or above 2 on SATCOM in %d of 80 steps, in [0, 2) on UHF in %d: want all and some", MinRTTFeatureName, onSATCOM, onUHF)
	}

	p := tinyCompactPolicy(t, 1, func(c *TrainConfig) { c.RTTFeature = true })
	if rf, err := PolicyRTTFeature(p); err != nil || !rf {
		t.Fatalf("policy rtt_feature %t (%v), want true", rf, err)
	}
	if d := p.Obs.Dim(); d != CompactHistory*CompactFeaturesRTT {
		t.Fatalf("policy of %d inputs, want %d", d, CompactHistory*CompactFeaturesRTT)
	}
	e, err := NewPolicyEvalEnv(base(t), 0.03, 600_000, 120*time.Second, p)
	if err != nil {
		t.Fatal(err)
	}
	if !e.core.cfg.RTTFeature || len(e.core.obs) != CompactFeaturesRTT {
		t.Errorf("evaluation environment: feature %t, %d values per step; want it and %d", e.core.cfg.RTTFeature, len(e.core.obs), CompactFeaturesRTT)
	}
	if _, _, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: 1, Losses: []float64{0.03}, Schemes: []Scheme{Marlin}, Policy: p}); err != nil {
		t.Fatal(err)
	}
	checkRefusedMeta(t, p, []metaCase{
		{"rtt_feature", "yes please", "rtt_feature"},
		{"rtt_feature", "false", "dim 36"}, // 36 inputs where 32 are wanted
	})
	q := p.Clone()
	q.Meta.Extra = maps.Clone(p.Meta.Extra)
	q.Meta.Extra["variant"], q.Meta.Extra["action"] = VariantPaper, ActionLinear
	if err := CheckPolicy(q); err == nil || !strings.Contains(err.Error(), "rtt_feature needs") {
		t.Errorf("a paper-variant policy with the RTT feature: CheckPolicy said %v", err)
	}
}

// TestWindowCapOption: a window cap other than the paper's is refused
// outside the compact variant and outside [MinWindowCap, MaxWindowCap];
// with a 200 KB cap the window the agent sets at a = 1 on SATCOM passes
// the paper's 150 KB and never exceeds 200 KB, and the demonstrator aims
// within it; a trained policy records it, CheckPolicy reads it back and
// refuses bad values, policy files recording the paper's cap (all of
// them before the option) read as the default, and the evaluation runs
// the policy with it.
func TestWindowCapOption(t *testing.T) {
	for _, c := range []EnvConfig{
		{Variant: VariantPaper, WindowCap: 200_000},
		{Variant: VariantCompact, Action: ActionBDP, WindowCap: MinWindowCap - 1},
		{Variant: VariantCompact, Action: ActionBDP, WindowCap: MaxWindowCap + 1},
	} {
		c.Base = base(t)
		if _, err := NewEnv(c); err == nil || !strings.Contains(err.Error(), "window cap") {
			t.Errorf("NewEnv accepted window cap %v with variant %q: %v", c.WindowCap, c.Variant, err)
		}
	}

	e, err := NewEnv(EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP,
		BDPSpan: 4, WindowCap: 200_000, DemoScale: 4})
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(1)
	var most units.Bytes
	for range 80 { // SATCOM, before the switch at 10 s
		if w := e.demoWindow(); w > 200_000 {
			t.Fatalf("the demonstrator aims at %v, above the cap", w)
		}
		e.Step([]float32{1})
		most = max(most, e.flow.Sender.CC().CongestionWindow())
	}
	if most <= WindowCap || most > 200_000 {
		t.Errorf("largest window at a = 1 with a 200 KB cap: %v, want above %v and at most 200KB", most, WindowCap)
	}

	p := tinyCompactPolicy(t, 1, func(c *TrainConfig) { c.WindowCap = 200_000 })
	if wc, err := PolicyWindowCap(p); err != nil || wc != 200_000 {
		t.Fatalf("policy window cap %v (%v), want 200KB", wc, err)
	}
	ev, err := NewPolicyEvalEnv(base(t), 0.03, 600_000, 120*time.Second, p)
	if err != nil {
		t.Fatal(err)
	}
	if wc := ev.core.cfg.WindowCap; wc != 200_000 {
		t.Errorf("evaluation environment window cap %v, want 200KB", wc)
	}
	shipped, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if wc, err := PolicyWindowCap(shipped); err != nil || wc != 0 || shipped.Meta.Extra["window_cap"] != WindowCap.String() {
		t.Errorf("the built-in compact policy (window_cap %q) reads as %v (%v), want the default", shipped.Meta.Extra["window_cap"], wc, err)
	}
	checkRefusedMeta(t, p, []metaCase{
		{"window_cap", "wide", "window_cap"},
		{"window_cap", "1KB", "from 15KB"},
		{"window_cap", "20MB", "from 15KB"},
	})
	q := p.Clone()
	q.Meta.Extra = maps.Clone(p.Meta.Extra)
	q.Meta.Extra["variant"], q.Meta.Extra["action"] = VariantPaper, ActionLinear
	if err := CheckPolicy(q); err == nil || !strings.Contains(err.Error(), "window_cap 200KB needs") {
		t.Errorf("a paper-variant policy with a 200 KB cap: CheckPolicy said %v", err)
	}
}

// tinyCompactPolicy trains a compact policy for a few steps with edit's
// options (the tests of an option's round trip through a policy file),
// checking that CheckPolicy accepts it.
func tinyCompactPolicy(t *testing.T, seed uint64, edit func(c *TrainConfig)) *policy.Policy {
	t.Helper()
	cfg := TrainConfig{Base: base(t), Steps: 64, Envs: 2, Workers: 2, Seed: seed, Randomize: true,
		Variant: VariantCompact, Hidden: []int{8}, BatchSize: 16, Buffer: 200}
	edit(&cfg)
	res, err := Train(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPolicy(res.Policy); err != nil {
		t.Fatal(err)
	}
	return res.Policy
}
