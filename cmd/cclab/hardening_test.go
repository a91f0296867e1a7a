package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{[]string{"run", satcomLike, "--sample", "-1s"}, "--sample -1s: want a positive interval"},
		{[]string{"run", satcomLike, "--set", "bottleneck.queue.limit=42.0"}, "--set bottleneck.queue.limit=42.0: bottleneck.queue.limit: a bare number is a packet count"},
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
