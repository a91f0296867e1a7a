package marlin

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// bdpMultipleReturn is the mean undiscounted equation-1 return and the
// mean retransmissions per episode of a sender that holds its window at k
// times the current link's nominal bandwidth-delay product, over n
// training episodes (the training distribution: 300 KB-1 MB transfers,
// randomised switch and background, 200-step limit).
func bdpMultipleReturn(t *testing.T, k float64, n int) (ret, retx float64) {
	t.Helper()
	cfg := TrainConfig{Base: base(t), Randomize: true}
	cfg.defaults()
	e, core, err := newTrainingEnv(cfg.EnvConfigFor(), 1)
	if err != nil {
		t.Fatal(err)
	}
	act := []float32{0}
	for s := range n {
		e.Reset(uint64(7000 + s))
		for {
			// DemoAction is the linear action's ratio - 1 towards one BDP.
			act[0] = float32(math.Max(-1, math.Min(1, (core.DemoAction()+1)*k-1)))
			_, r, term, trunc, _ := e.Step(act)
			ret += r
			if term || trunc {
				break
			}
		}
		retx += core.retxEpisode
	}
	return ret / float64(n), retx / float64(n)
}

// TestEquationOneFavoursTheBDPWindow: on the training distribution,
// equation 1 ranks a window held at the bandwidth-delay product above
// the same sender at 0.6 and at 2 BDPs, and the larger window
// retransmits more. So a policy that finishes faster than the BDP
// window by overshooting it, with more retransmissions, is short of the
// reward's optimum rather than at a trade the reward prefers
// (docs/marlin.md, "What equation 1 prefers").
func TestEquationOneFavoursTheBDPWindow(t *testing.T) {
	const n = 40
	r06, x06 := bdpMultipleReturn(t, 0.6, n)
	r1, x1 := bdpMultipleReturn(t, 1, n)
	r2, x2 := bdpMultipleReturn(t, 2, n)
	t.Logf("return (retransmissions) per episode: 0.6 BDP %.2f (%.1f), 1 BDP %.2f (%.1f), 2 BDP %.2f (%.1f)", r06, x06, r1, x1, r2, x2)
	// Margins: the measured gaps are 9 and 6 (of about 80); 2 is well
	// above the seeds' effect on a 40-episode mean.
	if r1 < r06+2 || r1 < r2+2 {
		t.Errorf("equation 1 does not favour the BDP window: %.2f at 1 BDP, %.2f at 0.6, %.2f at 2", r1, r06, r2)
	}
	if !(x06 < x1 && x1 < x2) {
		t.Errorf("retransmissions should grow with the window: %.1f, %.1f, %.1f", x06, x1, x2)
	}
}

// demoMeanTime is the mean transfer time, as Evaluate measures it within
// its 120-s limit, of the demonstrator acting alone in the compact
// environment ec over n episodes from seed first.
func demoMeanTime(t *testing.T, ec EnvConfig, first uint64, n int) float64 {
	t.Helper()
	e, err := NewEnv(ec)
	if err != nil {
		t.Fatal(err)
	}
	act := []float32{0}
	var sum float64
	for s := range uint64(n) {
		e.Reset(first + s)
		for range 1200 { // 120 s of 100-ms steps
			act[0] = float32(e.DemoAction())
			if _, _, term, _, _ := e.Step(act); term {
				break
			}
		}
		var o Outcome
		fillFromResult(&o, experiment.Summarize(e.Network(), 0), 120*time.Second)
		sum += o.TransferTime
	}
	return sum / float64(n)
}

