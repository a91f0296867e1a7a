package marlin

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/scenarios"
)

// seedCopy is the shipped compact policy as if trained with another seed;
// scale != 1 scales its weights so it acts differently.
func seedCopy(t *testing.T, seed uint64, scale float32) *policy.Policy {
	t.Helper()
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	p.Meta.Seed = seed
	p.Meta.Extra = maps.Clone(p.Meta.Extra)
	for i := range p.Net.Params {
		p.Net.Params[i] *= scale
	}
	return p
}

// TestEnsembleEvaluates runs ensembles through a file and Evaluate. Two
// members with the same weights act exactly as one of them ((a+a)/2 = a in
// floating point), so their transfers must be byte-identical to that
// member's; two different members must give transfers that differ from
// both members' (the mean action is neither).
func TestEnsembleEvaluates(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	run := func(p *policy.Policy) []Outcome {
		t.Helper()
		_, out, err := Evaluate(context.Background(), EvalConfig{Base: base, Runs: 2, Losses: []float64{0.03}, Schemes: []Scheme{Marlin}, Policy: p, Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	roundTrip := func(p *policy.Policy) *policy.Policy {
		t.Helper()
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		q, err := policy.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPolicy(q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	a, b, c := seedCopy(t, 11, 1), seedCopy(t, 12, 1), seedCopy(t, 13, 0.3)
	same, err := Ensemble([]*policy.Policy{a, b}, "test")
	if err != nil {
		t.Fatal(err)
	}
	same = roundTrip(same)
	if PolicyVariant(same) != VariantCompact || same.Meta.Extra[policy.ExtraSeeds] != "11,12" {
		t.Fatalf("ensemble meta %+v", same.Meta)
	}
	want, got := run(a), run(same)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ensemble of two equal members: run %d %+v, the member's %+v", i, got[i], want[i])
		}
	}
	mixed, err := Ensemble([]*policy.Policy{a, c}, "test")
	if err != nil {
		t.Fatal(err)
	}
	m, oc := run(roundTrip(mixed)), run(c)
	for i := range m {
		if m[i].TransferTime == want[i].TransferTime || m[i].TransferTime == oc[i].TransferTime {
			t.Fatalf("run %d: the ensemble of two different members took %.3f s, member 1 %.3f s, member 2 %.3f s: want a third time",
				i, m[i].TransferTime, want[i].TransferTime, oc[i].TransferTime)
		}
	}
}

func TestEnsembleRefusesMismatchedMembers(t *testing.T) {
	paper, err := ShippedPolicy()
	if err != nil {
		t.Fatal(err)
	}
	span := seedCopy(t, 14, 1)
	span.Meta.Extra["bdp_span"] = "3"
	wide := seedCopy(t, 16, 1)
	wide.Meta.Extra["window_cap"] = "200KB"
	a := seedCopy(t, 11, 1)
	e, err := Ensemble([]*policy.Policy{a, seedCopy(t, 12, 1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	// A compact policy whose environment differs only by the minimum-RTT
	// feature (36 inputs): sound alone, not beside a.
	rtt := tinyCompactPolicy(t, 15, func(c *TrainConfig) { c.RTTFeature = true })
	for _, c := range []struct {
		name    string
		members []*policy.Policy
		want    string
	}{
		{"one", []*policy.Policy{a}, "at least 2 policies, got 1"},
		{"same seed", []*policy.Policy{a, seedCopy(t, 11, 0.5)}, "policies 1 and 2 were both trained with seed 11"},
		{"other variant", []*policy.Policy{a, paper}, "policy 2 runs in variant paper"},
		{"other span", []*policy.Policy{a, span}, "BDP span 3"},
		{"RTT feature", []*policy.Policy{a, rtt}, "minimum-RTT feature true"},
		{"window cap", []*policy.Policy{a, wide}, "window cap 200KB"},
		{"nested", []*policy.Policy{e, a}, "policy 1 is an ensemble"},
	} {
		if _, err := Ensemble(c.members, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
