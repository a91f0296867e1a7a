package marlin

import (
	"bytes"
	"math"
	"slices"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/scenarios"
)

func TestStatsHandComputed(t *testing.T) {
	var s stats
	for _, x := range []float64{2, 4, 9} {
		s.add(x)
	}
	got := make([]float32, NumStats)
	s.write(got)
	want := []float64{9, 5, math.Sqrt(13), 2, 9, (2*7.0/8+4.0/8)*7/8 + 9.0/8, 5}
	for i, w := range want {
		if math.Abs(float64(got[i])-w) > 1e-5 {
			t.Errorf("%s = %g, want %g", StatNames[i], got[i], w)
		}
	}
	var one stats
	one.add(3)
	one.write(got)
	if got[StatStd] != 0 || got[StatDiff] != 3 || got[StatEMA] != 3 {
		t.Errorf("after one value: std %g diff %g ema %g, want 0, 3, 3", got[StatStd], got[StatDiff], got[StatEMA])
	}
}

func TestRewardHandComputed(t *testing.T) {
	tests := []struct {
		target, acked float64
		retx          int
		loss, want    float64
	}{
		{100, 100, 0, 0.03, -0.5},
		{100, 100, 2, 0.03, -100 * (1 + 2*0.97) / 200},
		{100, 0, 0, 0, -1},
		{100, 300, 1, 0, -100 * 2.0 / 400},
		{0, 0, 3, 0.03, 0},
		{50, 50, 4, 1, -0.5}, // all loss is random: retransmissions are forgiven
	}
	for _, tt := range tests {
		if got := Reward(tt.target, tt.acked, tt.retx, tt.loss); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Reward(%g, %g, %d, %g) = %g, want %g", tt.target, tt.acked, tt.retx, tt.loss, got, tt.want)
		}
	}
}

