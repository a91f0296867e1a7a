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

// ShippedPolicy returns the trained MARLIN policy built into cclab.
func ShippedPolicy() (*policy.Policy, error) {
	p, err := policy.Read(bytes.NewReader(shipped))
	if err != nil {
		return nil, fmt.Errorf("built-in MARLIN policy: %w", err)
	}
	return p, nil
}
