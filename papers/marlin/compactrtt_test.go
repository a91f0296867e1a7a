package marlin

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
)

// loadSeeds loads the five training seeds of a configuration kept in the
// repository (policy/DIR/seed1..5.policy), checking that each records
// the flags the docs name.
func loadSeeds(t *testing.T, dir string, flags ...string) []*policy.Policy {
	t.Helper()
	var pols []*policy.Policy
	for s := 1; s <= 5; s++ {
		p, err := policy.Load(filepath.Join("policy", dir, fmt.Sprintf("seed%d.policy", s)))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPolicy(p); err != nil {
			t.Fatal(err)
		}
		if p.Meta.Seed != uint64(s) {
			t.Fatalf("%s/seed%d.policy: trained with seed %d", dir, s, p.Meta.Seed)
		}
		for _, f := range flags {
			if !strings.Contains(p.Meta.Command, f) {
				t.Fatalf("%s/seed%d.policy: command %q lacks %s", dir, s, p.Meta.Command, f)
			}
		}
		pols = append(pols, p)
	}
	return pols
}

// TestKeptCompactSeedsMeetBestVariantGoals checks issue 18's goals for
// the best variant against the two compact configurations whose seeds
// are kept in the repository (docs/marlin.md, "The minimum-RTT feature"),
// on the protocol (100 transfers per loss level 0-3% and per
// unseen condition, means over the 5 seeds), as the docs report them:
// no baseline both faster and with fewer retransmissions anywhere, the
// lowest RTI of all schemes at every loss level, and at most 0.70 x
// CUBIC's mean transfer time at every loss level and on the unseen
// conditions the docs claim. With the paper's 150 KB window cap the
// switch at 20 s is out of reach (TestSwitchAt20sGoalBeyondTheCap); with
// a 200 KB cap it is met in the mean, by 0.02 s.
func TestKeptCompactSeedsMeetBestVariantGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates 2 x 5 policies on 8 conditions")
	}
	for _, c := range []struct {
		dir    string
		flags  []string
		exempt string // the unseen condition without the time goal
	}{
		{"compact-rtt", []string{"--rtt-feature"}, "switch at 20 s"},
		{"compact-rtt-cap200", []string{"--rtt-feature", "--window-cap 200KB"}, ""},
	} {
		rep, err := EvaluateAll(context.Background(), EvalConfig{Base: base(t), Policies: loadSeeds(t, c.dir, c.flags...)}, true)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, g *Goals, timeGoal bool) {
			t.Helper()
			if len(g.DominatedBy) > 0 {
				t.Errorf("%s, %s: dominated by %v", c.dir, name, g.DominatedBy)
			}
			t.Logf("%s, %s: %.3f x CUBIC's time", c.dir, name, g.TimeVsCubic)
			if timeGoal && g.TimeVsCubic > 0.70 {
				t.Errorf("%s, %s: %.3f x CUBIC's time, want at most 0.70", c.dir, name, g.TimeVsCubic)
			}
		}
		check("paper's timeline, 3%", rep.Goals, true)
		if !rep.Goals.LowestRTI {
			t.Errorf("%s: not the lowest RTI at every loss level", c.dir)
		}
		// The time goal at every loss level, not only the highest.
		cubic := map[float64]float64{}
		for _, r := range rep.Results {
			if r.Scheme == CUBIC {
				cubic[r.Loss] = r.TransferTime
			}
		}
		for _, r := range rep.Results {
			if r.Scheme == Marlin && r.TransferTime > 0.70*cubic[r.Loss] {
				t.Errorf("%s, loss %g: %.2f s against CUBIC's %.2f s, above 0.70 x", c.dir, r.Loss, r.TransferTime, cubic[r.Loss])
			}
		}
		if len(rep.Unseen) != 4 {
			t.Fatalf("%d unseen conditions, want 4", len(rep.Unseen))
		}
		for _, u := range rep.Unseen {
			check(u.Name, u.Goals, u.Name != c.exempt)
		}
	}
}
