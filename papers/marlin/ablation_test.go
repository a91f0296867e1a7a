package marlin

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// scripted is an environment whose step i (from 1) returns observation
// {i}, reward i, and terminates at step term (0: never).
type scripted struct {
	i, term int
	actions []float32
	obs     []float32
}

func (s *scripted) ObservationSpace() space.Space { return space.Uniform(0, 100, 1) }
func (s *scripted) ActionSpace() space.Space      { return space.Uniform(-1, 1, 1) }
func (s *scripted) Reset(uint64) ([]float32, env.Info) {
	s.i, s.obs = 0, []float32{0}
	return s.obs, nil
}
func (s *scripted) Step(a []float32) ([]float32, float64, bool, bool, env.Info) {
	s.i++
	s.actions = append(s.actions, a[0])
	s.obs[0] = float32(s.i)
	return s.obs, float64(s.i), s.term > 0 && s.i >= s.term, false, nil
}

// TestActionRepeatScripted: each Step of ActionRepeat(3) applies the same
// action three times, returns the sum of the three rewards and the last
// observation, and stops early at a termination (steps 1-3 pay 6, steps
// 4-5 pay 9 and terminate at 5); a time limit of 2 repeated steps
// truncates after 6 inner steps.
func TestActionRepeatScripted(t *testing.T) {
	s := &scripted{term: 5}
	w, err := env.NewActionRepeat(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	w.Reset(1)
	obs, r, term, _, _ := w.Step([]float32{0.5})
	if obs[0] != 3 || r != 6 || term {
		t.Errorf("first repeat: obs %v reward %g terminated %v, want 3, 6, false", obs, r, term)
	}
	obs, r, term, _, _ = w.Step([]float32{-0.25})
	if obs[0] != 5 || r != 9 || !term {
		t.Errorf("second repeat: obs %v reward %g terminated %v, want 5, 9 (4+5), true", obs, r, term)
	}
	if want := []float32{0.5, 0.5, 0.5, -0.25, -0.25}; !bytesEqual(s.actions, want) {
		t.Errorf("inner actions %v, want %v", s.actions, want)
	}
	tl := env.NewTimeLimit(&env.ActionRepeat{Env: &scripted{}, K: 3}, 2)
	tl.Reset(1)
	var trunc bool
	for range 2 {
		obs, _, _, trunc, _ = tl.Step([]float32{0})
	}
	if !trunc || obs[0] != 6 {
		t.Errorf("time limit 2 over repeat 3: truncated %v at inner step %v, want true at 6", trunc, obs[0])
	}
	if _, err := env.NewActionRepeat(s, 0); err == nil {
		t.Error("repeat 0 accepted")
	}
}

// TestFrameSkipOnCompactEnv: the frame-skip-2 training environment, with a
// constant action, sees the same simulation as the plain one: its reward
// at agent step i is the plain one's steps 2i and 2i+1 summed, its
// observation the plain one's after step 2i+1, and a bulk episode lasts
// EpisodeSteps/2 agent steps (20 s).
func TestFrameSkipOnCompactEnv(t *testing.T) {
	cfg := EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Variant: VariantCompact, Action: ActionBDP}
	plain, err := NewFrameSkipTrainingEnv(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	skip, err := NewFrameSkipTrainingEnv(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	plain.Reset(11)
	skip.Reset(11)
	a := []float32{0.6}
	for i := 0; ; i++ {
		_, r1, _, _, _ := plain.Step(a)
		o2, r2, term2, trunc2, _ := plain.Step(a)
		o, r, term, trunc, _ := skip.Step(a)
		if r != r1+r2 || !bytesEqual(o, o2) || term != term2 || trunc != trunc2 {
			t.Fatalf("agent step %d: reward %g obs %v, want %g (%g+%g) and %v", i, r, o[:4], r1+r2, r1, r2, o2[:4])
		}
		if term || trunc {
			if !trunc || i+1 != EpisodeSteps/2 {
				t.Errorf("bulk episode ended at agent step %d (truncated %v), want truncation at %d", i+1, trunc, EpisodeSteps/2)
			}
			break
		}
	}
}

// TestDrawExcluding: without an exclusion the draw is the old lo + u (hi -
// lo); with one, no value falls inside it, both ends are reached, and the
// mass below the gap is its share of the remaining length.
func TestDrawExcluding(t *testing.T) {
	for _, u := range []float64{0, 0.25, 0.999} {
		if got, want := drawExcluding(u, 5, 15, 0, 0), 5+u*10; got != want {
			t.Errorf("drawExcluding(%g, 5, 15, none) = %g, want %g", u, got, want)
		}
	}
	if got := drawExcluding(0, 1, 15, 4, 6); got != 1 {
		t.Errorf("u = 0 gives %g, want 1", got)
	}
	if got := drawExcluding(math.Nextafter(1, 0), 1, 15, 4, 6); math.Abs(got-15) > 1e-9 {
		t.Errorf("u -> 1 gives %g, want 15", got)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	below, n := 0, 100_000
	for range n {
		v := drawExcluding(rnd.Float64(), 1, 15, 4, 6)
		if v > 4 && v < 6 || v < 1 || v > 15 {
			t.Fatalf("drew %g, outside [1, 4] u [6, 15]", v)
		}
		if v <= 4 {
			below++
		}
	}
	// 3 of the 12 s left lie below the gap.
	if f := float64(below) / float64(n); math.Abs(f-0.25) > 0.01 {
		t.Errorf("fraction below the gap %g, want 0.25 +- 0.01", f)
	}
	// An exclusion overlapping the range's end is clipped to it.
	if got := drawExcluding(0.5, 0.6, 1.4, 1.3, 1.7); math.Abs(got-0.95) > 1e-12 {
		t.Errorf("drawExcluding(0.5, 0.6, 1.4, 1.3-1.7) = %g, want 0.95", got)
	}
}

// TestTrainingRangesExcluded: a training environment with the switch in
// [1 s, 15 s] minus [4 s, 6 s] and the background in [0.6, 1.4] never
// draws an excluded switch time, and does draw on both sides of it.
func TestTrainingRangesExcluded(t *testing.T) {
	c := TrainConfig{Base: base(t), Randomize: true, Timeline: Timeline{SwitchRange: [2]time.Duration{time.Second, 15 * time.Second},
		SwitchExclude: [2]time.Duration{4 * time.Second, 6 * time.Second}, BackgroundScale: [2]float64{0.6, 1.4}}}
	c.defaults()
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	e, err := NewEnv(c.EnvConfigFor())
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := false, false
	for seed := range uint64(300) {
		s, err := e.scenarioFor(seed, rand.New(rand.NewPCG(seed, 3)))
		if err != nil {
			t.Fatal(err)
		}
		at := s.Bottleneck.Schedule[0].At.V
		if at > 4*time.Second && at < 6*time.Second || at < time.Second || at > 15*time.Second {
			t.Fatalf("switch at %v, excluded", at)
		}
		lo, hi = lo || at < 4*time.Second, hi || at > 6*time.Second
	}
	if !lo || !hi {
		t.Errorf("switch times on one side of the gap only (below %v, above %v)", lo, hi)
	}
	bad := c
	bad.SwitchExclude = [2]time.Duration{6 * time.Second, 4 * time.Second}
	if err := bad.validate(); err == nil {
		t.Error("a decreasing exclusion accepted")
	}
}

// TestAblationOptionsTrain: every ablation option trains, is deterministic
// for a seed, is recorded in the policy, and changes the result; the
// options a variant cannot take are refused.
func TestAblationOptionsTrain(t *testing.T) {
	run := func(mod func(*TrainConfig)) []byte {
		c := TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 3, Randomize: true,
			Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, GradientSteps: 2}
		mod(&c)
		res, err := Train(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPolicy(res.Policy); err != nil {
			t.Fatal(err)
		}
		return policyBytes(t, res)
	}
	plain := run(func(*TrainConfig) {})
	opts := map[string]func(*TrainConfig){
		"frame skip 2":       func(c *TrainConfig) { c.FrameSkip = 2 },
		"3-step returns":     func(c *TrainConfig) { c.NStep = 3 },
		"no normalisation":   func(c *TrainConfig) { c.NoObsNorm = true },
		"target entropy -3":  func(c *TrainConfig) { c.TargetEntropy = -3 },
		"initial alpha 0.1":  func(c *TrainConfig) { c.EntCoefInit = 0.1 },
		"queue cost 1":       func(c *TrainConfig) { c.QueueCost = 1 },
		"link shaping":       func(c *TrainConfig) { c.LinkShaping = true },
		"wider timeline":     func(c *TrainConfig) { c.SwitchRange = [2]time.Duration{time.Second, 15 * time.Second} },
		"discount 0.95":      func(c *TrainConfig) { c.Gamma = 0.95 },
		"bulk (fixed 200)":   func(c *TrainConfig) { c.Bulk = true },
		"excluded bg scales": func(c *TrainConfig) { c.BackgroundExclude = [2]float64{0.9, 1.1} },
	}
	for name, mod := range opts {
		a, b := run(mod), run(mod)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: same seed, different policies", name)
		}
		if bytes.Equal(a, plain) {
			t.Errorf("%s: same policy as without the option", name)
		}
	}
	for name, c := range map[string]TrainConfig{
		"frame skip on the paper's agent":   {Base: base(t), FrameSkip: 2},
		"frame skip 3 (not a divisor)":      {Base: base(t), Variant: VariantCompact, FrameSkip: 3},
		"queue cost on the paper's agent":   {Base: base(t), QueueCost: 1},
		"link shaping on the paper's agent": {Base: base(t), LinkShaping: true},
	} {
		if _, err := Train(context.Background(), c); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestEvaluateHoldsRepeatedActions: Evaluate runs a frame-skip-2 policy as
// training does, one action per two steps on the observation after the
// second: the transfer it measures equals that of ActionRepeat(2) driven
// by the policy.
func TestEvaluateHoldsRepeatedActions(t *testing.T) {
	res, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 5,
		Randomize: true, Variant: VariantCompact, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000,
		GradientSteps: 2, FrameSkip: 2})
	if err != nil {
		t.Fatal(err)
	}
	pol := res.Policy
	if PolicyFrameSkip(pol) != 2 {
		t.Fatalf("policy frame skip %d, want 2", PolicyFrameSkip(pol))
	}
	const seed, loss = 3, 0.03
	evalTime := func() float64 {
		_, out, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: 1, Seed: seed - 1,
			Losses: []float64{loss}, Schemes: []Scheme{Marlin}, Policy: pol, Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out[0].TransferTime
	}
	got := evalTime()

	core, err := NewEnv(EnvConfig{Base: WithLoss(base(t), loss), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := env.NewStack(core, CompactHistory, true)
	rep, _ := env.NewActionRepeat(st, 2)
	obs, _ := rep.Reset(seed)
	p := pol.Clone()
	for range 600 {
		var term bool
		obs, _, term, _, _ = rep.Step(p.ActInto(obs))
		if term {
			break
		}
	}
	r := experiment.Summarize(core.Network(), 0)
	if r.Flows[0].FCT == nil || *r.Flows[0].FCT != got {
		t.Errorf("Evaluate measured %g s, ActionRepeat driven by the policy %v", got, r.Flows[0].FCT)
	}
	pol.Meta.Extra["frame_skip"] = "x"
	if err := CheckPolicy(pol); err == nil {
		t.Error("frame_skip \"x\" accepted")
	}
}

// TestQueueCostReward: the queueing weight replaces QueueCost in the
// reward's last term only.
func TestQueueCostReward(t *testing.T) {
	if a, b := compactReward(0.1, 5000, 2, 3, QueueCost, RefRate), CompactReward(0.1, 5000, 2, 3); a != b {
		t.Errorf("compactReward with QueueCost %g, CompactReward %g", a, b)
	}
	// Inflation 3: the queue term is qc x 0.1 s x 2.
	d := compactReward(0.1, 5000, 2, 3, 0.2, RefRate) - compactReward(0.1, 5000, 2, 3, 1, RefRate)
	if math.Abs(d-0.8*0.1*2) > 1e-12 {
		t.Errorf("raising the weight from 0.2 to 1 cost %g, want %g", d, 0.8*0.1*2)
	}
}

// TestLinkShapingReward: with the delivered bytes credited at the link's
// rate a step that uses the whole link scores 0 before its costs, half of
// it -dt/2; in the environment, link shaping changes each step's reward
// by exactly the delivered term's difference and nothing else (the same
// observations, the same transfer), across the link switch.
func TestLinkShapingReward(t *testing.T) {
	if r := compactReward(0.1, 3200, 0, 1, QueueCost, 32_000); r != 0 {
		t.Errorf("a step at the link's rate scores %g, want 0", r)
	}
	if r := compactReward(0.1, 1600, 0, 1, QueueCost, 32_000); math.Abs(r+0.05) > 1e-12 {
		t.Errorf("a step at half the link's rate scores %g, want -0.05", r)
	}
	s := WithLoss(base(t), 0.03)
	mk := func(shape bool) *Env {
		e, err := NewEnv(EnvConfig{Base: s, Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP, LinkShaping: shape})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(7)
		return e
	}
	plain, shaped := mk(false), mk(true)
	act := []float32{0.5}
	rates := map[float64]bool{}
	for k := 0; ; k++ {
		o1, r1, term1, _, info := plain.Step(act)
		o2, r2, term2, _, _ := shaped.Step(act)
		if term1 != term2 || !slices.Equal(o1, o2) {
			t.Fatalf("step %d: link shaping changed the transfer", k)
		}
		link := float64(shaped.net.LinkRate().BytesIn(time.Second))
		rates[link] = true
		d := info["delivered_kb"] * 1000
		if want := d/link - d/RefRate; math.Abs((r2-r1)-want) > 1e-9 {
			t.Fatalf("step %d: shaped minus plain reward %g, want %g (delivered %g B, link %g B/s)", k, r2-r1, want, d, link)
		}
		if term1 {
			break
		}
		if k > 2000 {
			t.Fatal("the transfer did not end in 200 s")
		}
	}
	if len(rates) < 2 {
		t.Errorf("the transfer crossed links of rates %v: want the switch inside it", rates)
	}
}
