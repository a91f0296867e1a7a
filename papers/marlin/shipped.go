package marlin

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/cclab/cclab/learn/rl/policy"
)

// shipped is the trained policy built into cclab (see docs/marlin.md for
// the command and seed that produced it).
//
//go:embed policy/marlin.policy
var shipped []byte

// shippedCompact is the compact variant's shipped policy: the median of
// three training seeds on validation transfers (rl.MedianSeed; see
// docs/marlin.md).
//
//go:embed policy/marlin-compact.policy
var shippedCompact []byte

// ShippedCompactPolicy returns the compact variant's policy built into
// cclab.
func ShippedCompactPolicy() (*policy.Policy, error) {
	p, err := policy.Read(bytes.NewReader(shippedCompact))
	if err != nil {
		return nil, fmt.Errorf("built-in MARLIN compact policy: %w", err)
	}
	return p, nil
}

// ShippedPolicy returns the trained MARLIN policy built into cclab.
func ShippedPolicy() (*policy.Policy, error) {
	p, err := policy.Read(bytes.NewReader(shipped))
	if err != nil {
		return nil, fmt.Errorf("built-in MARLIN policy: %w", err)
	}
	return p, nil
}
