package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/analysis/sweep"
)

func TestReportOnSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	code, _, stderr := mainIn(context.Background(), "sweep", satcomLike, "--grid", "cc=newreno,fixed", "--grid", "bottleneck.loss.p=0,0.02",
		"--runs", "4", "--set", "duration=25s", "--out", dir)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := mainIn(context.Background(), "report", dir)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, filepath.Join(dir, "report.html")) {
		t.Errorf("stdout %q does not name the report", stdout)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	stems := []string{"bars-goodput_mbps", "bars-fct_s", "bars-qdelay_p95_ms", "bars-retransmissions", "bars-rti",
		"cdf-goodput_mbps", "cdf-fct_s", "cdf-rtt_p95_ms", "cdf-qdelay_p95_ms", "pantheon", "timeseries-run0"}
	for _, stem := range stems {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(dir, stem+ext)); err != nil || st.Size() == 0 {
				t.Errorf("%s%s: %v", stem, ext, err)
			}
		}
	}
	// Every saved figure is embedded; nothing is linked from outside.
	if n := bytes.Count(html, []byte(`<img src="data:image/`)); n < len(stems) {
		t.Errorf("report embeds %d images, want at least %d", n, len(stems))
	}
	if bytes.Contains(html, []byte(`src="http`)) || bytes.Contains(html, []byte(`<script`)) {
		t.Error("report is not self-contained")
	}
	for _, want := range []string{"cc=newreno, bottleneck.loss.p=0.02", "Recorded: 16 of 16 runs", "Pantheon-style", "name: satcom-like"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Run 0 re-simulated for the time series reproduces the recorded rows.
	if bytes.Contains(html, []byte("differs from the recorded row")) {
		t.Error("re-simulated run 0 differs from the sweep's row")
	}
}

func TestReportOnRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := mainIn(context.Background(), "run", satcomLike, "--out", dir); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := mainIn(context.Background(), "report", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for _, stem := range []string{"dashboard", "cdf-rtt", "cdf-throughput", "background"} {
		if _, err := os.Stat(filepath.Join(dir, stem+".svg")); err != nil {
			t.Errorf("missing %s.svg: %v", stem, err)
		}
	}
	for _, want := range []string{"Measured flows", "Background traffic", "chat", "Scenario as run"} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("run report lacks %q", want)
		}
	}
	// The same directory gives the same report, byte for byte.
	if code, _, stderr := mainIn(context.Background(), "report", dir); code != 0 {
		t.Fatalf("second report: exit %d: %s", code, stderr)
	}
	second, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !bytes.Equal(first, second) {
		t.Error("two reports of one directory differ")
	}

	// A damaged time series names its file and line.
	flows := filepath.Join(dir, "flows.csv")
	data, _ := os.ReadFile(flows)
	lines := strings.SplitAfter(string(data), "\n")
	lines[3] = strings.Replace(lines[3], ",", ",x", 5)
	os.WriteFile(flows, []byte(strings.Join(lines, "")), 0o644)
	code, _, stderr := mainIn(context.Background(), "report", dir)
	if code != 1 || !strings.Contains(stderr, "flows.csv:4: column") {
		t.Errorf("damaged flows.csv: exit %d, %s", code, stderr)
	}
}