// TestCompactDemoScaleChosenOnTrainingEpisodes records how `--demo-scale
// 4` was chosen for the compact variant's behaviour cloning without the
// unseen evaluation conditions: among the scales 1, 2, 3, 4, 6 and 8, the
// demonstrator holding 4 nominal BDPs (within the 150 KB cap, so the cap
// on SATCOM and 32 KB on UHF) had the shortest mean transfer on 200
// episodes of the training distribution (seeds apart from the
// evaluation's); on Linux 6.18's recovery it is within 2% of the
// shortest (8 BDPs), and it beats one BDP, the paper-agent
// demonstrator's window, by more than a second.
func TestCompactDemoScaleChosenOnTrainingEpisodes(t *testing.T) {
	const n = 200
	cfg := TrainConfig{Base: base(t), Randomize: true, Variant: VariantCompact}
	cfg.defaults()
	meanTime := func(k float64) float64 {
		ec := cfg.EnvConfigFor()
		ec.DemoScale = k
		return demoMeanTime(t, ec, 5_000_001, n)
	}
	times := map[float64]float64{}
	best := 0.0
	for _, k := range []float64{1, 2, 3, 4, 6, 8} {
		times[k] = meanTime(k)
		if best == 0 || times[k] < times[best] {
			best = k
		}
	}
	t.Logf("mean transfer time by scale: %v", times)
	// Chosen at 4 against the transport before Linux 6.18's recovery was
	// modelled, where 4 was the fastest; now 8 is, by 0.16 s (1.3%).
	if times[4] > 1.02*times[best] {
		t.Errorf("scale 4 takes %.2f s, more than 2%% over the best, scale %g (%v)", times[4], best, times)
	}
	if times[1]-times[4] < 1 {
		t.Errorf("4 BDPs (%.2f s) gain less than a second over 1 (%.2f s)", times[4], times[1])
	}
}

// TestCompactSpanChosenOnTrainingEpisodes records how `--bdp-span 4` was
// chosen without the unseen evaluation conditions: on 200 episodes of the
// training distribution, the demonstrator at `--demo-scale 4` (the
// teacher of behaviour cloning) gets faster as the span widens, since a
// narrower span clips the windows it aims at, up to span 4, beyond which
// nothing changes (no window it aims at is clipped any more).
func TestCompactSpanChosenOnTrainingEpisodes(t *testing.T) {
	const n = 200
	cfg := TrainConfig{Base: base(t), Randomize: true, Variant: VariantCompact}
	cfg.defaults()
	times := map[float64]float64{}
	for _, span := range []float64{2, 3, 4, 5, 6} {
		ec := cfg.EnvConfigFor()
		ec.DemoScale, ec.BDPSpan = 4, span
		times[span] = demoMeanTime(t, ec, 5_000_001, n)
	}
	t.Logf("mean transfer time by span: %v", times)
	if !(times[2] > times[3] && times[3] > times[4]) {
		t.Errorf("widening the span to 4 does not shorten the transfers step by step: %v", times)
	}
	if times[5] != times[4] || times[6] != times[4] {
		t.Errorf("spans beyond 4 still change the teacher's transfers: %v", times)
	}
}

