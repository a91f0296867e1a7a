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
	s.actorObjective(obs, nil, alpha, false)
	grad := append([]float32(nil), s.Actor.Grads...)
	const h = 1e-3
	for i := range s.Actor.Params {
		old := s.Actor.Params[i]
		s.Actor.Params[i] = old + h
		lp, _ := s.actorObjective(obs, nil, alpha, false)
		s.Actor.Params[i] = old - h
		lm, _ := s.actorObjective(obs, nil, alpha, false)
		s.Actor.Params[i] = old
		num := (lp - lm) / (2 * h)
		if got := float64(grad[i]); math.Abs(num-got) > 3e-3+2e-2*math.Abs(num) {
			t.Errorf("actor param %d: analytic %.6g, finite difference %.6g", i, got, num)
		}
	}
}

// TestBCGradientFiniteDifference checks the behaviour-cloning term's
// gradient (Config.BCWeight): with guides, the actor's gradient minus the
// gradient without them must be w times the finite-difference gradient of
// mean (tanh μ − g)², w = BCWeight · mean|Q| held fixed (TD3+BC's λ is
// not differentiated), and the returned term must be w times that mean.
func TestBCGradientFiniteDifference(t *testing.T) {
	s, err := New(newPendulumVec(t, 1), Config{Seed: 4, Hidden: []int{8}, BatchSize: 6,
		Demonstrator: constDemo{0.5}, BCWeight: 0.7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	s.Actor = nn.NewMLP(s.Actor.Sizes, nn.Tanh, nn.Identity)
	s.Actor.InitTorchDefault(rng)
	s.alloc()
	obs := make([]float32, 6*3)
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	guide := []float32{0.5, -0.2, 0.9, -0.9, 0, 0.3}
	s.rng.Normal(s.noise)
	const alpha = 0.3
	s.actorObjective(obs, nil, alpha, false)
	plain := append([]float32(nil), s.Actor.Grads...)
	_, bc := s.actorObjective(obs, guide, alpha, false)
	full := append([]float32(nil), s.Actor.Grads...)
	mse := func() float64 {
		out := s.Actor.Forward(s.wsA, obs, 6)
		var m float64
		for i := range 6 {
			e := math.Tanh(float64(out[2*i])) - float64(guide[i])
			m += e * e / 6
		}
		return m
	}
	m0 := mse()
	if bc <= 0 || m0 <= 0 {
		t.Fatalf("behaviour-cloning term %g, mean squared error %g: want both positive", bc, m0)
	}
	w := bc / m0
	const h = 1e-3
	for i := range s.Actor.Params {
		old := s.Actor.Params[i]
		s.Actor.Params[i] = old + h
		lp := mse()
		s.Actor.Params[i] = old - h
		lm := mse()
		s.Actor.Params[i] = old
		num := w * (lp - lm) / (2 * h)
		if got := float64(full[i] - plain[i]); math.Abs(num-got) > 1e-3+2e-2*math.Abs(num) {
			t.Errorf("actor param %d: analytic %.6g, finite difference %.6g", i, got, num)
		}
	}
}
