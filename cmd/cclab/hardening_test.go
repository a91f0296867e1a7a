package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/experiment"
)

// TestOverrideErrorsNameTheFlag: an error in a value given by --set or --cc
// pointed at the YAML line whose value it replaced; a negative --seed was
// taken as "not set".
func TestOverrideErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", satcomLike, "--set", "bottleneck.loss.p=2"}, "--set bottleneck.loss.p=2: bottleneck.loss.p: must be in [0, 1)"},
		{[]string{"run", satcomLike, "--cc", "nosuch"}, "--cc nosuch: flows[0].cc: unknown congestion controller"},
		{[]string{"run", satcomLike, "--seed", "-5"}, "--seed -5: want a seed >= 0"},
		{[]string{"sweep", satcomLike, "--out", t.TempDir(), "--seed", "-5"}, "--seed -5: want a seed >= 0"},
	}
	for _, c := range cases {
		code, _, stderr := runCmd(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "satcom-like.yaml:") {
			t.Errorf("%v: exit %d, stderr %q; want a failure and %q without a file line", c.args, code, stderr, c.want)
		}
	}
}

// TestCurvePlotWithoutEpisodes: a training run stopped before its first
// episode ended made the learning-curve plot fail.
func TestCurvePlotWithoutEpisodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.csv")
	os.WriteFile(path, []byte("step,ep_rew_mean\n100,\n"), 0o644)
	if err := plotCurve(path, curveFigure{"t", "return", "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".csv") + ".png"); err != nil {
		t.Error(err)
	}
}

// TestRunTableBounds: bug 5. 100,000 flows printed 100,000 rows; an RTT
// never measured printed 0.00; Jain's index of flows that delivered
// nothing printed as a number.
func TestRunTableBounds(t *testing.T) {
	r := &experiment.Result{Scenario: "x"}
	for i := 0; i < 1000; i++ {
		r.Flows = append(r.Flows, experiment.FlowResult{Name: fmt.Sprintf("f-%d", i), CC: "newreno"})
	}
	var b strings.Builder
	printResult(&b, r)
	out := b.String()
	if n := strings.Count(out, "\n"); n > maxTableFlows+20 {
		t.Errorf("%d lines for 1000 flows", n)
	}
	if !strings.Contains(out, "(950 more flows: see --json or --out)") {
		t.Errorf("no note of the flows left out:\n%s", out)
	}
	if strings.Contains(out, "0.00  0.00  0.00") || !strings.Contains(out, "Jain's fairness index - ") {
		t.Errorf("unmeasured values printed as numbers:\n%s", out[:min(len(out), 600)])
	}
}

// TestOnePlotStyle: the model plot drew with gonum/plot directly (another
// font, sparse ticks); every figure now goes through analysis/plot.
func TestOnePlotStyle(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if strings.Contains(string(b), "\"gonum.org/v1/plot") {
			t.Errorf("%s draws with gonum/plot directly; use analysis/plot", f)
		}
	}
}