// TestPrivilegedWindowsAgainstUnseenGoals checks docs/marlin.md's account
// of what a privileged sender reaches on two unseen conditions. A sender
// told the link switch's instant holds the 150 KB cap on SATCOM and k
// times the UHF link's nominal BDP after the switch (the demonstrator at
// scale k, k = 2-8; at these scales the cap binds on SATCOM). Over the
// evaluation's 100 transfers none of them reaches 0.70 x CUBIC's mean
// time with the switch at 5 s, with the default span (a quarter to four
// estimated BDPs) or span 4; with CUBIC on Linux 6.18's recovery that
// goal (16.71 s) lies 0.005 s above the ideal sender's 16.70 s. With
// the background x1.5 the scale-4 sender misses it too (18.68 s, 18.32 s
// with span 4, against 17.93 s), where it met it against the transport
// before that recovery was modelled; learned policies that take more of
// the UDP elephants' queue meet it (docs/marlin.md).
func TestPrivilegedWindowsAgainstUnseenGoals(t *testing.T) {
	const runs = 100
	meanTime := func(s *scenario.Scenario, k, span float64) float64 {
		return privilegedMeanTime(t, s, k, span, 0, runs)
	}
	goal := func(s *scenario.Scenario) float64 { return 0.70 * cubicRow(t, s, runs).TransferTime }
	early := unseenCondition(t, "switch at 5 s")
	g := goal(early)
	for _, k := range []float64{2, 3, 4, 5, 6, 8} {
		for _, span := range []float64{0, 4} {
			m := meanTime(early, k, span)
			t.Logf("switch at 5 s, %g UHF BDPs, span %g: %.2f s (goal %.2f)", k, span, m, g)
			if m <= g {
				t.Errorf("switch at 5 s: the privileged sender at %g UHF BDPs (span %g) takes %.2f s, within the goal %.2f s the docs call out of its reach", k, span, m, g)
			}
		}
	}
	heavy := unseenCondition(t, "background x1.5")
	g = goal(heavy)
	for _, span := range []float64{0, 4} {
		m := meanTime(heavy, 4, span)
		t.Logf("background x1.5, 4 UHF BDPs, span %g: %.2f s (goal %.2f)", span, m, g)
		if m <= g {
			t.Errorf("background x1.5: the privileged sender (span %g) takes %.2f s, within the goal %.2f s the docs call out of its reach", span, m, g)
		}
	}
}

// privilegedMeanTime is the privileged sender's (the compact variant's
// demonstrator: told the link, k nominal BDPs, span, window cap c, 0 for
// the paper's) mean transfer time over the evaluation's first runs
// transfers of s at 3% UHF loss.
func privilegedMeanTime(t *testing.T, s *scenario.Scenario, k, span float64, c units.Bytes, runs int) float64 {
	t.Helper()
	ec := EnvConfig{Base: WithLoss(s, 0.03), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP, DemoScale: k, BDPSpan: span, WindowCap: c}
	return demoMeanTime(t, ec, 1, runs)
}

