package datacenter

import (
	"bytes"
	"embed"
	"errors"
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
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	data, rerr := shipped.ReadFile("policy/" + path.Base(file))
	if rerr != nil {
		return nil, err
	}
	return policy.Read(bytes.NewReader(data))
}
