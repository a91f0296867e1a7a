package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
)

const scenarioPath = "testdata/satcom-like.yaml"

func readScenario(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(scenarioPath)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// testSpec is a 2×2 grid, 5 runs each: 20 runs of a few ms.
func testSpec(t *testing.T) Spec {
	return Spec{
		ScenarioPath: scenarioPath,
		ScenarioData: readScenario(t),
		Sets:         []string{"duration=30s"},
		Grid: []Axis{
			{Key: "cc", Values: []string{"newreno", "fixed"}},
			{Key: "bottleneck.loss.p", Values: []string{"0", "0.02"}},
		},
		Runs: 5,
	}
}

func mustPlan(t *testing.T, spec Spec) *Plan {
	t.Helper()
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t *testing.T, spec Spec, dir string, jobs int) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), mustPlan(t, spec), dir, Options{Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete() {
		t.Fatalf("%d of %d runs done", sum.Done, sum.Total)
	}
	return sum
}

// stripWall blanks wall-time values: the only outputs allowed to differ
// between two executions of one sweep.
func stripWall(t *testing.T, name string, data []byte) string {
	t.Helper()
	switch {
	case strings.HasSuffix(name, ".jsonl"):
		var out []string
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			var r Row
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.Result.WallSeconds = 0
			b, _ := json.Marshal(r)
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	case name == RowsCSVFile:
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		col := -1
		for i, h := range recs[0] {
			if h == "wall_seconds" {
				col = i
			}
		}
		if col < 0 {
			t.Fatalf("%s has no wall_seconds column: %v", name, recs[0])
		}
		var b strings.Builder
		for _, r := range recs {
			r[col] = "-"
			b.WriteString(strings.Join(r, ",") + "\n")
		}
		return b.String()
	}
	return string(data)
}

// outputsEqual compares every output file of two sweep directories,
// ignoring wall times only.
func outputsEqual(t *testing.T, got, want string) {
	t.Helper()
	for _, name := range []string{ManifestFile, RowsFile, RowsCSVFile, AggregateCSVFile, AggregateJSONFile} {
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == ManifestFile {
			// The manifests may differ in shard only; compare the rest.
			var gm, wm Manifest
			json.Unmarshal(g, &gm)
			json.Unmarshal(w, &wm)
			gm.Shard, wm.Shard = Shard{}, Shard{}
			if !reflect.DeepEqual(gm, wm) {
				t.Errorf("%s differs:\ngot  %+v\nwant %+v", name, gm, wm)
			}
			continue
		}
		if name == AggregateCSVFile || name == AggregateJSONFile {
			if !bytes.Equal(g, w) {
				t.Errorf("%s is not byte-identical:\ngot\n%.600s\nwant\n%.600s", name, g, w)
			}
			continue
		}
		if gs, ws := stripWall(t, name, g), stripWall(t, name, w); gs != ws {
			t.Errorf("%s differs beyond wall times:\ngot\n%.600s\nwant\n%.600s", name, gs, ws)
		}
	}
}

