package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Load reads a sweep output directory without modifying it: its manifest
// and its recorded rows (a truncated last line is reported through warn and
// ignored).
func Load(dir string, warn func(string)) (*Manifest, *Rows, error) {
	if warn == nil {
		warn = func(string) {}
	}
	m, err := ReadManifest(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s has no %s: not a sweep output directory", dir, ManifestFile)
		}
		return nil, nil, err
	}
	rs, err := readRows(filepath.Join(dir, RowsFile), m, warn)
	if err != nil {
		return nil, nil, err
	}
	return m, rs, nil
}

// MergeOptions tune Merge.
type MergeOptions struct {
	// Partial merges whatever the shards hold, instead of refusing missing
	// or unfinished shards; the result can then be completed by running
	// the unsharded sweep on it.
	Partial bool
	// Warn receives problems tolerated by Partial and truncated rows.
	Warn func(string)
}

// MergeSummary says what Merge wrote.
type MergeSummary struct {
	Shards, Rows, Total int
}

// Merge joins the output directories of the shards of one sweep into out,
// which then holds exactly what the unsharded sweep would have written
// (apart from wall times): it can be reported on, or resumed. Shards must
// come from the same sweep definition and shard count, each index once.
func Merge(out string, shardDirs []string, opt MergeOptions) (*MergeSummary, error) {
	warn := opt.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if len(shardDirs) == 0 {
		return nil, fmt.Errorf("no shard directories given")
	}
	absOut, _ := filepath.Abs(out)
	var ref *Manifest
	refDir := ""
	seen := map[int]string{}
	merged := map[int]*Row{}
	raw := map[int][]byte{}
	for _, d := range shardDirs {
		if a, _ := filepath.Abs(d); a == absOut {
			return nil, fmt.Errorf("the output %s is also an input; merge into a new directory", out)
		}
		m, rs, err := Load(d, warn)
		if err != nil {
			return nil, err
		}
		if ref == nil {
			ref, refDir = m, d
		} else if m.Hash != ref.Hash {
			return nil, fmt.Errorf("%s and %s hold different sweeps (definition hash %s vs %s): %v", refDir, d, ref.Hash, m.Hash, describeDiff(ref, m))
		} else if m.Shard.Count != ref.Shard.Count {
			return nil, fmt.Errorf("%s is shard %s but %s is shard %s: all shards must split the sweep the same way", d, m.Shard, refDir, ref.Shard)
		}
		if prev, dup := seen[m.Shard.Index]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %s", prev, d, m.Shard)
		}
		seen[m.Shard.Index] = d
		if rs.Len() < m.ShardJobs() {
			msg := fmt.Sprintf("%s (shard %s) has %d of its %d runs; resume it with the same cclab sweep command", d, m.Shard, rs.Len(), m.ShardJobs())
			if !opt.Partial {
				return nil, fmt.Errorf("%s, or merge with --partial", msg)
			}
			warn(msg)
		}
		for j, r := range rs.rows {
			merged[j] = r
			raw[j] = rs.raw[j]
		}
	}
	var missing []string
	for i := range ref.Shard.Count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, ref.Shard.Count))
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("missing shard(s) %s", strings.Join(missing, ", "))
		if !opt.Partial {
			return nil, fmt.Errorf("%s; merge with --partial to join the rest", msg)
		}
		warn(msg)
	}

	m := *ref
	m.Shard = Shard{0, 1}
	m.Hash = m.hash()
	rs := newRows(&m)
	rs.rows, rs.raw = merged, raw
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the output directory: %w", err)
	}
	unlock, err := lockDir(out)
	if err != nil {
		return nil, err
	}
	defer unlock()
	removeTemps(out)
	if have, err := ReadManifest(out); err == nil {
		if err := checkSame(out, have, &m); err != nil {
			return nil, err
		}
		// Keep rows already merged (or resumed) there: merging again must
		// never lose a row.
		_, old, err := Load(out, warn)
		if err != nil {
			return nil, err
		}
		for j, r := range old.rows {
			if _, ok := merged[j]; !ok {
				merged[j], raw[j] = r, old.raw[j]
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := writeManifest(out, &m); err != nil {
		return nil, err
	}
	if err := writeOutputs(out, &m, rs); err != nil {
		return nil, err
	}
	return &MergeSummary{Shards: len(seen), Rows: rs.Len(), Total: m.Jobs()}, nil
}

// describeDiff names the fields in which two manifests differ.
func describeDiff(a, b *Manifest) string {
	c := *b
	c.Shard = a.Shard
	if err := checkSame("", a, &c); err != nil {
		s := err.Error()
		s = strings.TrimPrefix(s, " holds a different sweep: ")
		if i := strings.LastIndex(s, "; resume"); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return "unknown difference"
}
