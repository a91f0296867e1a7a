package datacenter

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
)

// testBase loads the datacenter scenario.
func testBase(t *testing.T) *scenario.Scenario {
	t.Helper()
	s, err := scenarios.Load("datacenter")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// shortConfig is a cheap episode (5 steps of 20 ms) with the training
// randomisation compressed so that events happen inside it.
func shortConfig(t *testing.T) Config {
	r := TrainingRandomization()
	r.EventGap = [2]time.Duration{15 * time.Millisecond, 40 * time.Millisecond}
	return Config{Base: testBase(t), Interval: 20 * time.Millisecond, Steps: 5, Random: r}
}

func TestSpacesAndObservation(t *testing.T) {
	for _, hist := range []int{1, 3} {
		cfg := shortConfig(t)
		cfg.History = hist
		e, err := NewEnv(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := e.ObservationSpace().Dim(), NumFeatures*hist; got != want {
			t.Fatalf("history %d: observation dim %d, want %d", hist, got, want)
		}
		if got, want := e.ActionSpace().N, len(GridMinRTT)*len(GridBwRounds); got != want {
			t.Fatalf("discrete actions %d, want %d", got, want)
		}
		obs, _ := e.Reset(7)
		if len(obs) != NumFeatures*hist {
			t.Fatalf("observation has %d values, want %d", len(obs), NumFeatures*hist)
		}
		for i, v := range obs {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("observation[%d] (%s) = %v", i, FeatureNames[i%NumFeatures], v)
			}
		}
		// After the warm-up every controlled flow has started and the
		// link carried traffic: activity and utilisation are positive,
		// and the stacked frames start equal.
		if obs[FeatActive] <= 0 || obs[FeatLinkGoodput] <= 0 || obs[FeatRTprop] <= 0 {
			t.Fatalf("warm-up observation lacks statistics: active %v, link goodput %v, rtprop %v", obs[FeatActive], obs[FeatLinkGoodput], obs[FeatRTprop])
		}
		for h := 1; h < hist; h++ {
			if !slices.Equal(obs[:NumFeatures], obs[h*NumFeatures:(h+1)*NumFeatures]) {
				t.Fatalf("frame %d differs from frame 0 right after Reset", h)
			}
		}
		if hist > 1 {
			first := slices.Clone(obs[:NumFeatures])
			o, _, _, _, _ := e.Step([]float32{0})
			if !slices.Equal(o[NumFeatures:2*NumFeatures], first) {
				t.Fatal("after one step, frame 1 should hold the previous frame 0")
			}
		}
	}
	cfg := shortConfig(t)
	cfg.Action = Continuous
	e, err := NewEnv(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sp := e.ActionSpace(); sp.Dim() != 2 || sp.Low[0] != -1 || sp.High[1] != 1 {
		t.Fatalf("continuous action space %v, want Box[-1,1]^2", sp)
	}
	for i, n := range FeatureNames {
		if n == "" {
			t.Fatalf("feature %d has no name", i)
		}
	}
}

// episode plays one episode with a fixed action sequence and returns the
// observations and rewards.
func episode(t *testing.T, e *Env, seed uint64, actions [][]float32) ([][]float32, []float64) {
	t.Helper()
	o, _ := e.Reset(seed)
	obs := [][]float32{slices.Clone(o)}
	var rew []float64
	for i := 0; ; i++ {
		o, r, term, trunc, _ := e.Step(actions[i%len(actions)])
		if term {
			t.Fatal("the data centre never terminates; episodes end by truncation")
		}
		obs = append(obs, slices.Clone(o))
		rew = append(rew, r)
		if trunc {
			return obs, rew
		}
	}
}

func TestEpisodesDeterministicPerSeed(t *testing.T) {
	cfg := shortConfig(t)
	acts := [][]float32{{0}, {3}, {11}, {5}}
	e1, err := NewEnv(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := NewEnv(cfg)
	o1, r1 := episode(t, e1, 42, acts)
	o2, r2 := episode(t, e2, 42, acts)
	if len(r1) != cfg.Steps {
		t.Fatalf("episode has %d steps, want %d", len(r1), cfg.Steps)
	}
	if !slices.Equal(r1, r2) {
		t.Fatalf("same seed, different rewards: %v vs %v", r1, r2)
	}
	for i := range o1 {
		if !slices.Equal(o1[i], o2[i]) {
			t.Fatalf("same seed, observation %d differs", i)
		}
	}
	// Reusing an environment gives the same episode again.
	o3, r3 := episode(t, e1, 42, acts)
	if !slices.Equal(r1, r3) || !slices.Equal(o1[len(o1)-1], o3[len(o3)-1]) {
		t.Fatal("replaying seed 42 on a used environment differs")
	}
	_, r4 := episode(t, e1, 43, acts)
	if slices.Equal(r1, r4) {
		t.Fatal("seeds 42 and 43 gave identical rewards")
	}
}

func TestEpisodeRandomisation(t *testing.T) {
	cfg := shortConfig(t)
	m, err := NewSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	events, churned := 0, 0
	for seed := uint64(1); seed <= 10; seed++ {
		s, ev, err := m.episode(seed)
		if err != nil {
			t.Fatal(err)
		}
		events += len(ev) + len(s.Bottleneck.Schedule)
		for _, c := range s.Bottleneck.Schedule {
			if r := c.Rate.V; r < 300*units.Mbps || r > units.Gbps {
				t.Fatalf("capacity event to %v outside [300Mbps, 1Gbps]", r)
			}
		}
		for _, e := range ev {
			if e.delay < 10*time.Microsecond || e.delay > time.Millisecond {
				t.Fatalf("path event to %v outside [10us, 1ms]", e.delay)
			}
		}
		if len(s.Flows) != m.NumFlows() {
			t.Fatalf("episode has %d flows, want %d", len(s.Flows), m.NumFlows())
		}
		for i, f := range s.Flows {
			anchor := i == 0 || i == 4
			if f.Start.V > 0 || f.Stop.IsSet() {
				if anchor {
					t.Fatalf("anchor flow %s joins or leaves", f.Name)
				}
				churned++
			}
		}
		b := s.Background[0]
		if b.Load < 0.1 || b.Load > 0.4 {
			t.Fatalf("background load %g outside [0.1, 0.4]", b.Load)
		}
	}
	if events == 0 || churned == 0 {
		t.Fatalf("10 episodes had %d events and %d joining/leaving flows; want some of each", events, churned)
	}
}

// TestActionsChangeBBR checks that actions reach BBR: every controlled
// flow is set to the action's windows, a short RTprop window makes BBR
// refresh its min RTT (the sample stays young) where BBR's default lets
// it age, and a long BtlBw window keeps larger bandwidth maxima.
func TestActionsChangeBBR(t *testing.T) {
	cfg := Config{Base: testBase(t), Interval: 50 * time.Millisecond, Steps: 16, Action: Continuous}
	run := func(p Params) (age, btlbw float64) {
		e, err := NewEnv(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(3)
		a := Continuous.Encode(p)
		for i := 0; i < cfg.Steps; i++ {
			o, _, _, _, _ := e.Step(a)
			for j := range e.Sim().NumFlows() {
				if _, _, got := e.Sim().Flow(j); got != p {
					t.Fatalf("flow %d has windows %v after action for %v", j, got, p)
				}
			}
			if i >= cfg.Steps/2 {
				age += float64(o[FeatRTpropAge]) / float64(cfg.Steps-cfg.Steps/2)
				btlbw += float64(o[FeatBtlBw]) / float64(cfg.Steps-cfg.Steps/2)
			}
		}
		return age, btlbw
	}
	ageShort, _ := run(Params{MinRTTWindow: 0.1, BwWindowRounds: 10})
	ageLong, _ := run(Params{MinRTTWindow: 10, BwWindowRounds: 10})
	// With a 0.1 s window the sample is at most 0.1 s plus PROBE_RTT's
	// 0.2 s old when refreshed; over the second half of an 0.8 s episode
	// the default's ages grow past that.
	if ageShort >= 0.35 || ageLong <= ageShort+0.1 {
		t.Fatalf("mean RTprop age with a 0.1 s window %.3f s, with 10 s %.3f s; want < 0.35 s and clearly older", ageShort, ageLong)
	}
	_, bw1 := run(Params{MinRTTWindow: 10, BwWindowRounds: 1})
	_, bw25 := run(Params{MinRTTWindow: 10, BwWindowRounds: 25})
	if bw25 <= bw1 {
		t.Fatalf("sum of BtlBw estimates / line rate: %.3f with a 25-round window, %.3f with 1 round; want the longer max filter higher", bw25, bw1)
	}
}

func TestActionEncoding(t *testing.T) {
	n := len(GridMinRTT) * len(GridBwRounds)
	for i := range n {
		p := GridParams(i)
		if GridIndex(p) != i {
			t.Fatalf("GridIndex(GridParams(%d)) = %d", i, GridIndex(p))
		}
		if got := Discrete.Decode(Discrete.Encode(p)); got != p {
			t.Fatalf("discrete round trip of %v gave %v", p, got)
		}
		if got := Continuous.Decode(Continuous.Encode(p)); math.Abs(got.MinRTTWindow-p.MinRTTWindow) > 1e-5*p.MinRTTWindow || got.BwWindowRounds != p.BwWindowRounds {
			t.Fatalf("continuous round trip of %v gave %v", p, got)
		}
	}
	if GridIndex(DefaultParams) < 0 {
		t.Fatalf("BBR's default %v is not on the grid", DefaultParams)
	}
	lo := Continuous.Decode([]float32{-5, -5})
	hi := Continuous.Decode([]float32{5, 5})
	if lo != (Params{MinRTTWindowLo, BwRoundsLo}) || hi != (Params{MinRTTWindowHi, BwRoundsHi}) {
		t.Fatalf("clamping: %v and %v, want the range ends", lo, hi)
	}
	mid := Continuous.Decode([]float32{float32(math.NaN()), 0})
	if math.Abs(mid.MinRTTWindow-1) > 1e-9 || mid.BwWindowRounds != 5 {
		t.Fatalf("NaN and 0 decode to %v, want the log-midpoints 1 s and 5 rounds", mid)
	}
	if p := Discrete.Decode([]float32{1e9}); p != GridParams(n-1) {
		t.Fatalf("out-of-range discrete action gave %v", p)
	}
}

func TestRewardHandComputed(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		est, rtt, tau time.Duration
		want          float64
	}{
		{ms, ms, ms, 1},
		{0, ms, ms, 2 / (1 + math.E)},
		{3 * ms, ms, ms, 2 / (1 + math.Exp(2))},
		{100 * time.Microsecond, 600 * time.Microsecond, 500 * time.Microsecond, 2 / (1 + math.E)},
	}
	for _, c := range cases {
		if got := DelayTerm(c.est, c.rtt, c.tau); math.Abs(got-c.want) > 1e-12 {
			t.Fatalf("DelayTerm(%v, %v, %v) = %v, want %v", c.est, c.rtt, c.tau, got, c.want)
		}
	}
	rc := RewardConfig{Alpha: 0.75, Tau: ms}
	if got := rc.Reward(0.8, 0.4); math.Abs(got-0.7) > 1e-12 {
		t.Fatalf("Reward(0.8, 0.4) with alpha 0.75 = %v, want 0.7", got)
	}
	var d RewardConfig
	d.defaults()
	if d.Alpha != 0.75 || d.Tau != ms {
		t.Fatalf("defaults %+v, want alpha 0.75, tau 1ms", d)
	}
}

// TestRewardMatchesMeasurement recomputes a step's rewards from the
// network with hooks of its own: utilisation from the bottleneck capacity
// and the receivers, each flow's delay term from its RTT samples in the
// interval and BBR's RTprop at its end.
func TestRewardMatchesMeasurement(t *testing.T) {
	cfg := shortConfig(t)
	cfg.Agents = 2
	m, err := NewSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Reset(11)
	m.Advance()
	n := m.Network()
	type acc struct {
		sum float64
		k   int
	}
	samples := make([]acc, m.NumFlows())
	for j := range m.NumFlows() {
		f, _, _ := m.Flow(j)
		prev := f.Sender.OnRTT
		f.Sender.OnRTT = func(now clock.Time, rtt time.Duration) {
			prev(now, rtt)
			samples[j].sum += float64(rtt)
			samples[j].k++
		}
	}
	now := n.Now()
	cap0 := n.Bottleneck.Capacity(now)
	var good0 units.Bytes
	for _, f := range n.Flows {
		good0 += f.Receiver.DeliveredBytes
	}
	m.Advance()
	now = n.Now()
	// Flows born during the interval (background arrivals) count from
	// zero.
	var good1 units.Bytes
	for _, f := range n.Flows {
		good1 += f.Receiver.DeliveredBytes
	}
	tc := n.Flows[0].Sender.Config()
	payload := float64(n.Bottleneck.Capacity(now)-cap0) * float64(tc.MSS) / float64(tc.MSS+tc.Header)
	u := math.Min(1, float64(good1-good0)/payload)
	if math.Abs(u-m.Utilization()) > 1e-9 {
		t.Fatalf("utilisation %v, recomputed %v", m.Utilization(), u)
	}
	var team float64
	for a := range 2 {
		lo, hi := m.AgentFlows(a)
		var s float64
		var k int
		for j := lo; j < hi; j++ {
			f, _, _ := m.Flow(j)
			rtprop := m.FlowBBR(j).Snapshot().MinRTT
			active := f.Start < now && f.Stop > now.Add(-cfg.Interval)
			if !active || samples[j].k == 0 || rtprop == 0 {
				continue
			}
			s += DelayTerm(rtprop, time.Duration(samples[j].sum/float64(samples[j].k)), m.Config().Reward.Tau)
			k++
		}
		if k == 0 {
			t.Fatalf("agent %d had no flow with RTT samples", a)
		}
		want := 0.75*u + 0.25*s/float64(k)
		if got := m.PartialReward(a); math.Abs(got-want) > 1e-9 {
			t.Fatalf("agent %d partial reward %v, recomputed %v", a, got, want)
		}
		team += want / 2
	}
	if math.Abs(m.TeamReward()-team) > 1e-9 {
		t.Fatalf("team reward %v, want the mean of the partial rewards %v", m.TeamReward(), team)
	}
}

func TestConfigErrors(t *testing.T) {
	base := testBase(t)
	bad := func(mut func(c *Config), want string) {
		t.Helper()
		c := Config{Base: base.Clone(), Random: TrainingRandomization()}
		mut(&c)
		_, err := NewSim(c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got error %v, want one containing %q", err, want)
		}
	}
	bad(func(c *Config) { c.Base = nil }, "no base scenario")
	bad(func(c *Config) { c.Base.Flows[0].CC = scenario.CC{Name: "cubic"} }, "must use bbr")
	bad(func(c *Config) { c.Base.Flows[1].Bytes = scenario.SizeOf(1000) }, "long-lived")
	bad(func(c *Config) { c.Agents = 9 }, "9 agents for 8 controlled flows")
	bad(func(c *Config) { c.Random.Load = [2]float64{0.5, 0.2} }, "load range")
	bad(func(c *Config) { c.Random.PathDelay = [2]time.Duration{0, time.Millisecond} }, "path delay range")
	bad(func(c *Config) { c.Random.Churn = 2 }, "churn")
	bad(func(c *Config) { c.Reward.Alpha = 1.5 }, "alpha")
	bad(func(c *Config) { c.History = 40 }, "history")
	bad(func(c *Config) { c.Random.Sizes = "/nonexistent/cdf" }, "flow sizes")
	if _, err := LookupConditions([]string{"train", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown condition: %v", err)
	}
}