func TestParseAxis(t *testing.T) {
	good := []struct {
		in   string
		want Axis
	}{
		{"cc=newreno,cubic", Axis{"cc", []string{"newreno", "cubic"}}},
		{" bottleneck.loss.p = 0, 0.01 ", Axis{"bottleneck.loss.p", []string{"0", "0.01"}}},
		{"bottleneck.loss.p=0:0.03:0.01", Axis{"bottleneck.loss.p", []string{"0", "0.01", "0.02", "0.03"}}},
		{"flows.0.count=1:4:1", Axis{"flows.0.count", []string{"1", "2", "3", "4"}}},
		{"x=0.1:0.35:0.1", Axis{"x", []string{"0.1", "0.2", "0.3"}}},
		{"bottleneck.rate=1Mbps", Axis{"bottleneck.rate", []string{"1Mbps"}}},
	}
	for _, c := range good {
		got, err := ParseAxis(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseAxis(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{"cc", "want KEY=V1,V2"},
		{"=a,b", "want KEY=V1,V2"},
		{"cc=", "value 1 of 1 is empty"},
		{"cc=a,,b", "value 2 of 3 is empty"},
		{"cc=a,b,a", `value "a" appears twice`},
		{"p=0:1:0", "STEP > 0"},
		{"p=1:0:0.1", "FROM <= TO"},
		{"p=0:x:1", `"x" is not a finite number`},
		{"p=0:1:0.00001", "limit 10000"},
	}
	for _, c := range bad {
		_, err := ParseAxis(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseAxis(%q) error = %v; want one containing %q", c.in, err, c.want)
		}
	}
}

func TestReadGridFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grid.yaml")
	os.WriteFile(path, []byte("cc: [newreno, fixed]\nbottleneck.loss.p: [0, 0.010, 1e-3]\nflows.0.count: 1:3:1\nbottleneck.rate: 2Mbps\n"), 0o644)
	got, err := ReadGridFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Axis{
		{"cc", []string{"newreno", "fixed"}},
		{"bottleneck.loss.p", []string{"0", "0.01", "1e-3"}}, // text Set parses
		{"flows.0.count", []string{"1", "2", "3"}},
		{"bottleneck.rate", []string{"2Mbps"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for content, msg := range map[string]string{
		"cc: [a, a]\n":     `value "a" appears twice`,
		"- a\n- b\n":       "want a mapping",
		"cc: [{x: 1}]\n":   "not a scalar",
		"cc: [a\n":         "grid.yaml",
		"{}\n":             "no axes",
		"cc: [a, null]\n":  "empty value",
		"p: 0:1:0.00001\n": "limit",
	} {
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := ReadGridFile(path); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("grid file %q: error %v, want one containing %q", content, err, msg)
		}
	}
}

func TestPlanErrorsNameFlagAndValue(t *testing.T) {
	cases := []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Grid = []Axis{{"bottleneck.los.p", []string{"0.1"}}} }, "--grid bottleneck.los.p=0.1: "},
		{func(s *Spec) { s.Grid = []Axis{{"bottleneck.loss.p", []string{"0", "abc"}}} }, "--grid bottleneck.loss.p=abc: "},
		{func(s *Spec) { s.Grid = []Axis{{"bottleneck.loss.p", []string{"0", "1.5"}}} }, "--grid combination bottleneck.loss.p=1.5: bottleneck.loss.p: must be in"},
		{func(s *Spec) { s.Grid = []Axis{{"cc", []string{"newreno", "nosuchcc"}}} }, "nosuchcc"},
		{func(s *Spec) { s.Grid = []Axis{{"cc", []string{"a"}}, {"cc", []string{"b"}}} }, "--grid cc: the key is given twice"},
		{func(s *Spec) { s.Grid = []Axis{{"cc", nil}} }, "--grid cc: no values"},
		{func(s *Spec) {
			s.Grid = []Axis{{"cc", []string{"newreno"}}, {"fixed.window", []string{"10000"}}}
		}, "--grid fixed.window: applies to no combination: fixed.window: no flow uses fixed"},
		{func(s *Spec) { s.Sets = []string{"bottleneck.rate"} }, `--set "bottleneck.rate": want dotted.path=value`},
		{func(s *Spec) { s.Sets = []string{"bottleneck.rate=fast"} }, "--set bottleneck.rate=fast: bottleneck.rate: "},
		{func(s *Spec) { s.Sets = []string{"bottleneck.queue.max_p=NaN"} }, "--set bottleneck.queue.max_p=NaN: bottleneck.queue.max_p: must be a finite number"},
		{func(s *Spec) { s.Runs = 0 }, "--runs 0"},
		{func(s *Spec) { s.Shard = Shard{3, 2} }, "--shard 3/2"},
		{func(s *Spec) { s.ScenarioData = []byte("name: x\nbottlneck: {}\n") }, `testdata/satcom-like.yaml:2:1: unknown field "bottlneck"`},
	}
	for _, c := range cases {
		spec := testSpec(t)
		c.edit(&spec)
		_, err := NewPlan(spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v; want one containing %q", err, c.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard("2/8"); err != nil || s != (Shard{2, 8}) {
		t.Errorf("ParseShard(2/8) = %v, %v", s, err)
	}
	for _, bad := range []string{"8/8", "-1/3", "1", "a/b", "0/0", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

// TestComboOrderAndSeeds checks the documented enumeration: last axis
// fastest, and run r using seed FIRST+r in every combination.
func TestComboOrderAndSeeds(t *testing.T) {
	spec := testSpec(t)
	first := uint64(100)
	spec.FirstSeed = &first
	p := mustPlan(t, spec)
	wantLabels := []string{
		"cc=newreno, bottleneck.loss.p=0", "cc=newreno, bottleneck.loss.p=0.02",
		"cc=fixed, bottleneck.loss.p=0", "cc=fixed, bottleneck.loss.p=0.02",
	}
	for i, c := range p.Combos {
		if c.Label() != wantLabels[i] {
			t.Errorf("combo %d = %s, want %s", i, c.Label(), wantLabels[i])
		}
	}
	if got := p.Combos[2].Scenario.Flows[0].CC.Name; got != "fixed" {
		t.Errorf("combo 2 cc = %s, want fixed", got)
	}
	if got := p.Combos[1].Scenario.Bottleneck.Loss.P; got != 0.02 {
		t.Errorf("combo 1 loss = %v, want 0.02", got)
	}
	for c := range 4 {
		for r := range 5 {
			if s := p.Scenario(Job{c, r}); s.Seed != 100+uint64(r) {
				t.Errorf("combo %d run %d seed %d, want %d", c, r, s.Seed, 100+r)
			}
		}
	}
	// The plan's scenarios are independent copies.
	p.Scenario(Job{0, 0}).Flows[0].CC.Name = "changed"
	if p.Combos[0].Scenario.Flows[0].CC.Name != "newreno" {
		t.Error("Scenario(job) shares state with the plan")
	}
}

// TestRowIsTheRunResult checks that a sweep row carries exactly what
// experiment.Run gives for that scenario and seed.
func TestRowIsTheRunResult(t *testing.T) {
	spec := testSpec(t)
	dir := t.TempDir()
	p := mustPlan(t, spec)
	if _, err := Run(context.Background(), p, dir, Options{Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	_, rs, err := Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs.Sorted() {
		if r.Combo != 3 {
			continue
		}
		want, _, err := experiment.Run(context.Background(), p.Scenario(Job{r.Combo, r.Run}))
		if err != nil {
			t.Fatal(err)
		}
		want.WallSeconds, r.Result.WallSeconds = 0, 0
		if !reflect.DeepEqual(r.Result, want) {
			g, _ := json.Marshal(r.Result)
			w, _ := json.Marshal(want)
			t.Errorf("run %d:\ngot  %s\nwant %s", r.Run, g, w)
		}
		if r.Params["cc"] != "fixed" || r.Params["bottleneck.loss.p"] != "0.02" || r.Result.Flows[0].CC != "fixed" {
			t.Errorf("run %d params %v, cc %s", r.Run, r.Params, r.Result.Flows[0].CC)
		}
	}
}

func TestJobsDoNotChangeOutputs(t *testing.T) {
	spec := testSpec(t)
	one, four := t.TempDir(), t.TempDir()
	mustRun(t, spec, one, 1)
	mustRun(t, spec, four, 4)
	outputsEqual(t, four, one)
	// The aggregate holds what rows.csv implies: spot-check one mean.
	data, _ := os.ReadFile(filepath.Join(one, AggregateJSONFile))
	var agg struct{ Combinations []ComboStats }
	if err := json.Unmarshal(data, &agg); err != nil {
		t.Fatal(err)
	}
	_, rs, _ := Load(one, nil)
	var sum float64
	for _, r := range rs.Sorted()[:5] {
		sum += float64(r.Result.Flows[0].Retransmissions)
	}
	st, ok := agg.Combinations[0].Stat("retransmissions")
	if !ok || st.N != 5 || *st.Mean != sum/5 {
		t.Errorf("combo 0 retransmissions stat %+v, want n 5 mean %g", st, sum/5)
	}
}

// TestResumeAfterInterrupt cancels a sweep midway, resumes it, and checks
// that no finished run was redone and that the outputs equal an
// uninterrupted sweep's.
func TestResumeAfterInterrupt(t *testing.T) {
	spec := testSpec(t)
	spec.Runs = 10
	whole := t.TempDir()
	mustRun(t, spec, whole, 2)

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := Run(ctx, mustPlan(t, spec), dir, Options{Jobs: 2, Progress: func(p Progress) {
		if p.Done >= 13 {
			cancel()
		}
	}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	if sum.Done < 13 || sum.Done >= sum.Total {
		t.Fatalf("interrupted with %d of %d done; want between 13 and %d", sum.Done, sum.Total, sum.Total-1)
	}
	// What was reported done is on disk.
	_, rs, err := Load(dir, nil)
	if err != nil || rs.Len() != sum.Done {
		t.Fatalf("Load after interrupt: %d rows, %v; want %d", rs.Len(), err, sum.Done)
	}
	first := sum.Done

	var ran atomic.Int64
	sum2, err := Run(context.Background(), mustPlan(t, spec), dir, Options{Jobs: 3, Progress: func(p Progress) {
		ran.Store(int64(p.Done - p.Resumed))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Resumed != first || int(ran.Load()) != sum2.Total-first {
		t.Errorf("resume: %d resumed, %d run; want %d resumed, %d run", sum2.Resumed, ran.Load(), first, sum2.Total-first)
	}
	outputsEqual(t, dir, whole)

	// A third invocation has nothing to do and changes nothing.
	before, _ := os.ReadFile(filepath.Join(dir, RowsFile))
	sum3 := mustRun(t, spec, dir, 2)
	after, _ := os.ReadFile(filepath.Join(dir, RowsFile))
	if sum3.Resumed != sum3.Total || !bytes.Equal(before, after) {
		t.Errorf("complete sweep rerun: resumed %d of %d, rows changed: %v", sum3.Resumed, sum3.Total, !bytes.Equal(before, after))
	}
}

func TestTruncatedLastRowIsRedone(t *testing.T) {
	spec := testSpec(t)
	whole := t.TempDir()
	mustRun(t, spec, whole, 2)

	dir := t.TempDir()
	mustRun(t, spec, dir, 2)
	// Keep 7 complete rows and half of the 8th, as a kill mid-write
	// would.
	data, _ := os.ReadFile(filepath.Join(dir, RowsFile))
	lines := strings.SplitAfter(string(data), "\n")
	cut := strings.Join(lines[:7], "") + lines[7][:len(lines[7])/2]
	os.WriteFile(filepath.Join(dir, RowsFile), []byte(cut), 0o644)

	var warnings []string
	sum, err := Run(context.Background(), mustPlan(t, spec), dir, Options{Jobs: 2, Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 7 {
		t.Errorf("resumed %d rows, want 7", sum.Resumed)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "rows.jsonl:8: dropping an incomplete last line") {
		t.Errorf("warnings %q; want one about rows.jsonl:8", warnings)
	}
	outputsEqual(t, dir, whole)
}

func TestBadOutputDirectories(t *testing.T) {
	spec := testSpec(t)
	p := mustPlan(t, spec)
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)

	run := func(dir string) error {
		_, err := Run(context.Background(), p, dir, Options{})
		return err
	}
	if err := run(filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), "cannot create the output directory") {
		t.Errorf("output under a file: %v", err)
	}
	if err := run(file); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("output is a file: %v", err)
	}

	done := filepath.Join(base, "done")
	mustRun(t, spec, done, 2)
	rows := filepath.Join(done, RowsFile)
	good, _ := os.ReadFile(rows)
	lines := strings.SplitAfter(string(good), "\n")

	cases := []struct {
		name, content, want string
	}{
		{"corrupt middle line", strings.Join(lines[:2], "") + "{\"combo\": 0, garbage\n" + strings.Join(lines[3:], ""), "rows.jsonl:3: corrupt row"},
		{"duplicate row", strings.Join(lines[:3], "") + lines[1], "rows.jsonl:4: combination 0 run 1 is already recorded at line 2"},
		{"wrong seed", strings.Replace(lines[0], `"seed":1,`, `"seed":7,`, 1), "rows.jsonl:1: row does not belong to this sweep: combination 0 run 0 has seed 7, the sweep gives it seed 1"},
		{"wrong params", strings.Replace(lines[0], `"cc":"newreno"`, `"cc":"fixed"`, 1), `rows.jsonl:1: row does not belong to this sweep: combination 0 has cc="fixed"`},
		{"no result", `{"combo":0,"run":0,"seed":1,"params":{"cc":"newreno","bottleneck.loss.p":"0"}}` + "\n", "has no result"},
	}
	for _, c := range cases {
		os.WriteFile(rows, []byte(c.content), 0o644)
		err := run(done)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.name, err, c.want)
		}
		if got, _ := os.ReadFile(rows); string(got) != c.content {
			t.Errorf("%s: the refused rows file was modified", c.name)
		}
	}
	os.WriteFile(rows, good, 0o644)

	// Another sweep definition in the same directory.
	other := testSpec(t)
	other.Grid[1].Values = []string{"0", "0.05"}
	other.Runs = 6
	_, err := Run(context.Background(), mustPlan(t, other), done, Options{})
	if err == nil || !strings.Contains(err.Error(), "holds a different sweep") ||
		!strings.Contains(err.Error(), "--grid: recorded cc=newreno,fixed bottleneck.loss.p=0,0.02, now cc=newreno,fixed bottleneck.loss.p=0,0.05") ||
		!strings.Contains(err.Error(), "--runs: recorded 5, now 6") {
		t.Errorf("different sweep: %v", err)
	}
	// A damaged manifest.
	os.WriteFile(filepath.Join(done, ManifestFile), []byte(`{"format":1,`), 0o644)
	if err := run(done); err == nil || !strings.Contains(err.Error(), "sweep.json: not a sweep manifest") {
		t.Errorf("damaged manifest: %v", err)
	}
	// Rows without a manifest.
	os.Remove(filepath.Join(done, ManifestFile))
	if err := run(done); err == nil || !strings.Contains(err.Error(), "has rows.jsonl but no sweep.json") {
		t.Errorf("rows without manifest: %v", err)
	}
}

// TestShardsMergeIntoTheWholeSweep runs a sweep as three shards and checks
// that they are disjoint, cover every run, and merge into exactly the
// unsharded sweep's outputs.
func TestShardsMergeIntoTheWholeSweep(t *testing.T) {
	spec := testSpec(t)
	whole := t.TempDir()
	mustRun(t, spec, whole, 2)

	base := t.TempDir()
	var dirs []string
	seen := map[[2]int]int{}
	for i := range 3 {
		s := spec
		s.Shard = Shard{i, 3}
		d := filepath.Join(base, fmt.Sprintf("shard-%d", i))
		sum := mustRun(t, s, d, 2)
		if sum.Total != 20/3+btoi(i < 20%3) {
			t.Errorf("shard %d has %d runs", i, sum.Total)
		}
		_, rs, err := Load(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs.Sorted() {
			seen[[2]int{r.Combo, r.Run}]++
		}
		dirs = append(dirs, d)
	}
	if len(seen) != 20 {
		t.Errorf("shards cover %d distinct runs, want 20", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("run %v is in %d shards", k, n)
		}
	}

	out := filepath.Join(base, "merged")
	ms, err := Merge(out, dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ms.Rows != 20 || ms.Shards != 3 {
		t.Errorf("merge summary %+v", ms)
	}
	outputsEqual(t, out, whole)
	// The merged directory is a finished unsharded sweep.
	if sum := mustRun(t, spec, out, 2); sum.Resumed != 20 {
		t.Errorf("resuming the merged sweep ran %d runs", sum.Total-sum.Resumed)
	}

	// Refusals.
	if _, err := Merge(filepath.Join(base, "m2"), dirs[:2], MergeOptions{}); err == nil || !strings.Contains(err.Error(), "missing shard(s) 2/3") {
		t.Errorf("missing shard: %v", err)
	}
	if _, err := Merge(filepath.Join(base, "m3"), []string{dirs[0], dirs[0]}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "are both shard 0/3") {
		t.Errorf("repeated shard: %v", err)
	}
	if _, err := Merge(dirs[0], dirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "is also an input") {
		t.Errorf("output among inputs: %v", err)
	}
	otherSpec := testSpec(t)
	otherSpec.Runs = 4
	otherSpec.Shard = Shard{2, 3}
	other := filepath.Join(base, "other")
	mustRun(t, otherSpec, other, 2)
	if _, err := Merge(filepath.Join(base, "m4"), []string{dirs[0], dirs[1], other}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "hold different sweeps") || !strings.Contains(err.Error(), "--runs: recorded 5, now 4") {
		t.Errorf("shards of different sweeps: %v", err)
	}
	// A shard with a lost row is refused, unless --partial; the partial
	// merge is then completed by resuming it as an unsharded sweep.
	rows := filepath.Join(dirs[1], RowsFile)
	data, _ := os.ReadFile(rows)
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(rows, []byte(strings.Join(lines[1:], "")), 0o644)
	if _, err := Merge(filepath.Join(base, "m5"), dirs, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "has 6 of its 7 runs") {
		t.Errorf("incomplete shard: %v", err)
	}
	partial := filepath.Join(base, "partial")
	var warned []string
	ms, err = Merge(partial, dirs, MergeOptions{Partial: true, Warn: func(s string) { warned = append(warned, s) }})
	if err != nil || ms.Rows != 19 || len(warned) != 1 {
		t.Fatalf("partial merge: %+v, %v, warnings %q", ms, err, warned)
	}
	if sum := mustRun(t, spec, partial, 2); sum.Resumed != 19 {
		t.Errorf("completing the partial merge resumed %d, want 19", sum.Resumed)
	}
	outputsEqual(t, partial, whole)
}

// TestEmptyGrid checks the degenerate sweep: no grid, only seeds.
func TestEmptyGrid(t *testing.T) {
	spec := testSpec(t)
	spec.Grid = nil
	spec.Runs = 3
	dir := t.TempDir()
	mustRun(t, spec, dir, 2)
	data, _ := os.ReadFile(filepath.Join(dir, RowsCSVFile))
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) != 4 || recs[0][0] != "combo" || recs[0][1] != "run" {
		t.Errorf("rows.csv of an empty grid: %v %v", recs, err)
	}
}

// TestPlanChecksReferencedFiles checks that a trace named by a grid value
// is read before the sweep starts, not when its first run fails.
func TestPlanChecksReferencedFiles(t *testing.T) {
	dir := t.TempDir()
	var tr strings.Builder
	for ms := 1; ms <= 100; ms++ {
		fmt.Fprintf(&tr, "%d\n", ms)
	}
	os.WriteFile(filepath.Join(dir, "good.trace"), []byte(tr.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.trace"), []byte("one\ntwo\n"), 0o644)
	data := []byte("name: t\nduration: 2s\nbottleneck: {trace: good.trace, delay: 10ms}\nflows: [{name: f, cc: newreno}]\n")
	path := filepath.Join(dir, "t.yaml")
	spec := Spec{ScenarioPath: path, ScenarioData: data, Runs: 1,
		Grid: []Axis{{"bottleneck.trace", []string{"good.trace", "missing.trace"}}}}
	if _, err := NewPlan(spec); err == nil || !strings.Contains(err.Error(), "--grid combination bottleneck.trace=missing.trace: bottleneck.trace: ") {
		t.Errorf("missing trace: %v", err)
	}
	spec.Grid[0].Values[1] = "bad.trace"
	if _, err := NewPlan(spec); err == nil || !strings.Contains(err.Error(), "bottleneck.trace=bad.trace") {
		t.Errorf("malformed trace: %v", err)
	}
	spec.Grid = nil
	p := mustPlan(t, spec)
	if _, err := Run(context.Background(), p, filepath.Join(dir, "out"), Options{}); err != nil {
		t.Errorf("sweep over a good trace: %v", err)
	}
}

func TestReadGridFileRefusesBombsAndDevices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grid.yaml")
	os.WriteFile(path, []byte("a: &a [1, 2]\ncc: *a\n"), 0o644)
	if _, err := ReadGridFile(path); err == nil || !strings.Contains(err.Error(), "grid.yaml:2:5: YAML aliases") {
		t.Errorf("alias: got %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadGridFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "device") {
			t.Errorf("/dev/zero: got %v", err)
		}
	}
}
