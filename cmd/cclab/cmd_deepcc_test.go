package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepCCTrainEval trains a tiny policy for a few hundred steps, then
// evaluates it briefly with JSON and file outputs.
func TestDeepCCTrainEval(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.policy")
	traces := filepath.Join("..", "..", "traces")
	code, out, errs := runCmd(t, "deepcc", "train", "--steps", "400", "--envs", "2", "--hidden", "16,16", "--batch", "16",
		"--traces", traces, "--train-traces", "ATT-LTE-driving-2016.down.gz", "--out", pol)
	if code != 0 {
		t.Fatalf("train exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(out, "trained 400 steps") {
		t.Errorf("train output %q lacks the step count", out)
	}
	if _, err := os.Stat(strings.TrimSuffix(pol, ".policy") + ".csv"); err != nil {
		t.Errorf("no learning-curve CSV: %v", err)
	}
	outDir := filepath.Join(dir, "eval")
	code, out, errs = runCmd(t, "deepcc", "eval", "--policy", pol, "--traces", traces, "--eval-traces", "ATT-LTE-driving-2016.down.gz",
		"--runs", "1", "--duration", "3s", "--classic", "cubic", "--json", "--out", outDir)
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Traces []struct {
			Name    string `json:"name"`
			Schemes []struct {
				Scheme string `json:"scheme"`
			} `json:"schemes"`
		} `json:"traces"`
		TCR []struct {
			Scheme string `json:"scheme"`
			Total  int    `json:"total"`
		} `json:"tcr"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval --json output is not JSON: %v\n%s", err, out)
	}
	if len(rep.Traces) != 1 || len(rep.Traces[0].Schemes) != 6 {
		t.Fatalf("report has %d traces and schemes %+v, want 1 trace with cubic and 5 goals", len(rep.Traces), rep.Traces)
	}
	if len(rep.TCR) != 7 || rep.TCR[0].Scheme != "deepcc-tuned" || rep.TCR[0].Total != 9 {
		t.Errorf("TCR rows %+v, want tuned DeepCC first with 9 targets x 1 run, then 6 schemes", rep.TCR)
	}
	for _, f := range []string{"deepcc.json", "report.html", "pantheon_ATT-LTE-driving-2016_down.svg", "tcr.png"} {
		if st, err := os.Stat(filepath.Join(outDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("--out file %s missing or empty (%v)", f, err)
		}
	}
	// The text table.
	code, out, errs = runCmd(t, "deepcc", "eval", "--policy", pol, "--traces", traces, "--eval-traces", "ATT-LTE-driving-2016.down.gz",
		"--runs", "1", "--duration", "2s", "--classic", "vegas", "--no-targets")
	if code != 0 || !strings.Contains(out, "deepcc-g1") || !strings.Contains(out, "vegas") || strings.Contains(out, "Target completion") {
		t.Errorf("eval --no-targets exit %d, output:\n%s%s", code, out, errs)
	}
}

func TestDeepCCUsageErrors(t *testing.T) {
	expectUsageErrors(t, [][]string{
		{"deepcc", "train", "--steps", "0"},
		{"deepcc", "train", "--hidden", "16,x"},
		{"deepcc", "train", "--train-traces", ""},
		{"deepcc", "train", "extra"},
		{"deepcc", "eval", "--runs", "0"},
		{"deepcc", "eval", "--jobs", "-1"},
		{"deepcc", "eval", "--tuner-start", "1,2"},
		{"deepcc", "eval", "--tuner-start", "0,0,0"},
		{"deepcc", "eval", "--tuner-margin", "1.5"},
		{"deepcc", "eval", "--eval-traces", " , "},
	})
	if code, _, errs := runCmd(t, "deepcc", "eval", "--policy", filepath.Join(t.TempDir(), "missing.policy")); code != 1 || !strings.Contains(errs, "missing.policy") {
		t.Errorf("missing policy: exit %d, stderr %q; want 1 naming the file", code, errs)
	}
	// Traces missing from --traces are looked up among the built-in ones by
	// name; a name that is neither is an error naming it.
	if code, _, errs := runCmd(t, "deepcc", "train", "--traces", t.TempDir(), "--train-traces", "Nowhere-LTE.down", "--steps", "10", "--out", filepath.Join(t.TempDir(), "x.policy")); code != 1 || !strings.Contains(errs, "Nowhere-LTE.down") {
		t.Errorf("missing trace: exit %d, stderr %q; want 1 naming the trace", code, errs)
	}
}

// TestDeepCCEvalSeeds evaluates two tiny independently trained policies:
// the rule's choice on a validation trace and the across-policy summary
// are in the JSON; bad combinations are usage errors.
func TestDeepCCEvalSeeds(t *testing.T) {
	shipped := "papers/deepcc/policy/deepcc.policy"
	traces := filepath.Join("..", "..", "traces")
	expectUsageErrors(t, [][]string{
		{"deepcc", "eval", "--policy", shipped + "," + shipped},
		{"deepcc", "eval", "--policy", shipped, "--validation-runs", "-1"},
		{"deepcc", "eval", "--policy", ","},
	})
	dir := t.TempDir()
	var pols []string
	for _, s := range []string{"1", "2"} {
		p := filepath.Join(dir, "p"+s+".policy")
		code, out, errs := runCmd(t, "deepcc", "train", "--steps", "200", "--envs", "2", "--hidden", "8,8", "--batch", "16", "--seed", s,
			"--traces", traces, "--train-traces", "TMobile-LTE-driving.down.gz", "--out", p)
		if code != 0 {
			t.Fatalf("train seed %s exit %d: %s%s", s, code, out, errs)
		}
		pols = append(pols, p)
	}
	both := pols[0] + "," + pols[1]
	eval := []string{"deepcc", "eval", "--policy", both, "--traces", traces, "--eval-traces", "ATT-LTE-driving-2016.down.gz",
		"--runs", "1", "--duration", "2s", "--classic", "cubic"}
	code, _, errs := runCmd(t, append(eval, "--validation-traces", "TMobile-LTE-driving.down.gz,ATT-LTE-driving-2016.down.gz")...)
	if code != 2 || !strings.Contains(errs, "ATT-LTE-driving-2016.down") {
		t.Errorf("validation on an evaluation trace: exit %d, stderr %q; want 2 naming the trace", code, errs)
	}
	code, out, errs := runCmd(t, append(eval, "--validation-traces", "TMobile-LTE-driving.down.gz", "--validation-runs", "1", "--json", "--out", filepath.Join(dir, "eval"))...)
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Policies  []string `json:"policies"`
		Selection struct {
			Index  int       `json:"index"`
			Scores []float64 `json:"scores"`
		} `json:"selection"`
		Traces []struct {
			Schemes []struct {
				Scheme     string `json:"scheme"`
				Throughput struct {
					Mean      float64   `json:"mean"`
					PerPolicy []float64 `json:"per_policy"`
				} `json:"throughput_mbps"`
			} `json:"schemes"`
		} `json:"traces"`
		TCR       []struct{ Scheme string } `json:"tcr"`
		PerPolicy []json.RawMessage         `json:"per_policy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Policies) != 2 || len(rep.PerPolicy) != 2 || len(rep.Selection.Scores) != 2 || len(rep.Traces) != 1 || len(rep.Traces[0].Schemes) != 6 {
		t.Fatalf("report: %d policies, %d per-policy reports, selection %+v, traces %+v", len(rep.Policies), len(rep.PerPolicy), rep.Selection, rep.Traces)
	}
	if g := rep.Traces[0].Schemes[1]; g.Scheme != "deepcc-g1" || len(g.Throughput.PerPolicy) != 2 || g.Throughput.Mean != (g.Throughput.PerPolicy[0]+g.Throughput.PerPolicy[1])/2 {
		t.Errorf("g1 over policies %+v", g)
	}
	if len(rep.TCR) != 7 || rep.TCR[0].Scheme != "deepcc-tuned" {
		t.Errorf("TCR rows %+v", rep.TCR)
	}
	for _, f := range []string{"deepcc_seeds.json", "report.html", "policy1/report.html", "policy2/deepcc.json"} {
		if _, err := os.Stat(filepath.Join(dir, "eval", f)); err != nil {
			t.Errorf("--out: %v", err)
		}
	}
	// The text tables carry the interval and the choice.
	code, out, errs = runCmd(t, append(eval, "--validation-traces", "TMobile-LTE-driving.down.gz", "--validation-runs", "1", "--no-targets")...)
	if code != 0 || !strings.Contains(out, "over 2 independently trained policies") || !strings.Contains(out, "shipped-policy rule") {
		t.Errorf("text eval exit %d:\n%s%s", code, out, errs)
	}
}

// TestDeepCCEvalProfileRefused: --profile takes default, linux or linux-host.
func TestDeepCCEvalProfileRefused(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"deepcc", "eval", "--profile", "kernel"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "--profile must be default, linux or linux-host") {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
