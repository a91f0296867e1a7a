package report

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cclab/cclab/analysis/sweep"
)

// traceScenario is a scenario whose trace is a path relative to the
// scenario file, as in scenarios/cellular.yaml.
const traceScenario = `name: traced
seed: 1
duration: 2s
bottleneck:
  trace: ../traces/link.trace
  delay: 20ms
  queue: {limit: 50}
flows:
  - {name: f, cc: cubic}
`

// writeTraceProject writes root/scn/link.yaml (scenario, with comment
// appended) and root/traces/link.trace, a Mahimahi trace with the given
// delivery opportunities per millisecond.
func writeTraceProject(t *testing.T, root, comment string, opportunities int) {
	t.Helper()
	var tr strings.Builder
	for ms := 1; ms <= 10; ms++ {
		for range opportunities {
			tr.WriteString(strconv.Itoa(ms) + "\n")
		}
	}
	for path, data := range map[string]string{
		filepath.Join(root, "scn", "link.yaml"):     traceScenario + comment,
		filepath.Join(root, "traces", "link.trace"): tr.String(),
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sweepFrom runs a two-combination sweep of scn/link.yaml from root, as
// `cd root && cclab sweep scn/link.yaml --out out` does.
func sweepFrom(t *testing.T, root, out string) {
	t.Helper()
	t.Chdir(root)
	data, err := os.ReadFile("scn/link.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sweep.NewPlan(sweep.Spec{ScenarioPath: "scn/link.yaml", ScenarioData: data,
		Grid: []sweep.Axis{{Key: "cc", Values: []string{"cubic", "vegas"}}}, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(context.Background(), plan, out, sweep.Options{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestSweepReportFindsScenarioFromElsewhere: the manifest records the
// scenario path relative to where cclab sweep ran; a report written from
// another directory still finds the scenario's trace when the sweep's
// directory lies under that origin, and prefers the file with the content
// the sweep ran over a same-named one in the current directory.
func TestSweepReportFindsScenarioFromElsewhere(t *testing.T) {
	root := t.TempDir()
	writeTraceProject(t, root, "", 1)
	out := filepath.Join(root, "results", "s")
	sweepFrom(t, root, "results/s")

	// A decoy project: same relative paths, another scenario and link.
	decoy := t.TempDir()
	writeTraceProject(t, decoy, "# another project\n", 3)
	t.Chdir(decoy)
	var warnings []string
	_, figs, err := WriteDir(context.Background(), out, DirOptions{Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(figs, "timeseries-run0") {
		t.Errorf("figures %v lack timeseries-run0", figs)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	html, _ := os.ReadFile(filepath.Join(out, File))
	for _, bad := range []string{"could not be re-simulated", "differs from the recorded row"} {
		if strings.Contains(string(html), bad) {
			t.Errorf("report says %q", bad)
		}
	}
}

// TestSweepReportWarnsWhenScenarioIsLost: when the scenario file cannot be
// found from here, the missing time series is reported as a warning (not
// only inside the HTML) that names the recorded path and the way out.
func TestSweepReportWarnsWhenScenarioIsLost(t *testing.T) {
	root := t.TempDir()
	writeTraceProject(t, root, "", 1)
	out := filepath.Join(t.TempDir(), "s") // not under root
	sweepFrom(t, root, out)

	t.Chdir(t.TempDir())
	var warnings []string
	_, figs, err := WriteDir(context.Background(), out, DirOptions{Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(figs, "timeseries-run0") {
		t.Fatalf("figures %v: time series drawn without the trace", figs)
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{"no time-series plot", "traces/link.trace", "scn/link.yaml", "run cclab report from the directory the sweep ran in", "--no-series"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}

	// From the sweep's origin, the recorded path works as it always did.
	t.Chdir(root)
	warnings = nil
	if _, figs, err = WriteDir(context.Background(), out, DirOptions{Warn: func(s string) { warnings = append(warnings, s) }}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(figs, "timeseries-run0") || len(warnings) > 0 {
		t.Errorf("from the origin: figures %v, warnings %q", figs, warnings)
	}
}

// TestLocateScenario checks the candidates' order and the content check.
func TestLocateScenario(t *testing.T) {
	root := t.TempDir()
	writeTraceProject(t, root, "", 1)
	m := &sweep.Manifest{ScenarioPath: "scn/link.yaml", Scenario: traceScenario}
	dir := filepath.Join(root, "a", "b")
	os.MkdirAll(dir, 0o755)
	t.Chdir(t.TempDir())
	if p, ok := locateScenario(dir, m); !ok || p != filepath.Join(root, "scn", "link.yaml") {
		t.Errorf("from elsewhere: %q, %v; want the file under %s", p, ok, root)
	}
	changed := *m
	changed.Scenario += "# edited since\n"
	if p, ok := locateScenario(dir, &changed); ok || p != m.ScenarioPath {
		t.Errorf("edited scenario: %q, %v; want the recorded path, not found", p, ok)
	}
	builtin := &sweep.Manifest{ScenarioPath: "dumbbell", Scenario: "name: dumbbell\n"}
	if p, ok := locateScenario(dir, builtin); ok || p != "dumbbell" {
		t.Errorf("built-in scenario: %q, %v", p, ok)
	}
}