// unseenCondition returns the base scenario under the named unseen
// evaluation condition (UnseenVariants).
func unseenCondition(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	s := base(t).Clone()
	for _, v := range UnseenVariants() {
		if v.Name == name {
			if err := v.Apply(s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("no unseen condition %q", name)
	return nil
}

// cubicRow returns CUBIC's row on s over the evaluation's first runs
// transfers at 3% UHF loss: what the goals are relative to.
func cubicRow(t *testing.T, s *scenario.Scenario, runs int) Row {
	t.Helper()
	rows, _, err := Evaluate(context.Background(), EvalConfig{Base: s, Runs: runs, Losses: []float64{0.03}, Schemes: []Scheme{CUBIC}})
	if err != nil {
		t.Fatal(err)
	}
	return rows[0]
}

// TestSwitchAt20sGoalBeyondTheCap checks docs/marlin.md's reading of the
// goal with the switch at 20 s (0.70 x CUBIC's mean time, which stays on
// SATCOM): no fixed window within the paper's 150 KB cap (WindowCap)
// reaches it. Over the evaluation's transfers the time falls as the
// window grows, so the cap itself is the fastest fixed window, and it is
// still above the goal: on SATCOM a faster transfer needs a larger share
// of the bottleneck queue against the UDP background than 150 KB buys.
func TestSwitchAt20sGoalBeyondTheCap(t *testing.T) {
	const runs = 100
	s := unseenCondition(t, "switch at 20 s")
	goal := 0.70 * cubicRow(t, s, runs).TransferTime
	e, err := NewEnv(EnvConfig{Base: WithLoss(s, 0.03), Loss: -1, Bytes: 600_000, Variant: VariantPaper, Action: ActionLinear})
	if err != nil {
		t.Fatal(err)
	}
	prev := math.Inf(1)
	for _, w := range []units.Bytes{90_000, 110_000, 125_000, 135_000, WindowCap} {
		var sum float64
		for seed := uint64(1); seed <= runs; seed++ {
			e.Reset(seed)
			act := []float32{0}
			for range 1200 {
				// w' = w(1 + a) reaches w within a few steps and holds it.
				cw := float64(e.flow.Sender.CC().CongestionWindow())
				act[0] = float32(math.Max(-1, math.Min(1, float64(w)/cw-1)))
				if _, _, term, _, _ := e.Step(act); term {
					break
				}
			}
			var o Outcome
			fillFromResult(&o, experiment.Summarize(e.Network(), 0), 120*time.Second)
			sum += o.TransferTime
		}
		m := sum / runs
		t.Logf("switch at 20 s, fixed window %v: %.2f s (goal %.2f)", w, m, goal)
		if m >= prev {
			t.Errorf("window %v: %.2f s, not faster than the smaller window's %.2f s", w, m, prev)
		}
		if m <= goal {
			t.Errorf("window %v: %.2f s meets the goal %.2f s the docs call out of reach within the cap", w, m, goal)
		}
		prev = m
	}
}

// TestSwitchAt20sGoalAtTheEdgeOfWindowControl checks docs/marlin.md's
// reading of why no learned configuration meets the goal with the switch
// at 20 s on Linux 6.18's recovery: the privileged sender (told the link,
// holding 4 BDPs, up to the cap on SATCOM) misses it with the 200 KB cap
// the kept C200 uses (9.01 s against 8.99 s), meets it only with a 250
// KB cap, by under 1% (8.96 s), and misses again at 300 KB, where the
// window overflows the SATCOM queue. The goal lies at the edge of what
// window control reaches there, and C200 and C250 retrained on this
// transport (9.06 s and 9.01 s over 5 seeds) stay just above it.
func TestSwitchAt20sGoalAtTheEdgeOfWindowControl(t *testing.T) {
	const runs = 100
	s := unseenCondition(t, "switch at 20 s")
	goal := 0.70 * cubicRow(t, s, runs).TransferTime
	at := func(c units.Bytes) float64 {
		m := privilegedMeanTime(t, s, 4, 4, c, runs)
		t.Logf("switch at 20 s, privileged sender, cap %v: %.3f s (goal %.3f s)", c, m, goal)
		return m
	}
	if m := at(200_000); m <= goal {
		t.Errorf("cap 200KB: %.3f s meets the goal %.3f s, which the docs say it misses", m, goal)
	}
	if m := at(250_000); m > goal || m < 0.99*goal {
		t.Errorf("cap 250KB: %.3f s, want within 1%% below the goal %.3f s", m, goal)
	}
	if m := at(300_000); m <= goal {
		t.Errorf("cap 300KB: %.3f s meets the goal %.3f s, which the docs say it misses", m, goal)
	}
}

// TestCompactWindowCapChosenOnTrainingEpisodes records how `--window-cap
// 200KB` was chosen without the evaluation's transfers: on 200 episodes
// of the training distribution, the demonstrator at `--demo-scale 4`
// with span 4 has the shortest mean transfer with a 200 KB cap among
// 150 (the paper's), 200, 250 and 300 KB: a larger cap lets it take more
// of the SATCOM queue from the UDP background, a much larger one
// overflows the queue.
func TestCompactWindowCapChosenOnTrainingEpisodes(t *testing.T) {
	const n = 200
	cfg := TrainConfig{Base: base(t), Randomize: true, Variant: VariantCompact}
	cfg.defaults()
	times := map[units.Bytes]float64{}
	for _, c := range []units.Bytes{150_000, 200_000, 250_000, 300_000} {
		ec := cfg.EnvConfigFor()
		ec.DemoScale, ec.BDPSpan, ec.WindowCap = 4, 4, c
		times[c] = demoMeanTime(t, ec, 5_000_001, n)
	}
	t.Logf("mean transfer time by cap: %v", times)
	for c, m := range times {
		if c != 200_000 && m <= times[200_000] {
			t.Errorf("cap %v (%.3f s) is not slower than 200KB (%.3f s)", c, m, times[200_000])
		}
	}
}
