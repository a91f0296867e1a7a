package marlin

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
)

// compactRTTSeeds loads the five training seeds of the compact variant
// with the minimum-RTT feature and strong cloning of the privileged
// teacher, kept in the repository (policy/compact-rtt; docs/marlin.md,
// "The minimum-RTT feature").
func compactRTTSeeds(t *testing.T) []*policy.Policy {
	t.Helper()
	var pols []*policy.Policy
	for s := 1; s <= 5; s++ {
		p, err := policy.Load(filepath.Join("policy", "compact-rtt", fmt.Sprintf("seed%d.policy", s)))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPolicy(p); err != nil {
			t.Fatal(err)
		}
		if rf, _ := PolicyRTTFeature(p); !rf || p.Meta.Seed != uint64(s) || !strings.Contains(p.Meta.Command, "--rtt-feature") {
			t.Fatalf("seed%d.policy: rtt_feature %t, seed %d, command %q", s, rf, p.Meta.Seed, p.Meta.Command)
		}
		pols = append(pols, p)
	}
	return pols
}

// TestCompactRTTMeetsBestVariantGoals checks issue 18's goals for the
// best variant against the five seeds kept in the repository, on the
// issue's protocol (100 transfers per loss level 0-3% and per unseen
// condition, means over the seeds), as docs/marlin.md reports them: no
// baseline both faster and with fewer retransmissions anywhere, the
// lowest RTI of all schemes at every loss level, and at most 0.70 x
// CUBIC's mean transfer time at every loss level and on every unseen
// condition but the switch at 20 s, where no window within the paper's
// 150 KB cap reaches it (TestSwitchAt20sGoalBeyondTheCap).
func TestCompactRTTMeetsBestVariantGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates 5 policies on 8 conditions")
	}
	rep, err := EvaluateAll(context.Background(), EvalConfig{Base: base(t), Policies: compactRTTSeeds(t)}, true)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, g *Goals, timeGoal bool) {
		t.Helper()
		if len(g.DominatedBy) > 0 {
			t.Errorf("%s: dominated by %v", name, g.DominatedBy)
		}
		t.Logf("%s: %.3f x CUBIC's time", name, g.TimeVsCubic)
		if timeGoal && g.TimeVsCubic > 0.70 {
			t.Errorf("%s: %.3f x CUBIC's time, want at most 0.70", name, g.TimeVsCubic)
		}
	}
	check("paper's timeline, 3%", rep.Goals, true)
	if !rep.Goals.LowestRTI {
		t.Error("not the lowest RTI at every loss level")
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
			t.Errorf("loss %g: %.2f s against CUBIC's %.2f s, above 0.70 x", r.Loss, r.TransferTime, cubic[r.Loss])
		}
	}
	if len(rep.Unseen) != 4 {
		t.Fatalf("%d unseen conditions, want 4", len(rep.Unseen))
	}
	for _, c := range rep.Unseen {
		check(c.Name, c.Goals, c.Name != "switch at 20 s")
	}
}