func TestReportBadInput(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	os.WriteFile(file, nil, 0o644)
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	// A sweep directory whose only row was cut short.
	noRows := filepath.Join(tmp, "norows")
	if code, _, stderr := mainIn(context.Background(), "sweep", satcomLike, "--runs", "1", "--out", noRows); code != 0 {
		t.Fatal(stderr)
	}
	rows := filepath.Join(noRows, sweep.RowsFile)
	data, _ := os.ReadFile(rows)
	os.WriteFile(rows, data[:len(data)/2], 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, 2, "want exactly one directory"},
		{[]string{"report", file}, 2, "is not a directory"},
		{[]string{"report", filepath.Join(tmp, "nope")}, 1, "no such file"},
		{[]string{"report", empty}, 1, "holds neither sweep.json (cclab sweep --out) nor summary.json (cclab run --out)"},
		{[]string{"report", noRows}, 1, "the sweep has no finished runs yet"},
	}
	for _, c := range cases {
		code, _, stderr := mainIn(context.Background(), c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// The truncated row was reported, and the report left the file alone.
	_, _, stderr := mainIn(context.Background(), "report", noRows)
	if !strings.Contains(stderr, "dropping an incomplete last line") {
		t.Errorf("no warning about the truncated row: %s", stderr)
	}
	if got, _ := os.ReadFile(rows); len(got) != len(data)/2 {
		t.Error("report modified rows.jsonl")
	}
}

// TestReportRefusesTuneDir: a cclab tune --out directory has a
// summary.json too; report refuses it, saying what it is, and leaves
// tune's report.html alone instead of overwriting it with an empty run.
func TestReportRefusesTuneDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tune")
	code, _, stderr := mainIn(context.Background(), "tune", "dumbbell", "--set", "duration=2s", "--cc", "vegas", "--param", "vegas.alpha=1:10:int",
		"--objective", "max:goodput_mbps", "--pop", "4", "--gens", "1", "--progress", "none", "--out", dir)
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := mainIn(context.Background(), "report", dir)
	if code != 1 || stdout != "" {
		t.Errorf("report: exit %d, stdout %q; want exit 1 and nothing written", code, stdout)
	}
	for _, want := range []string{"holds a cclab tune output", filepath.Join(dir, "summary.json"), "report.html is tune's own", "cclab run --out and cclab sweep --out"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "report.html")); !bytes.Equal(before, after) {
		t.Error("report overwrote tune's report.html")
	}
}

// TestReportSweepFromAnotherDirectory: sweep.json records the scenario
// path relative to where cclab sweep ran, and the scenario's trace is
// relative to the scenario. Reporting from elsewhere still draws the time
// series when the sweep directory lies under that origin, and says on
// stderr why it cannot when it does not.
func TestReportSweepFromAnotherDirectory(t *testing.T) {
	root := t.TempDir()
	var trace strings.Builder
	for ms := 1; ms <= 10; ms++ {
		fmt.Fprintf(&trace, "%d\n", ms)
	}
	files := map[string]string{
		"scn/link.yaml":     "name: traced\nseed: 1\nduration: 2s\nbottleneck:\n  trace: ../traces/link.trace\n  delay: 20ms\n  queue: {limit: 50}\nflows:\n  - {name: f, cc: cubic}\n",
		"traces/link.trace": trace.String(),
	}
	for name, data := range files {
		path := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inside := filepath.Join(root, "results", "s")
	outside := filepath.Join(t.TempDir(), "s")
	t.Chdir(root)
	for _, out := range []string{"results/s", outside} {
		if code, _, stderr := mainIn(context.Background(), "sweep", "scn/link.yaml", "--grid", "cc=cubic,vegas", "--runs", "1", "--out", out); code != 0 {
			t.Fatalf("sweep --out %s: exit %d: %s", out, code, stderr)
		}
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := mainIn(context.Background(), "report", inside)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "and 11 plot(s)") {
		t.Errorf("report of a sweep under its origin: exit %d, stdout %q, stderr %q; want 11 plots and no warning", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(inside, "timeseries-run0.png")); err != nil {
		t.Error(err)
	}
	code, stdout, stderr = mainIn(context.Background(), "report", outside)
	if code != 0 || !strings.Contains(stdout, "and 10 plot(s)") {
		t.Errorf("report of a sweep outside its origin: exit %d, stdout %q", code, stdout)
	}
	for _, want := range []string{"warning: ", "no time-series plot", "traces/link.trace", "scn/link.yaml", "run cclab report from the directory the sweep ran in"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}
