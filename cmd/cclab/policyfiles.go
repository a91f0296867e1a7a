package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
