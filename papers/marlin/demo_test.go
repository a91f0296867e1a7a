package marlin

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
)

// TestDemoActionHoldsNominalBDP: stepping with DemoAction sets the window
// to the current link's nominal bandwidth-delay product, within a byte of
// rounding, for both window-relative actions, and follows the switch from
// SATCOM to UHF; so does the compact variant's, times DemoScale.
func TestDemoActionHoldsNominalBDP(t *testing.T) {
	for _, action := range []string{ActionLinear, ActionLog2} {
		e, err := NewEnv(EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 5_000_000, Action: action})
		if err != nil {
			t.Fatal(err)
		}
		if a := e.DemoAction(); a != 0 {
			t.Errorf("%s: DemoAction before Reset = %g, want 0", action, a)
		}
		e.Reset(4)
		windows := map[units.Bytes]bool{}
		for step := 0; step < 250; step++ {
			n := e.Network()
			want := min(max(n.LinkRate().BytesIn(n.NominalRTT(e.Flow(), n.CurrentSegment())), e.mss), WindowCap)
			a := e.DemoAction()
			if a < -1 || a > 1 {
				t.Fatalf("%s step %d: action %g outside [-1, 1]", action, step, a)
			}
			e.Step([]float32{float32(a)})
			got := e.Flow().Sender.CC().CongestionWindow()
			// One step of at most a doubling (a = 1) or a halving may
			// not reach a distant target: check the steps that can.
			if prev := got; math.Abs(float64(a)) < 1 && (prev > want+1 || prev+1 < want) {
				t.Fatalf("%s step %d: window %d after the demonstration, want %d", action, step, got, want)
			}
			windows[want] = true
			if e.done {
				break
			}
		}
		// The 5 MB transfer outlasts the switch: both links' BDPs were aimed at.
		if len(windows) < 2 {
			t.Errorf("%s: the demonstration aimed at %d window(s), want SATCOM's and UHF's", action, len(windows))
		}
	}
	// The compact action sets the window in units of the policy's BDP
	// estimate: the demonstration is the multiple that gives DemoScale
	// nominal BDPs, wherever the estimate is.
	for _, scale := range []float64{0, 4} {
		e, err := NewEnv(EnvConfig{Base: WithLoss(base(t), 0.03), Loss: -1, Bytes: 5_000_000, Variant: VariantCompact, Action: ActionBDP, DemoScale: scale})
		if err != nil {
			t.Fatal(err)
		}
		e.Reset(4)
		k := max(scale, 1)
		windows := map[units.Bytes]bool{}
		for step := 0; step < 250 && !e.done; step++ {
			n := e.Network()
			nominal := float64(n.LinkRate().BytesIn(n.NominalRTT(e.Flow(), n.CurrentSegment())))
			want := min(max(units.Bytes(k*nominal), e.mss), WindowCap)
			a := e.DemoAction()
			e.Step([]float32{float32(a)})
			got := e.Flow().Sender.CC().CongestionWindow()
			// An action clipped at ±1 cannot reach a target more than
			// four estimates away; BDPWindow rounds up.
			if math.Abs(a) < 1 && (got > want+1 || got+1 < want) {
				t.Fatalf("compact, scale %g, step %d: window %d after the demonstration, want %d", scale, step, got, want)
			}
			windows[want] = true
		}
		if len(windows) < 2 {
			t.Errorf("compact, scale %g: the demonstration aimed at %d window(s), want SATCOM's and UHF's", scale, len(windows))
		}
	}
}

