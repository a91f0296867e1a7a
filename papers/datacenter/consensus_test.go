package datacenter

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cclab/cclab/learn/rl/ppo"
)

// fdCheck compares the penalty's gradient with respect to each value with
// central finite differences of its returned value.
func fdCheck(t *testing.T, name string, c *consensus, agent int, rows []int, vals []float32) {
	t.Helper()
	B := len(rows)
	mb := func(v []float32) *ppo.Minibatch {
		return &ppo.Minibatch{Rows: rows, Values: v, DValues: make([]float32, B), DLogP: make([]float32, B)}
	}
	m := mb(vals)
	c.eval(agent, m)
	for b := range B {
		const h = 1e-2
		plus, minus := append([]float32(nil), vals...), append([]float32(nil), vals...)
		plus[b] += h
		minus[b] -= h
		num := (c.eval(agent, mb(plus)) - c.eval(agent, mb(minus))) / (float64(plus[b]) - float64(minus[b]))
		if got := float64(m.DValues[b]); math.Abs(got-num) > 1e-4*math.Max(1, math.Abs(num)) {
			t.Errorf("%s: ∂penalty/∂V[%d] = %g, finite differences %g", name, b, got, num)
		}
	}
	if d := m.DLogP; d[0] != 0 {
		t.Errorf("%s: the penalty touched the policy's gradient: %v", name, d)
	}
}

// TestConsensusPenaltyGradient: the penalty's value against a direct
// evaluation of the formula, and its gradient with respect to the critic's
// outputs against finite differences, for independent learners (K = 3)
// and for the shared learner.
func TestConsensusPenaltyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const k, n, B = 3, 40, 8
	c := &consensus{coef: 0.7, k: k, vals: make([][]float32, k)}
	for j := range k {
		for range n {
			c.vals[j] = append(c.vals[j], float32(rng.NormFloat64()*2))
		}
	}
	rows := []int{3, 17, 0, 39, 22, 8, 8, 31}
	vals := make([]float32, B)
	for b := range vals {
		vals[b] = float32(rng.NormFloat64() * 2)
	}
	// The formula directly: c/B Σ_b 1/(K−1) Σ_{j≠1} (V_b − V̂_j,row_b)².
	var want float64
	for b, r := range rows {
		for _, j := range []int{0, 2} {
			d := float64(vals[b]) - float64(c.vals[j][r])
			want += 0.7 * d * d / (B * 2)
		}
	}
	m := &ppo.Minibatch{Rows: rows, Values: vals, DValues: make([]float32, B), DLogP: make([]float32, B)}
	if got := c.eval(1, m); math.Abs(got-want) > 1e-9*want {
		t.Errorf("penalty %g, formula %g", got, want)
	}
	fdCheck(t, "independent", c, 1, rows, vals)
	// Values already equal to every neighbour's: no penalty, no gradient.
	c2 := &consensus{coef: 5, k: 2, vals: [][]float32{{1, 2, 3}, {1, 2, 3}}}
	m = &ppo.Minibatch{Rows: []int{0, 2}, Values: []float32{1, 3}, DValues: make([]float32, 2), DLogP: make([]float32, 2)}
	if p := c2.eval(0, m); p != 0 || m.DValues[0] != 0 || m.DValues[1] != 0 {
		t.Errorf("agreeing estimates: penalty %g, gradient %v", p, m.DValues)
	}
}

