package marlin

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
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
	// The compact policy as if trained with frame skip 2 and 3 (its
	// weights do not matter here, only that both sides hold each action
	// alike); 5.2 s (52 steps) cuts the last repeat short for both, and
	// 300 KB leaves some of the transfers unfinished there.
	skipped := func(k string) *policy.Policy {
		p, err := ShippedCompactPolicy()
		if err != nil {
			t.Fatal(err)
		}
		p.Meta.Extra["frame_skip"] = k
		return p
	}
	for _, tc := range []struct {
		name    string
		p       *policy.Policy
		bytes   units.Bytes
		maxTime time.Duration
	}{
		{"paper", paper, 600_000, 120 * time.Second},
		{"compact", compact, 600_000, 120 * time.Second},
		{"compact, frame skip 2", skipped("2"), 600_000, 120 * time.Second},
		{"compact, frame skip 3, cut at 5.2 s", skipped("3"), 300_000, 5200 * time.Millisecond},
	} {
		p := tc.p
		_, want, err := Evaluate(context.Background(), EvalConfig{
			Base: base(t), Runs: runs, Losses: []float64{loss}, Schemes: []Scheme{Marlin}, Policy: p, Jobs: 1,
			Bytes: tc.bytes, MaxTime: tc.maxTime,
		})
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewPolicyEvalEnv(base(t), loss, tc.bytes, tc.maxTime, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := e.ObservationSpace().Dim(), p.Obs.Dim(); got != w {
			t.Fatalf("%s: evaluation observation has %d values, the policy takes %d", tc.name, got, w)
		}
		k := PolicyFrameSkip(p)
		distinct := map[float64]bool{}
		for _, o := range want {
			obs, _ := e.Reset(o.Seed)
			actions := 0
			for {
				var term, trunc bool
				obs, _, term, trunc, _ = e.Step(p.ActInto(obs))
				actions++
				if term || trunc {
					break
				}
			}
			// Each action holds k steps of 100 ms (the last possibly
			// fewer): the agent acted ceil(steps / k) times.
			if o.Finished {
				steps := int(math.Ceil(o.TransferTime / StepInterval.Seconds()))
				if lo, hi := (steps+k-1)/k, (steps+k)/k+1; actions < lo || actions > hi {
					t.Errorf("%s seed %d: %d actions for a %.2f s transfer, want %d-%d with frame skip %d", tc.name, o.Seed, actions, o.TransferTime, lo, hi, k)
				}
			} else if limit := int(tc.maxTime / StepInterval); actions != (limit+k-1)/k {
				t.Errorf("%s seed %d: %d actions until the %v limit, want %d with frame skip %d", tc.name, o.Seed, actions, tc.maxTime, (limit+k-1)/k, k)
			}
			got := e.Outcome()
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
			}
			if !same(got.TransferTime, o.TransferTime) || got.Finished != o.Finished || !same(got.Retransmissions, o.Retransmissions) || !same(got.RTI, o.RTI) {
				t.Errorf("%s seed %d: evaluation env %+v, Evaluate %+v", tc.name, o.Seed, got, o)
			}
			distinct[o.Retransmissions+o.TransferTime] = true
		}
		// Not vacuous: the seeds' transfers differ.
		if len(distinct) < 2 {
			t.Errorf("%s: %d runs gave one outcome", tc.name, runs)
		}
	}
	if _, err := NewVariantEvalEnv(base(t), loss, 600_000, time.Minute, VariantCompact, "", -1); err == nil {
		t.Error("a negative frame skip was accepted")
	}
}