func base(t testing.TB) *scenario.Scenario {
	t.Helper()
	s, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestObservationShape(t *testing.T) {
	e, err := NewTrainingEnv(EnvConfig{Base: base(t), Loss: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.ObservationSpace().Dim(), 14*7*10; got != want || ObservationSize != want {
		t.Fatalf("observation has %d values, want %d", got, want)
	}
	obs, _ := e.Reset(1)
	if len(obs) != 980 {
		t.Fatalf("Reset returned %d values, want 980", len(obs))
	}
	steps, truncated := 0, false
	for !truncated {
		var term bool
		obs, _, term, truncated, _ = e.Step([]float32{0.1})
		steps++
		if term {
			t.Fatalf("a bulk training episode terminated at step %d", steps)
		}
		if len(obs) != 980 {
			t.Fatalf("Step returned %d values", len(obs))
		}
	}
	if steps != EpisodeSteps {
		t.Errorf("episode truncated after %d steps, want %d", steps, EpisodeSteps)
	}
}

// TestFeaturesConsistent checks the features against the transport's own
// counters on a clean link with a constant window.
func TestFeaturesConsistent(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name: clean
duration: 60s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 1000}}
flows: [{name: agent, cc: newreno}]
`), "clean.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEnv(EnvConfig{Base: s, Loss: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.Reset(3)
	var ackedSum, sentSum float64
	for range 30 {
		obs, r, _, _, _ := e.Step([]float32{0})
		f := func(i int) float64 { return float64(obs[i*NumStats+StatLast]) }
		if got := f(FeatCwnd); math.Abs(got-14.48) > 1e-3 {
			t.Fatalf("cwnd %g KB with a zero action, want 14.48", got)
		}
		if math.Abs(f(FeatSent)-1.448*f(FeatPackets)) > 1e-3 || math.Abs(f(FeatThroughput)-f(FeatSent)/0.1) > 1e-3 || math.Abs(f(FeatGoodput)-f(FeatAcked)/0.1) > 1e-3 {
			t.Fatalf("inconsistent step: %v", obs[:NumFeatures*NumStats])
		}
		if f(FeatRetransmissions) != 0 || f(FeatSent) != f(FeatSentGood) {
			t.Fatalf("retransmissions on a clean link")
		}
		if r >= 0 || r < -1 {
			t.Fatalf("reward %g outside [-1, 0)", r)
		}
		ackedSum += f(FeatAcked)
		sentSum += f(FeatSent)
	}
	st := e.Flow().Sender.State()
	if math.Abs(ackedSum-float64(st.Stats.BytesAcked)/1000) > 1e-3 || math.Abs(sentSum-float64(st.Stats.BytesSent)/1000) > 1e-3 {
		t.Errorf("feature sums %g/%g KB, counters %d/%d bytes", ackedSum, sentSum, st.Stats.BytesAcked, st.Stats.BytesSent)
	}
	// A 14.48 KB window on a 21.2 ms path whose receiver acknowledges every
	// 20 ms: the window turns over once per RTT plus up to one SACK timer.
	if g := float64(st.Stats.BytesAcked) / 3; g < 0.9*14480/0.0412 || g > 14480/0.0212 {
		t.Errorf("goodput %g B/s, want between %g and %g", g, 0.9*14480/0.0412, 14480/0.0212)
	}
}

func TestDeterministicEpisodes(t *testing.T) {
	run := func() []float32 {
		e, err := NewTrainingEnv(EnvConfig{Base: base(t), Loss: 0.03, Timeline: Timeline{SwitchRange: [2]time.Duration{5 * time.Second, 15 * time.Second}}})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(42)
		var all []float32
		for k := range 120 {
			obs, r, _, _, _ := e.Step([]float32{float32(math.Sin(float64(k)))})
			all = append(all, obs...)
			all = append(all, float32(r))
		}
		return all
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Errorf("same seed, different episodes")
	}
}

// TestMocketsBaselineNeverShrinks runs the Mockets baseline through the
// switch to UHF at 3% loss and checks, every 10 ms, that its window is the
// bandwidth-delay product of the current link whatever the losses.
func TestMocketsBaselineNeverShrinks(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	s, err := BaselineScenario(WithLoss(base, 0.03), Mockets, 1_500_000, 3, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w0, ws := bdpWindows(s)
	switchAt := s.Bottleneck.Schedule[0].At.V
	n, err := network.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	f := n.Flows[0]
	for now := 10 * time.Millisecond; !f.Done() && now < 120*time.Second; now += 10 * time.Millisecond {
		n.Sched.RunUntil(clock.Time(now))
		want := w0
		if now >= switchAt {
			want = ws[0]
		}
		if got := f.Sender.CC().CongestionWindow(); got != want {
			t.Fatalf("at %v the window is %v, want %v", now, got, want)
		}
	}
	st := f.Sender.Stats()
	if !f.Done() || n.Now() < clock.Time(switchAt)+clock.Time(5*time.Second) || st.Retransmissions < 10 {
		t.Errorf("done %v at %v after %d retransmissions: want a transfer that finished well after the switch and saw losses", f.Done(), n.Now(), st.Retransmissions)
	}
}

// TestShippedPolicy checks the built-in policy fits the environment and
// that a policy of another shape, or a damaged copy, is refused.
func TestShippedPolicy(t *testing.T) {
	p, err := ShippedPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(PolicySpaces()); err != nil {
		t.Fatalf("built-in policy: %v", err)
	}
	if p.Meta.Command == "" || p.Meta.TrainingWallS <= 0 {
		t.Errorf("built-in policy lacks its training command or wall time: %+v", p.Meta)
	}
	obs, act := PolicySpaces()
	if err := p.Check(space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), NumFeatures*NumStats), act); err == nil {
		t.Errorf("a policy for 980 stacked values accepted for 98 unstacked ones")
	}
	if err := p.Check(obs, space.Uniform(-1, 1, 2)); err == nil {
		t.Errorf("a one-action policy accepted for two actions")
	}
	if _, err := policy.Read(bytes.NewReader(shipped[:len(shipped)/2])); err == nil {
		t.Errorf("a truncated copy of the built-in policy was accepted")
	}
}

// TestActionParametrisations checks both action mappings on the window:
// the paper's w (1 + a) and the log-space w 2^a agree at a = 0 and 1
// (unchanged, doubled); at a = -1 the paper's drops to the one-segment
// floor while the log-space one halves, and a = -0.5 then 0.5 returns the
// log-space window to where it was (symmetry), not the linear one.
func TestActionParametrisations(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name: clean
duration: 60s
bottleneck: {rate: 10Mbps, delay: 10ms, queue: {limit: 1000}}
flows: [{name: agent, cc: newreno}]
`), "clean.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewEnv(EnvConfig{Base: s, Loss: -1, Action: "exp"}); err == nil {
		t.Error("action \"exp\" accepted")
	}
	const w0 = 10 * 1448
	for _, c := range []struct {
		action  string
		actions []float32
		want    float64 // final window in segments
	}{
		{ActionLinear, []float32{0}, 10},
		{ActionLog2, []float32{0}, 10},
		{ActionLinear, []float32{1}, 20},
		{ActionLog2, []float32{1}, 20},
		{ActionLinear, []float32{-1}, 1},
		{ActionLog2, []float32{-1}, 5},
		{ActionLog2, []float32{-0.5, 0.5}, 10},
		{ActionLinear, []float32{-0.5, 0.5}, 7.5},
	} {
		e, err := NewEnv(EnvConfig{Base: s, Loss: -1, Action: c.action})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(1)
		for _, a := range c.actions {
			e.Step([]float32{a})
		}
		got := float64(e.Flow().Sender.CC().CongestionWindow()) / 1448
		if math.Abs(got-c.want) > 0.01 {
			t.Errorf("%s %v from %d segments: window %.3f segments, want %g", c.action, c.actions, w0/1448, got, c.want)
		}
	}
}

// policyBytes is a trained policy's file without its one
// non-deterministic field (training wall time), for comparing runs.
func policyBytes(t *testing.T, res *Trained) []byte {
	t.Helper()
	res.Policy.Meta.TrainingWallS = 0
	b, err := res.Policy.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