// TestConsensusGradientThroughCritic: what PPO backpropagates from the
// penalty's output gradient equals finite differences of the penalty as a
// function of the critic's parameters (independent agent 0 of 2, and the
// shared learner, whose neighbours are rows of its own rollout).
func TestConsensusGradientThroughCritic(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.Agents = 2
	tc := TrainConfig{Env: cfg, Algo: "ppo", Steps: 128, Envs: 2, Seed: 4}
	tc.defaults()
	mv, err := NewMultiVec(cfg, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLearner(&tc, mv, 4, tc.Steps, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := l.(*ppo.PPO)
	if err := p.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	own := p.RolloutValues()
	rng := rand.New(rand.NewPCG(3, 3))
	indep := &consensus{coef: 2, k: 2, vals: [][]float32{nil, make([]float32, len(own))}}
	for r := range indep.vals[1] {
		indep.vals[1][r] = own[r] + float32(rng.NormFloat64())
	}
	shared := &consensus{coef: 2, k: 2, own: p}
	rows := []int{0, 1, 5, 6, 9, 130, 255, 200}
	obsDim := mv.ObservationSpace().Dim()
	// Any fixed inputs do for the chain rule; the rows only pick the
	// neighbours' estimates.
	obs := make([]float32, len(rows)*obsDim)
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	act := make([]float32, len(rows))
	ac := p.AC
	for _, cs := range []struct {
		name  string
		c     *consensus
		agent int
	}{{"independent", indep, 0}, {"shared", shared, -1}} {
		penaltyAt := func() float64 {
			v := append([]float32(nil), ac.Values(obs, len(rows))...)
			return cs.c.eval(cs.agent, &ppo.Minibatch{Rows: rows, Values: v, DValues: make([]float32, len(rows)), DLogP: make([]float32, len(rows))})
		}
		ev := ac.Evaluate(obs, act, len(rows))
		mb := &ppo.Minibatch{Rows: rows, Values: ev.Values, DValues: make([]float32, len(rows)), DLogP: make([]float32, len(rows))}
		cs.c.eval(cs.agent, mb)
		ac.ZeroGrad()
		ac.Backward(act, len(rows), make([]float32, len(rows)), make([]float32, len(rows)), mb.DValues)
		grads := append([]float32(nil), ac.Vf.Grads...)
		checked := 0
		for _, i := range []int{0, 7, 100, len(ac.Vf.Params) / 2, len(ac.Vf.Params) - 3, len(ac.Vf.Params) - 1} {
			x := ac.Vf.Params[i]
			const h = 1e-2
			ac.Vf.Params[i] = x + h
			plus := penaltyAt()
			ac.Vf.Params[i] = x - h
			minus := penaltyAt()
			ac.Vf.Params[i] = x
			num := (plus - minus) / (2 * h)
			if math.Abs(float64(grads[i])-num) > 2e-3*math.Max(1, math.Abs(num)) {
				t.Errorf("%s: critic parameter %d: backpropagated %g, finite differences %g", cs.name, i, grads[i], num)
			}
			checked++
		}
		if g := ac.Pi.Grads; g[0] != 0 || g[len(g)-1] != 0 {
			t.Errorf("%s: the penalty reached the actor", cs.name)
		}
		t.Logf("%s: %d critic parameters checked", cs.name, checked)
	}
}

func learnerBytes(t *testing.T, res *Trained) []byte {
	t.Helper()
	n, err := actorCritics(res.Learners)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for i := range n.actors {
		for _, s := range append(n.actors[i], n.critics[i]...) {
			for _, v := range s {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
	}
	return b
}

// TestConsensusShrinksDisagreement: with the penalty weighing as much as
// the value loss (c = 1) the two independent agents' value estimates of
// the same steps come together (their mean squared difference falls
// tenfold, to well below the run without the penalty, and never climbs
// back far above its running minimum). A much larger coefficient does less
// (c = 4 here ends at 0.07 against 0.05, with a rebound to 0.19): the
// neighbours' estimates are held fixed during an update, so each agent is
// pulled to where the other was and they partly swap rather than meet.
// The runs are deterministic per seed (also with a different number of
// stepping goroutines); the runs are deterministic per seed (also with a
// different number of stepping goroutines), and a zero coefficient is the
// run without the penalty.
func TestConsensusShrinksDisagreement(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four short runs")
	}
	cfg := smokeConfig(t)
	cfg.Agents = 2
	const iters = 16
	runSeed := func(coef float64, workers int, seed uint64) *Trained {
		res, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: Independent, Steps: 128 * iters, Envs: 1, Workers: workers,
			Seed: seed, Consensus: coef})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	run := func(coef float64, workers int) *Trained { return runSeed(coef, workers, 7) }
	off, on := run(0, 1), run(1, 1)
	d0, d1 := off.ValueDisagreement, on.ValueDisagreement
	t.Logf("disagreement without: %.4g", d0)
	t.Logf("disagreement with c=1: %.4g", d1)
	if len(d1) != iters || len(d0) != iters {
		t.Fatalf("%d and %d iterations recorded, want %d", len(d0), len(d1), iters)
	}
	last := func(d []float64) float64 { return (d[len(d)-1] + d[len(d)-2] + d[len(d)-3]) / 3 }
	if !(last(d1) < d1[0]/5) {
		t.Errorf("with the penalty the disagreement went %g → %g (mean of the last 3), want at least a fivefold fall", d1[0], last(d1))
	}
	// One seed's end point moves with anything that changes the episodes
	// (seed 7 alone fell from above 2x to 1.9x when the transport took up
	// Linux's rack.advanced rule; seeds 7-9 give 3.2x), so the comparison
	// with the run without the penalty is over three seeds.
	var end0, end1 float64
	for _, seed := range []uint64{7, 8, 9} {
		a, b := off, on
		if seed != 7 {
			a, b = runSeed(0, 1, seed), runSeed(1, 1, seed)
		}
		t.Logf("seed %d: disagreement at the end %.4g with the penalty, %.4g without", seed, last(b.ValueDisagreement), last(a.ValueDisagreement))
		end0 += last(a.ValueDisagreement) / 3
		end1 += last(b.ValueDisagreement) / 3
	}
	if !(end1 < end0/2) {
		t.Errorf("disagreement at the end, mean of seeds 7-9: %g with the penalty, %g without; want at least 2× less", end1, end0)
	}
	// Monotone up to noise: no iteration after the third is above twice
	// the running minimum.
	lo := d1[0]
	for i, d := range d1 {
		if i >= 3 && d > 2*lo {
			t.Errorf("iteration %d: disagreement %g, more than twice the earlier minimum %g", i, d, lo)
		}
		lo = math.Min(lo, d)
	}
	if again := run(1, 2); !bytes.Equal(learnerBytes(t, on), learnerBytes(t, again)) {
		t.Errorf("same seed, consensus on: different parameters")
	}
	if bytes.Equal(learnerBytes(t, on), learnerBytes(t, off)) {
		t.Errorf("consensus 1 changed nothing")
	}
	if v, ok := lossField(on.Loggers[0], "penalty"); !ok || !(v > 0) {
		t.Errorf("penalty logged %v (present %v), want > 0", v, ok)
	}
	if _, ok := lossField(off.Loggers[0], "penalty"); ok {
		t.Errorf("a penalty column without the penalty")
	}
}

// TestConsensusZeroIsIdentical: the penalty installed with coefficient 0
// (no term, zero gradient) leaves training byte-identical to the run
// without the hook, in both modes: the split Collect/Update loop and the
// hook change nothing by themselves. At 1 it changes the training, is
// logged and is recorded in the policies.
func TestConsensusZeroIsIdentical(t *testing.T) {
	cfg := smokeConfig(t)
	cfg.Agents = 2
	for _, mode := range []string{Independent, Shared} {
		plain, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: mode, Steps: 256, Envs: 2, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		zero, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: mode, Steps: 256, Envs: 2, Seed: 3, forceConsensus: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(learnerBytes(t, plain), learnerBytes(t, zero)) {
			t.Errorf("%s: consensus installed at 0 changed the parameters", mode)
		}
		on, err := Train(context.Background(), TrainConfig{Env: cfg, Algo: "ppo", Mode: mode, Steps: 256, Envs: 2, Seed: 3, Consensus: 1})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(learnerBytes(t, plain), learnerBytes(t, on)) {
			t.Errorf("%s: consensus 1 changed nothing", mode)
		}
		if v, ok := lossField(on.Loggers[0], "penalty"); !ok || !(v > 0) {
			t.Errorf("%s: penalty logged %v (present %v), want > 0", mode, v, ok)
		}
		if on.Policies[0].Meta.Extra["consensus"] != "1" {
			t.Errorf("%s: policy metadata %v lacks the consensus coefficient", mode, on.Policies[0].Meta.Extra)
		}
	}
}

// TestConsensusValidation: the penalty needs PPO, two agents and a
// coefficient in range.
func TestConsensusValidation(t *testing.T) {
	cfg := smokeConfig(t)
	two := cfg
	two.Agents = 2
	for _, tc := range []TrainConfig{
		{Env: two, Algo: "a2c", Mode: Independent, Consensus: 1},
		{Env: cfg, Algo: "ppo", Consensus: 1},
		{Env: two, Algo: "ppo", Consensus: -1},
		{Env: two, Algo: "ppo", Consensus: math.NaN()},
	} {
		tc.Steps, tc.Envs = 10, 1
		if _, err := Train(context.Background(), tc); err == nil {
			t.Errorf("%s, %d agents, consensus %g: no error", tc.Algo, tc.Env.Agents, tc.Consensus)
		}
	}
}
