package onpolicy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/learn/rl/internal/agentutil"
	"github.com/cclab/cclab/learn/rl/nn"
	"github.com/cclab/cclab/learn/rl/space"
)

// TestPPOLossGradient checks ActorCritic.Backward for PPO's full loss
// (clipped surrogate + entropy bonus + clipped value loss) against central
// finite differences, for Box and Discrete actions and gSDE, over every
// parameter including the log σ parameters. Tolerance as in the SAC test:
// float32 passes with h = 1e-3.
func TestPPOLossGradient(t *testing.T) {
	for _, tc := range []struct {
		act space.Space
		sde bool
	}{{space.Uniform(-1, 1, 2), false}, {space.NewDiscrete(3), false}, {space.Uniform(-1, 1, 2), true}} {
		act := tc.act
		t.Run(fmt.Sprintf("%v/sde=%v", act, tc.sde), func(t *testing.T) {
			const B = 7
			rng := agentutil.NewRNG(1, 2)
			ac, err := NewActorCritic(space.Uniform(-5, 5, 3), act, []int{5}, nn.Tanh, true, -0.3, tc.sde, rng)
			if err != nil {
				t.Fatal(err)
			}
			// Larger output gains than SB3's 0.01 so the policy depends
			// visibly on its weights.
			ac.Pi.InitTorchDefault(rng.Rand)
			obs := make([]float32, B*3)
			for i := range obs {
				obs[i] = float32(rng.NormFloat64())
			}
			actions := make([]float32, B*act.Dim())
			old := make([]float32, B)
			ac.Sample(rng, obs, B, actions, old)
			r := rand.New(rand.NewPCG(3, 3))
			adv, ret, oldV := make([]float32, B), make([]float32, B), make([]float32, B)
			for i := 0; i < B; i++ {
				old[i] += float32(0.4 * r.NormFloat64()) // ratios spread around the clip range
				adv[i], ret[i], oldV[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			const entCoef, vfCoef, clip, clipVF = 0.05, 0.5, 0.2, 0.3
			dlogp, dent, dv := make([]float32, B), make([]float32, B), make([]float32, B)
			loss := func(grad bool) float64 {
				ev := ac.Evaluate(obs, actions, B)
				clear(dlogp)
				clear(dv)
				var d []float32
				var dvv []float32
				if grad {
					d, dvv = dlogp, dv
				}
				l := nn.PPOClip(ev.LogP, old, adv, clip, 1, d).Loss
				l += vfCoef * nn.ValueLoss(ev.Values, oldV, ret, clipVF, vfCoef, dvv)
				for i, h := range ev.Entropy {
					l -= entCoef * float64(h) / B
					dent[i] = -entCoef / B
				}
				if grad {
					ac.ZeroGrad()
					ac.Backward(actions, B, dlogp, dent, dv)
				}
				return l
			}
			loss(true)
			var grads [][]float32
			for _, g := range ac.Grads() {
				grads = append(grads, append([]float32(nil), g...))
			}
			const h = 1e-3
			for j, ps := range ac.Params() {
				if tc.sde && j == 0 {
					// gSDE detaches the features z from the std (SB3's
					// learn_features=False), so the policy-network gradient is
					// by design not the full derivative; its mean path is the
					// one checked by the non-gSDE case.
					continue
				}
				for i := range ps {
					o := ps[i]
					ps[i] = o + h
					lp := loss(false)
					ps[i] = o - h
					lm := loss(false)
					ps[i] = o
					num := (lp - lm) / (2 * h)
					if got := float64(grads[j][i]); math.Abs(num-got) > 3e-3+2e-2*math.Abs(num) {
						t.Errorf("param set %d index %d: analytic %.6g, finite difference %.6g", j, i, got, num)
					}
				}
			}
		})
	}
}

// TestSampleMatchesDistribution: Gaussian samples have the policy's mean
// and standard deviation; categorical samples follow the softmax.
func TestSampleMatchesDistribution(t *testing.T) {
	rng := agentutil.NewRNG(5, 5)
	ac, _ := NewActorCritic(space.Uniform(-1, 1, 2), space.Uniform(-1, 1, 1), []int{4}, nn.Tanh, true, math.Log(0.5), false, rng)
	const n = 20000
	obs := make([]float32, n*2)
	acts, lp := make([]float32, n), make([]float32, n)
	ac.Sample(rng, obs, n, acts, lp)
	mean := float64(ac.Pi.Forward(ac.Pi.NewWorkspace(), obs[:2], 1)[0])
	var s, ss float64
	for _, a := range acts {
		s += float64(a)
		ss += float64(a) * float64(a)
	}
	m := s / n
	sd := math.Sqrt(ss/n - m*m)
	if math.Abs(m-mean) > 5*0.5/math.Sqrt(n) || math.Abs(sd-0.5) > 0.02 {
		t.Errorf("samples mean %g sd %g, want %g and 0.5", m, sd, mean)
	}
	dc, _ := NewActorCritic(space.Uniform(-1, 1, 2), space.NewDiscrete(3), []int{4}, nn.Tanh, false, 0, false, rng)
	dc.Sample(rng, obs, n, acts, lp)
	logits := dc.Pi.Forward(dc.Pi.NewWorkspace(), obs[:2], 1)
	p := make([]float32, 3)
	nn.Softmax(logits, 3, p)
	var counts [3]float64
	for _, a := range acts {
		counts[int(a)]++
	}
	for k := range counts {
		if f := counts[k] / n; math.Abs(f-float64(p[k])) > 0.015 {
			t.Errorf("action %d frequency %g, softmax %g", k, f, p[k])
		}
	}
}
