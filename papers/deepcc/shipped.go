package deepcc

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/cclab/cclab/learn/rl/policy"
)

// shipped is the trained policy built into cclab (docs/deepcc.md gives the
// command and seed that produced it).
//
//go:embed policy/deepcc.policy
var shipped []byte

// ShippedPolicyPath is where the built-in policy lives in the repository.
const ShippedPolicyPath = "papers/deepcc/policy/deepcc.policy"

// LoadPolicy loads a policy file; the repository path of the shipped policy
// loads the copy built into cclab when no such file exists on disk, so
// evaluation works from any directory.
func LoadPolicy(file string) (*policy.Policy, error) {
	p, err := policy.Load(file)
	if err != nil && errors.Is(err, fs.ErrNotExist) && path.Clean(file) == ShippedPolicyPath {
		p, err = policy.Read(bytes.NewReader(shipped))
	}
	if err != nil {
		return nil, err
	}
	if err := p.Meta.CheckEnv("deepcc", "DeepCC"); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}
