package marlin

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/learn/rl/policy"
)

// TestEvalEnvMatchesEvaluate drives the evaluation environment that
// learners outside cclab are scored in (NewVariantEvalEnv, the gym
// service's evaluation mode) with each shipped policy and checks that
// every transfer's outcome is Evaluate's for the same policy and seed, bit
// for bit: an SB3 policy scored through it is scored exactly as `cclab
// marlin eval` scores cclab's.
func TestEvalEnvMatchesEvaluate(t *testing.T) {
	const runs, loss = 3, 0.03
	paper, err := ShippedPolicy()
	if err != nil {
		t.Fatal(err)
	}
	compact, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*policy.Policy{paper, compact} {
		variant := PolicyVariant(p)
		_, want, err := Evaluate(context.Background(), EvalConfig{
			Base: base(t), Runs: runs, Losses: []float64{loss}, Schemes: []Scheme{Marlin}, Policy: p, Jobs: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewVariantEvalEnv(base(t), loss, 600_000, 120*time.Second, variant, PolicyAction(p))
		if err != nil {
			t.Fatal(err)
		}
		if got, w := e.ObservationSpace().Dim(), p.Obs.Dim(); got != w {
			t.Fatalf("%s: evaluation observation has %d values, the policy takes %d", variant, got, w)
		}
		distinct := map[float64]bool{}
		for _, o := range want {
			obs, _ := e.Reset(o.Seed)
			for {
				var term, trunc bool
				obs, _, term, trunc, _ = e.Step(p.ActInto(obs))
				if term || trunc {
					break
				}
			}
			got := e.Outcome()
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			}
			if !same(got.TransferTime, o.TransferTime) || got.Finished != o.Finished || !same(got.Retransmissions, o.Retransmissions) || !same(got.RTI, o.RTI) {
				t.Errorf("%s seed %d: evaluation env %+v, Evaluate %+v", variant, o.Seed, got, o)
			}
			distinct[o.TransferTime] = true
		}
		// Not vacuous: the seeds' transfers differ.
		if len(distinct) < 2 {
			t.Errorf("%s: %d runs gave one transfer time", variant, runs)
		}
	}
}