// TestDemonstratorBeatsCUBIC: what `--demo bdp` demonstrates must be worth
// learning from: on the same 20 evaluation transfers at 3% loss it is
// faster than CUBIC with fewer retransmissions, and finishes them all.
func TestDemonstratorBeatsCUBIC(t *testing.T) {
	const runs, loss = 20, 0.03
	e, err := NewEvalEnv(base(t), loss, 600_000, 120*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var demoTime, demoRetx float64
	for s := 1; s <= runs; s++ {
		e.Reset(uint64(s))
		for {
			_, _, term, trunc, _ := e.Step([]float32{float32(e.core.DemoAction())})
			if term || trunc {
				break
			}
		}
		o := e.Outcome()
		if !o.Finished {
			t.Fatalf("seed %d: the demonstrator did not finish in 120 s", s)
		}
		demoTime += o.TransferTime / runs
		demoRetx += o.Retransmissions / runs
	}
	_, cubic, err := Evaluate(context.Background(), EvalConfig{Base: base(t), Runs: runs, Losses: []float64{loss}, Schemes: []Scheme{CUBIC}, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var cTime, cRetx float64
	for _, o := range cubic {
		cTime += o.TransferTime / runs
		cRetx += o.Retransmissions / runs
	}
	t.Logf("demonstrator %.2f s, %.1f retransmissions; CUBIC %.2f s, %.1f", demoTime, demoRetx, cTime, cRetx)
	if !(demoTime < cTime && demoRetx < cRetx) {
		t.Errorf("demonstrator %.2f s / %.1f retransmissions, CUBIC %.2f s / %.1f: not better on both", demoTime, demoRetx, cTime, cRetx)
	}
}

// TestTrainWithDemonstrations: --demo trains deterministically, changes the
// policy, is recorded in the policy file, and malformed settings are
// refused.
func TestTrainWithDemonstrations(t *testing.T) {
	run := func(demo string, steps int64, noise float64) []byte {
		res, err := Train(context.Background(), TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 3,
			Randomize: true, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000,
			Demo: demo, DemoSteps: steps, DemoNoise: noise})
		if err != nil {
			t.Fatal(err)
		}
		if demo != "" && (res.Policy.Meta.Extra["demo"] != demo || res.Policy.Meta.Extra["demo_steps"] != "160") {
			t.Errorf("policy meta %v does not record the demonstrations", res.Policy.Meta.Extra)
		}
		return policyBytes(t, res)
	}
	a, b := run(DemoBDP, 160, 0.1), run(DemoBDP, 160, 0.1)
	if !bytes.Equal(a, b) {
		t.Error("same seed with demonstrations, different policies")
	}
	if bytes.Equal(a, run("", 0, 0)) {
		t.Error("demonstrations left the policy unchanged")
	}
	for name, c := range map[string]TrainConfig{
		"unknown demonstrator":         {Demo: "cubic", DemoSteps: 10},
		"demonstrator without steps":   {Demo: DemoBDP},
		"steps without demonstrator":   {DemoSteps: 10},
		"noise without demonstrator":   {DemoNoise: 0.1},
		"negative demonstration noise": {Demo: DemoBDP, DemoSteps: 10, DemoNoise: -1},
		"cloning without demonstrator": {BCWeight: 0.4},
		"negative cloning weight":      {Demo: DemoBDP, BCWeight: -1},
	} {
		c.Base = base(t)
		_, err := Train(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "demonstrat") {
			t.Errorf("%s: error %v, want one about the demonstrations", name, err)
		}
	}
}

// TestTrainWithBehaviourCloning: `--bc-weight` without a demonstration
// phase reaches the learner (the policy differs from the same run
// without it; sac's TestBehaviourCloning shows the term pulls the policy
// to the demonstrator), records its weight and reproduces with the seed.
func TestTrainWithBehaviourCloning(t *testing.T) {
	train := func(weight float64) []byte {
		c := TrainConfig{Base: base(t), Steps: 320, Envs: 2, Workers: 2, Seed: 4,
			Randomize: true, Hidden: []int{16, 16}, BatchSize: 32, Buffer: 1000, NStep: 10, Gamma: 0.995}
		if weight > 0 {
			c.Demo, c.BCWeight = DemoBDP, weight
		}
		res, err := Train(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if weight > 0 && (res.Policy.Meta.Extra["bc_weight"] != "0.4" || res.Policy.Meta.Extra["demo"] != DemoBDP) {
			t.Errorf("policy meta %v does not record the behaviour cloning", res.Policy.Meta.Extra)
		}
		return policyBytes(t, res)
	}
	cloned := train(0.4)
	if !bytes.Equal(cloned, train(0.4)) {
		t.Error("same seed with behaviour cloning, different policies")
	}
	if bytes.Equal(cloned, train(0)) {
		t.Error("behaviour cloning left the policy unchanged")
	}
}
