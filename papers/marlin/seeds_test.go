package marlin

import (
	"context"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/scenarios"
)

// TestEvaluateAcrossPolicies checks the over-seeds aggregation: two copies
// of one policy must give that policy's own mean with no spread across
// policies, and one row per policy in PerPolicy.
func TestEvaluateAcrossPolicies(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ShippedPolicy()
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Base: base, Runs: 2, Losses: []float64{0.03}, Schemes: []Scheme{Marlin}}
	one := cfg
	one.Policy = p
	single, _, err := Evaluate(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	two := cfg
	two.Policies = []*policy.Policy{p, p.Clone()}
	rows, out, err := Evaluate(context.Background(), two)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Policies != 2 || rows[0].Runs != 4 {
		t.Fatalf("rows %+v, want one marlin row over 2 policies and 4 runs", rows)
	}
	if rows[0].TransferTime != single[0].TransferTime || rows[0].TransferTimeCI != 0 {
		t.Errorf("two copies: %.3f s ± %.3f, want %.3f ± 0", rows[0].TransferTime, rows[0].TransferTimeCI, single[0].TransferTime)
	}
	per := PerPolicy(out)
	if len(per) != 2 || per[1][0].TransferTime != single[0].TransferTime {
		t.Errorf("PerPolicy = %+v", per)
	}
	sel, err := SelectPolicy(context.Background(), cfg, two.Policies, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Index != 0 || len(sel.Scores) != 2 || sel.Scores[0] != sel.Scores[1] || sel.Rule != rl.MedianRule {
		t.Errorf("SelectPolicy of two copies = %+v; want index 0, equal scores, rule %q", sel, rl.MedianRule)
	}
}

// TestSelectPolicyRefusesOverlap: validation transfers (seeds from
// ValidationSeed+1) that the evaluation also runs are refused.
func TestSelectPolicyRefusesOverlap(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Base: base, Runs: 10, Seed: ValidationSeed - 5, Losses: []float64{0.03}}
	if _, err := SelectPolicy(context.Background(), cfg, nil, 3); err == nil || !strings.Contains(err.Error(), "1000001") {
		t.Errorf("evaluation seeds 999996-1000005 against validation 1000001-1000003 gave %v, want an error naming seed 1000001", err)
	}
}
