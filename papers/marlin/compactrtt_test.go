package marlin

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
)

// loadSeeds loads the n training seeds of a configuration kept in the
// repository (policy/DIR/seed1..n.policy), checking that each records
// the flags the docs name.
func loadSeeds(t *testing.T, dir string, n int, flags ...string) []*policy.Policy {
	t.Helper()
	var pols []*policy.Policy
	for s := 1; s <= n; s++ {
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
// CUBIC's mean transfer time at every loss level, with the background x1.5
// and with the switch back. With the switch at 5 s, against CUBIC on Linux
// 6.18's recovery (3.2 s faster there than on the transport before it),
// the goal is 16.71 s, 0.005 s above the ideal sender, and neither
// configuration meets it (0.757 and 0.739); with the paper's 150 KB window
// cap the switch at 20 s is out of reach (TestSwitchAt20sGoalBeyondTheCap),
// and with a 200 KB cap it misses by 0.003 (it was met by 0.02 s before),
// as the privileged sender with that cap now does
// (TestSwitchAt20sGoalAtTheEdgeOfWindowControl).
func TestKeptCompactSeedsMeetBestVariantGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates 2 x 5 policies on 8 conditions")
	}
	for _, c := range []struct {
		dir   string
		flags []string
	}{
		{"compact-rtt", []string{"--rtt-feature"}},
		{"compact-rtt-cap200", []string{"--rtt-feature", "--window-cap 200KB"}},
	} {
		rep, err := EvaluateAll(context.Background(), EvalConfig{Base: base(t), Policies: loadSeeds(t, c.dir, 5, c.flags...)}, true)
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
			check(u.Name, u.Goals, u.Name != "switch at 5 s" && u.Name != "switch at 20 s")
		}
	}
}

// TestKeptRandomizedSeedsUndominated checks what docs/marlin.md says of
// the configuration trained over randomised link delays, rates and queue
// limits, whose 5 seeds are kept in the repository: on the paper's
// timeline it is the fastest scheme at every loss level, dominated by no
// baseline, with the lowest RTI; on every unseen and held-out condition
// (100 transfers at 3% UHF loss, means over the seeds) it is the fastest
// scheme and dominated by none, and within 0.70 x CUBIC's time with the
// switch back (not with the switch at 5 s, 0.745 against CUBIC on Linux
// 6.18's recovery, nor the switch at 20 s, beyond the paper's window cap,
// nor the background x1.5).
func TestKeptRandomizedSeedsUndominated(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates 5 policies on 20 conditions")
	}
	pols := loadSeeds(t, "compact-rtt-randomized", 5, "--rtt-feature", "--delay-range 0.5,1.5", "--rate-range 0.5,2", "--queue-range 0.5,2")
	rep, err := EvaluateAll(context.Background(), EvalConfig{Base: base(t), Policies: pols, HeldOut: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	fastest := func(name string, rows []Row) {
		t.Helper()
		m := map[float64]float64{}
		for _, r := range rows {
			if r.Scheme == Marlin {
				m[r.Loss] = r.TransferTime
			}
		}
		for _, r := range rows {
			if IsBaseline(r.Scheme) && r.TransferTime <= m[r.Loss] {
				t.Errorf("%s, loss %g: %s takes %.2f s, the learned policy %.2f s", name, r.Loss, r.Scheme, r.TransferTime, m[r.Loss])
			}
		}
	}
	fastest("paper's timeline", rep.Results)
	if len(rep.Goals.DominatedBy) > 0 || !rep.Goals.LowestRTI {
		t.Errorf("paper's timeline: dominated by %v, lowest RTI %v", rep.Goals.DominatedBy, rep.Goals.LowestRTI)
	}
	if n := len(UnseenVariants()) + len(HeldOutVariants()); len(rep.Unseen) != n {
		t.Fatalf("%d conditions, want %d", len(rep.Unseen), n)
	}
	for _, u := range rep.Unseen {
		fastest(u.Name, u.Results)
		if len(u.Goals.DominatedBy) > 0 {
			t.Errorf("%s: dominated by %v", u.Name, u.Goals.DominatedBy)
		}
		t.Logf("%s: %.3f x CUBIC's time", u.Name, u.Goals.TimeVsCubic)
		if u.Name == "UHF back to SATCOM at 16 s" && u.Goals.TimeVsCubic > 0.70 {
			t.Errorf("%s: %.3f x CUBIC's time, want at most 0.70", u.Name, u.Goals.TimeVsCubic)
		}
	}
}
