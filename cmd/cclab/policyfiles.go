package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/cclab/cclab/learn/rl/policy"
)

// policyFiles expands a --policy value: comma-separated entries, each a
// policy file or a directory standing for its *.policy files in name
// order (the seeds a configuration's training runs left side by side,
// as papers/marlin/policy/compact-rtt keeps them). A directory without
// one is an error naming it; an entry that is not a directory is left to
// the loader, so built-in names and missing files fail there.
func policyFiles(spec string) ([]string, error) {
	var out []string
	for _, e := range splitList(spec) {
		if st, err := os.Stat(e); err != nil || !st.IsDir() {
			out = append(out, e)
			continue
		}
		m, err := filepath.Glob(filepath.Join(e, "*.policy"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("directory %s holds no *.policy file", e)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// distinctSeeds refuses two policies (files[i] holds pols[i]) trained with
// the same seed where they stand for independent seeds: the same file
// given twice would be counted as two seeds, its spread as zero.
func distinctSeeds(flag string, files []string, pols []*policy.Policy) error {
	seen := map[uint64]string{}
	for i, p := range pols {
		if prev, dup := seen[p.Meta.Seed]; dup {
			return usagef("%s: %s and %s were both trained with seed %d; independently trained policies need distinct training seeds", flag, prev, files[i], p.Meta.Seed)
		}
		seen[p.Meta.Seed] = files[i]
	}
	return nil
}
