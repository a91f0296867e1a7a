package rl_test

import (
	"math"
	"testing"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/a2c"
	"github.com/cclab/cclab/learn/rl/cartpole"
	"github.com/cclab/cclab/learn/rl/env"
)

func TestDefault(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{{0, 0.99}, {0.5, 0.5}, {rl.Zero, 0}, {-0.25, -0.25}} {
		got := rl.Default(tc.v, 0.99)
		if got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("Default(%g, 0.99) = %g, want %g", tc.v, got, tc.want)
		}
	}
}

// TestZeroGammaIsMyopic checks that Gamma: rl.Zero reaches the learner as
// a discount of 0: with it, a learner's value targets are the immediate
// rewards, so training differs from the default discount's.
func TestZeroGammaIsMyopic(t *testing.T) {
	train := func(gamma float64) float64 {
		v, err := env.NewVec([]env.Env{cartpole.New(), cartpole.New()}, 1)
		if err != nil {
			t.Fatal(err)
		}
		a, err := a2c.New(v, a2c.Config{Seed: 3, Gamma: gamma}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := a.Iterate(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		return a.Stats().ValueLoss
	}
	zero, def, explicit := train(rl.Zero), train(0), train(0.99)
	if def != explicit {
		t.Errorf("Gamma 0 (default) gives value loss %g, Gamma 0.99 %g: the zero value should mean the default", def, explicit)
	}
	if zero == def {
		t.Errorf("Gamma rl.Zero trains like the default (value loss %g)", zero)
	}
}
