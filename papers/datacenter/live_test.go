package datacenter

import (
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

// oneFlow is a small topology a live host sees completely: one controlled
// BBR flow, no background, a constant-rate link.
const oneFlow = `
name: dc-one
seed: 1
duration: 3s
bottleneck: {rate: 200Mbps, delay: 50us, queue: {discipline: droptail, limit: 100}}
transport: {min_rto: 5ms}
flows:
  - name: f
    cc: {name: bbr, min_rtt_window: 10, bw_window_rounds: 10}
    extra_delay: 100us
`

// TestLiveObservationMatchesSim feeds the live observer the simulated
// flow's statistics (its sender, its BBR, its receiver's delivered bytes
// and RTT samples) while the simulator computes its own observation of
// the same flow, and checks that both observations and reward terms agree
// every interval, with the windows changing along the way.
func TestLiveObservationMatchesSim(t *testing.T) {
	s, err := scenario.Parse([]byte(oneFlow), "")
	if err != nil {
		t.Fatal(err)
	}
	const history = 2
	cfg := Config{Base: s, Interval: 20 * time.Millisecond, Steps: 40, History: history}
	sim, err := NewSim(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sim.Reset(3)
	f, _, p0 := sim.Flow(0)
	o, err := NewLiveObserver(history, sim.Config().Reward, s.Bottleneck.Rate.V, p0)
	if err != nil {
		t.Fatal(err)
	}
	o.delivered = func() units.Bytes { return f.Receiver.DeliveredBytes }
	o.Start(clock.Time(cfg.Interval), f.Sender, sim.FlowBBR(0))
	// The live flow starts where the simulator's warm-up left it.
	copy(o.obs, sim.Observation(0))
	o.first = false
	prev := f.Sender.OnRTT
	f.Sender.OnRTT = func(now clock.Time, rtt time.Duration) {
		prev(now, rtt)
		o.OnRTT(rtt)
	}
	changed := 0
	for step := 0; !sim.Done(); step++ {
		p := GridParams((step / 3) % (len(GridMinRTT) * len(GridBwRounds)))
		if p != o.Params() {
			changed++
		}
		if err := sim.Apply(0, p); err != nil {
			t.Fatal(err)
		}
		o.SetParams(p)
		sim.Advance()
		now := clock.Time(time.Duration(step+2) * cfg.Interval)
		got, m := o.Observe(now)
		want := sim.Observation(0)
		if len(got) != len(want) {
			t.Fatalf("step %d: live observation has %d values, simulator %d", step, len(got), len(want))
		}
		for i := range want {
			if !close32(got[i], want[i]) {
				t.Fatalf("step %d: feature %s (frame %d): live %v, simulator %v", step, FeatureNames[i%NumFeatures], i/NumFeatures, got[i], want[i])
			}
		}
		if math.Abs(m.Util-sim.Utilization()) > 1e-9 || math.Abs(m.Reward-sim.PartialReward(0)) > 1e-9 {
			t.Fatalf("step %d: live util %v reward %v, simulator %v %v", step, m.Util, m.Reward, sim.Utilization(), sim.PartialReward(0))
		}
		if step > 2 && (m.Util <= 0 || !m.HasRTT) {
			t.Fatalf("step %d: no traffic measured (util %v, RTT sample %v)", step, m.Util, m.HasRTT)
		}
	}
	if changed < 5 {
		t.Fatalf("the windows changed %d times; the test should exercise the parameter features", changed)
	}
}

// close32 compares float32 features: equal to 1e-6 absolute or relative
// (the simulator integrates its link's capacity in more increments than
// the live observer, so the last bits of a rate ratio may differ).
func close32(a, b float32) bool {
	d := math.Abs(float64(a) - float64(b))
	return d <= 1e-6 || d <= 1e-6*math.Abs(float64(b))
}

func TestLiveObserverRejectsBadSettings(t *testing.T) {
	for _, c := range []struct {
		hist int
		rate units.Bandwidth
		p    Params
	}{
		{0, units.Gbps, DefaultParams},
		{1, 0, DefaultParams},
		{1, units.Gbps, Params{MinRTTWindow: 0, BwWindowRounds: 10}},
		{1, units.Gbps, Params{MinRTTWindow: 1, BwWindowRounds: 1000}},
	} {
		if _, err := NewLiveObserver(c.hist, RewardConfig{}, c.rate, c.p); err == nil {
			t.Errorf("history %d rate %v params %v: accepted", c.hist, c.rate, c.p)
		}
	}
}

func TestShippedPolicyLiveSettings(t *testing.T) {
	p, err := LoadPolicy(ShippedPolicyPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LiveSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interval != DefaultInterval || cfg.History != 1 || cfg.Action != Discrete {
		t.Fatalf("shipped policy settings: interval %v history %d action %v", cfg.Interval, cfg.History, cfg.Action)
	}
	// A policy of another paper is refused.
	bad := p.Clone()
	bad.Meta.Extra = nil
	if _, err := LiveSettings(bad); err == nil {
		t.Fatal("a policy without data-centre settings was accepted")
	}
}
