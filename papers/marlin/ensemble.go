package marlin

import (
	"fmt"

	"github.com/cclab/cclab/learn/rl/policy"
)

// Ensemble makes one MARLIN policy of independently trained ones (ours,
// not the paper's): it acts with the mean of its members' actions (for the
// compact variant, the mean of a, so the geometric mean of the members'
// windows), see policy.NewEnsemble. The members must be policies Evaluate
// would run in the same environment: the same variant, action, frame-skip,
// filter windows and BDP span; the first that differs from the first
// member is named. Members trained with the same seed are refused: an
// ensemble of one run's copies is not an ensemble of seeds.
func Ensemble(members []*policy.Policy, command string) (*policy.Policy, error) {
	if len(members) < 2 {
		return nil, fmt.Errorf("marlin: an ensemble needs at least 2 policies, got %d", len(members))
	}
	var want EnvConfig
	seeds := map[uint64]int{}
	for i, p := range members {
		if p.Members != nil {
			return nil, fmt.Errorf("marlin: policy %d is an ensemble; list its members instead", i+1)
		}
		if err := CheckPolicy(p); err != nil {
			return nil, fmt.Errorf("marlin: policy %d: %w", i+1, err)
		}
		c, err := policyEnvConfig(p)
		if err != nil {
			return nil, fmt.Errorf("marlin: policy %d: %w", i+1, err)
		}
		if i == 0 {
			want = c
		} else if c != want || PolicyFrameSkip(p) != PolicyFrameSkip(members[0]) {
			return nil, fmt.Errorf("marlin: policy %d runs in %s with frame-skip %d, policy 1 in %s with frame-skip %d: an ensemble's members must share their environment",
				i+1, describeEnv(c), PolicyFrameSkip(p), describeEnv(want), PolicyFrameSkip(members[0]))
		}
		if j, dup := seeds[p.Meta.Seed]; dup {
			return nil, fmt.Errorf("marlin: policies %d and %d were both trained with seed %d; an ensemble is of independently trained seeds", j, i+1, p.Meta.Seed)
		}
		seeds[p.Meta.Seed] = i + 1
	}
	e, err := policy.NewEnsemble(members, command)
	if err != nil {
		return nil, fmt.Errorf("marlin: %w", err)
	}
	// The ensemble's Extra keeps the entries its members share, which
	// include everything policyEnvConfig reads; check it, so a default
	// standing in for a dropped entry cannot change the environment.
	c, err := policyEnvConfig(e)
	if err != nil {
		return nil, fmt.Errorf("marlin: the ensemble's recorded environment: %w", err)
	}
	if c != want || PolicyFrameSkip(e) != PolicyFrameSkip(members[0]) {
		return nil, fmt.Errorf("marlin: the ensemble's recorded environment (%s) differs from its members' (%s)", describeEnv(c), describeEnv(want))
	}
	return e, nil
}

func describeEnv(c EnvConfig) string {
	return fmt.Sprintf("variant %s, action %s, BDP span %g, filter windows %v/%v, minimum-RTT feature %t, window cap %v", c.Variant, c.Action, c.BDPSpan, c.CapacityWindow, c.MinRTTWindow, c.RTTFeature, c.windowCap())
}
