package sweep

import (
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
