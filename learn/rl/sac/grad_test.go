package sac

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/learn/rl/nn"
)

// TestActorGradientFiniteDifference checks the whole actor-loss backward
// pass (critic input gradient restricted to the action columns, min over
// twin critics, squashed-Gaussian reparameterisation, [mean | log σ]
// assembly) against central finite differences of the loss. Networks use
// tanh so the loss is smooth; ReLU is covered by the nn tests. Tolerance:
// float32 forward passes with h = 1e-3 give ≈ 1e-7·|L|/h ≈ 1e-3 absolute
// error.
func TestActorGradientFiniteDifference(t *testing.T) {
	s, err := New(newPendulumVec(t, 1), Config{Seed: 4, Hidden: []int{8}, BatchSize: 6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	smooth := func(m *nn.MLP, out nn.Activation) *nn.MLP {
		n := nn.NewMLP(m.Sizes, nn.Tanh, out)
		n.InitTorchDefault(rng)
		return n
	}
	s.Actor = smooth(s.Actor, nn.Identity)
	s.Q1, s.Q2 = smooth(s.Q1, nn.Identity), smooth(s.Q2, nn.Identity)
	s.alloc()
	obs := make([]float32, 6*3)
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	s.rng.Normal(s.noise)
	const alpha = 0.3
	s.actorObjective(obs, alpha, false)
	grad := append([]float32(nil), s.Actor.Grads...)
	const h = 1e-3
	for i := range s.Actor.Params {
		old := s.Actor.Params[i]
		s.Actor.Params[i] = old + h
		lp := s.actorObjective(obs, alpha, false)
		s.Actor.Params[i] = old - h
		lm := s.actorObjective(obs, alpha, false)
		s.Actor.Params[i] = old
		num := (lp - lm) / (2 * h)
		if got := float64(grad[i]); math.Abs(num-got) > 3e-3+2e-2*math.Abs(num) {
			t.Errorf("actor param %d: analytic %.6g, finite difference %.6g", i, got, num)
		}
	}
}
