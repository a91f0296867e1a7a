package datacenter

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/cclab/cclab/learn/rl/policy"
)

// shipped holds the trained policies built into cclab.
//
//go:embed policy/*.policy
var shipped embed.FS

// LoadPolicy loads a policy file; a path that does not exist on disk but
// names one of the shipped policies (e.g. "papers/datacenter/policy/ppo.policy") loads
// the copy built into cclab, so evaluation works from any directory.
func LoadPolicy(file string) (*policy.Policy, error) {
	p, err := policy.Load(file)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		data, rerr := shipped.ReadFile("policy/" + path.Base(file))
		if rerr != nil {
			return nil, err
		}
		p, err = policy.Read(bytes.NewReader(data))
	}
	if err != nil {
		return nil, err
	}
	if err := p.Meta.CheckEnv("dcrl-", "the data-centre paper"); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}
