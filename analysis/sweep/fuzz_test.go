package sweep

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzReadRows feeds rows.jsonl contents to the reader a resume uses: it
// must accept them or refuse them with a message naming the file and line,
// never panic, and never hold a row that does not belong to the sweep.
func FuzzReadRows(f *testing.F) {
	m := &Manifest{Format: Format, Runs: 2, Combinations: 2, Shard: Shard{0, 1},
		Grid: []Axis{{Key: "cc", Values: []string{"newreno", "cubic"}}}, FirstSeed: 1}
	good := `{"combo":0,"run":0,"seed":1,"params":{"cc":"newreno"},"result":{"scenario":"x","seed":1}}` + "\n"
	f.Add(good)
	f.Add(good + good)
	// The audit's bad inputs: two interleaved writers, a cut last line, a
	// row of another sweep, garbage, an overlong line.
	f.Add(good[:40] + good)
	f.Add(good + good[:30])
	f.Add(`{"combo":5,"run":0,"seed":1,"params":{},"result":{}}` + "\n")
	f.Add(`{"combo":0,"run":1,"seed":99,"params":{"cc":"newreno"},"result":{}}` + "\n")
	f.Add("not json\n")
	f.Add(strings.Repeat("x", 1000) + "\n")
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(t.TempDir(), RowsFile)
		os.WriteFile(path, []byte(data), 0o644)
		rs, err := readRows(path, m, func(string) {})
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if rs.end > int64(len(data)) {
			t.Fatalf("end %d beyond the data (%d bytes)", rs.end, len(data))
		}
		for j, r := range rs.rows {
			if j != r.Combo*m.Runs+r.Run || r.Combo >= m.Combinations || r.Run >= m.Runs || r.Result == nil {
				t.Fatalf("row %d accepted: %+v", j, r)
			}
		}
	})
}

// FuzzParseAxis: --grid never panics; an axis it accepts has a key and
// distinct, non-empty values, a range no more than maxRangeValues of them,
// each a finite number within FROM and TO.
func FuzzParseAxis(f *testing.F) {
	for _, s := range []string{"cc=newreno,cubic", "bottleneck.loss.p=0:0.05:0.01", "x=1e15:1.000000000000005e15:1", "x=-1e308:1e308:1e308",
		"x=0:1:0.0001", "x=1:0:1", "x=a,,b", "=1", "x=1:2:3:4", "x= 1 , 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		a, err := ParseAxis(spec)
		if err != nil {
			return
		}
		if a.Key == "" || a.Key != strings.TrimSpace(a.Key) || len(a.Values) == 0 {
			t.Fatalf("%q: axis %+v", spec, a)
		}
		seen := map[string]bool{}
		for _, v := range a.Values {
			if v == "" || seen[v] {
				t.Fatalf("%q: value %q empty or repeated", spec, v)
			}
			seen[v] = true
		}
		_, list, _ := strings.Cut(spec, "=")
		if strings.Count(list, ":") != 2 || strings.Contains(list, ",") {
			return
		}
		if len(a.Values) > maxRangeValues {
			t.Fatalf("%q: %d values", spec, len(a.Values))
		}
		parts := strings.Split(list, ":")
		from, _ := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
		to, _ := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
		for _, v := range a.Values {
			x, err := strconv.ParseFloat(v, 64)
			// Values are rounded to 12 significant digits.
			if err != nil || math.IsInf(x, 0) || x < from-math.Abs(from)*1e-11 || x > to+math.Abs(to)*1e-11 {
				t.Fatalf("%q: value %q outside [%v, %v]", spec, v, from, to)
			}
		}
	})
}

// FuzzParseShard: --shard never panics, accepts only 0 <= I < N, and
// prints back what it read.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/8", "7/8", "8/8", "-1/8", "0/0", " 3 / 4 ", "1/9223372036854775807", "x/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q: shard %+v", s, sh)
		}
		if back, err := ParseShard(sh.String()); err != nil || back != sh {
			t.Fatalf("%q: %v prints as %q, read back as %+v, %v", s, sh, sh.String(), back, err)
		}
	})
}

// FuzzReadGridFile: a --grid-file never crashes the command (the YAML
// library's own panics become errors), an error names the file, and the
// axes it accepts have keys and distinct, non-empty values.
func FuzzReadGridFile(f *testing.F) {
	for _, s := range []string{"cc: [newreno, cubic]\nbottleneck.loss.p: [0, 0.01, 0.03]\n", "bottleneck.loss.p: 0:0.05:0.01\n", "cc: [a, a]\n",
		"- 1\n- 2\n", "a: {b: c}\n", "&a [*a]\n", "", "a: [" + strings.Repeat("[", 60) + "\n", "1: [x]\n", "a: 1:0:1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(t.TempDir(), "grid.yaml")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		axes, err := ReadGridFile(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, a := range axes {
			if a.check() != nil {
				t.Fatalf("%q: axis %+v accepted", data, a)
			}
		}
	})
}

// FuzzReadManifest feeds manifest.json contents to the loader that a
// resume, a merge and a report use, once as they are and once with the
// hash recomputed (so that the checks behind it are reached too, as a
// manifest edited by hand and re-hashed would reach them): it must refuse
// them with the file's name or return a manifest whose counts are sane,
// never panic.
func FuzzReadManifest(f *testing.F) {
	m := &Manifest{Format: Format, Scenario: "dumbbell", Runs: 2, Combinations: 2, Shard: Shard{0, 1},
		Grid: []Axis{{Key: "cc", Values: []string{"newreno", "cubic"}}}, FirstSeed: 1}
	m.Hash = m.hash()
	good, err := json.Marshal(m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(strings.Replace(string(good), `"runs":2`, `"runs":4611686018427387904`, 1)))
	f.Add([]byte(strings.Replace(string(good), `"combinations":2`, `"combinations":-2`, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(data []byte) {
			dir := t.TempDir()
			path := filepath.Join(dir, ManifestFile)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, RowsFile), nil, 0o644)
			got, rs, err := Load(dir, nil)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("error without the file: %v", err)
				}
				return
			}
			if got.Runs < 1 || got.Combinations < 1 || got.Jobs() < got.Runs || got.Jobs() < got.Combinations ||
				got.Jobs()/got.Runs != got.Combinations || got.ShardJobs() < 0 || got.ShardJobs() > got.Jobs() || len(rs.rows) != 0 {
				t.Fatalf("accepted a manifest with %d runs of %d combinations (%d jobs, %d in its shard)",
					got.Runs, got.Combinations, got.Jobs(), got.ShardJobs())
			}
		}
		check(data)
		var edited Manifest
		if json.Unmarshal(data, &edited) == nil {
			edited.Hash = edited.hash()
			if b, err := json.Marshal(&edited); err == nil {
				check(b)
			}
		}
	})
}
