package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/marlin"
)

func TestMarlinUsageErrors(t *testing.T) {
	expectUsageErrors(t, [][]string{
		{"marlin", "train", "extra"},
		{"marlin", "train", "--steps", "0"},
		{"marlin", "train", "--loss", "1"},
		{"marlin", "train", "--batch", "-1"},
		{"marlin", "train", "--gamma", "1"},
		{"marlin", "train", "--variant", "tiny"},
		{"marlin", "train", "--action", "bdp"},
		{"marlin", "train", "--action", "exp"},
		{"marlin", "train", "--validate-every", "-5"},
		{"marlin", "train", "--validate-every", "100", "--validate-runs", "0"},
		{"marlin", "train", "--validate-every", "100", "--validate-by", "speed"},
		{"marlin", "train", "--validate-set", "bottleneck.schedule.0.at=7s"},
		{"marlin", "train", "--validate-on", "training"},
		{"marlin", "train", "--validate-every", "100", "--validate-on", "uhf"},
		{"marlin", "train", "--validate-every", "100", "--validate-on", "training", "--randomize=false"},
		{"marlin", "train", "--rtt-feature"},
		{"marlin", "train", "--variant", "compact", "--window-cap", "1KB"},
		{"marlin", "train", "--variant", "compact", "--window-cap", "wide"},
		{"marlin", "train", "--window-cap", "200KB"},
		{"marlin", "train", "--delay-range", "0.5,1.5", "--randomize=false"},
		{"marlin", "train", "--delay-range", "0.5"},
		{"marlin", "train", "--delay-range", "0.5,x"},
		{"marlin", "eval", "--runs", "0"},
		{"marlin", "eval", "--jobs", "-1"},
		{"marlin", "eval", "--validation-runs", "-1"},
		{"marlin", "eval", "extra"},
		{"marlin", "eval", "--variant", "tiny"},
		{"marlin", "eval", "--timeline", "uhf"},
		{"marlin", "ensemble", "a.policy", "b.policy"},
		{"marlin", "ensemble", "--out", "e.policy", "a.policy"},
	})
	expectJunkPolicy(t, "marlin", "eval")
	// --out a folder failed only after training ("rename ...: file exists");
	// under a regular file, the failed stat read as an existing checkpoint.
	dir := t.TempDir()
	if code, _, errs := runCmd(t, "marlin", "train", "--steps", "10", "--out", dir); code != 1 || !strings.Contains(errs, "--out: cannot save the policy to "+dir+": it is a folder") {
		t.Errorf("--out a folder: exit %d, stderr %q", code, errs)
	}
	// The same file twice was evaluated as two seeds, with a spread of 0.
	shipped := filepath.Join("..", "..", "papers", "marlin", "policy", "marlin.policy")
	if code, _, errs := runCmd(t, "marlin", "eval", "--policy", shipped+","+shipped, "--runs", "1"); code != 2 || !strings.Contains(errs, "were both trained with seed") {
		t.Errorf("one policy twice: exit %d, stderr %q", code, errs)
	}
	// Another paper's policy failed on a symptom ("policy of unknown
	// action \"discrete\"").
	dcPolicy := filepath.Join("..", "..", "papers", "datacenter", "policy", "ppo.policy")
	if code, _, errs := runCmd(t, "marlin", "eval", "--policy", dcPolicy, "--runs", "1"); code != 1 || !strings.Contains(errs, `trained in environment "dcrl-datacenter", not MARLIN's`) {
		t.Errorf("a data-centre policy: exit %d, stderr %q", code, errs)
	}
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, nil, 0o644)
	if code, _, errs := runCmd(t, "marlin", "train", "--steps", "10", "--out", filepath.Join(file, "x.policy")); code != 1 || strings.Contains(errs, "earlier training run") || !strings.Contains(errs, "not a directory") {
		t.Errorf("--out under a file: exit %d, stderr %q", code, errs)
	}
}

// TestMarlinTrainResumeEval trains a few hundred steps, continues the run
// from its checkpoint, and evaluates the policy with JSON output.
func TestMarlinTrainResumeEval(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "m.policy")
	train := []string{"marlin", "train", "--envs", "2", "--batch", "8", "--out", pol}
	code, out, errs := runCmd(t, append(train, "--steps", "400")...)
	if code != 0 || !strings.Contains(out, "policy written to "+pol) {
		t.Fatalf("train exit %d: %s%s", code, out, errs)
	}
	code, out, errs = runCmd(t, append(train, "--steps", "800", "--resume")...)
	if code != 0 || !strings.Contains(out, "trained 800 steps") {
		t.Fatalf("resumed train exit %d: %s%s", code, out, errs)
	}
	// The resumed learning curve continues the first: one header, steps
	// increasing.
	f, err := os.Open(filepath.Join(dir, "m.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 3 || rows[0][0] != "step" {
		t.Fatalf("learning curve: %v, %d rows", err, len(rows))
	}
	last := int64(-1)
	for _, r := range rows[1:] {
		s, err := strconv.ParseInt(r[0], 10, 64)
		if err != nil || s <= last {
			t.Fatalf("learning curve rows %v: steps must increase", rows)
		}
		last = s
	}
	if last != 800 {
		t.Errorf("last logged step %d, want 800", last)
	}

	code, out, errs = runCmd(t, "marlin", "eval", "--policy", pol, "--runs", "1", "--unseen=false", "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Results []struct {
			Scheme       string  `json:"scheme"`
			Loss         float64 `json:"loss"`
			Runs         int     `json:"runs"`
			TransferTime float64 `json:"transfer_time_s"`
		} `json:"results"`
		Policy        string  `json:"policy"`
		TrainingWallS float64 `json:"training_wall_s"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval JSON: %v\n%s", err, out)
	}
	schemes := map[string]int{}
	for _, r := range rep.Results {
		schemes[r.Scheme]++
		if r.Runs != 1 || !(r.TransferTime > 0) {
			t.Errorf("row %+v: want 1 run and a positive transfer time", r)
		}
	}
	for s, n := range map[string]int{"cubic": 4, "newreno": 4, "bbr": 4, "hybla": 4, "westwood": 4, "marlin": 4, "mockets": 1, "random": 1, "ideal": 4} {
		if schemes[s] != n {
			t.Errorf("%d %s rows, want %d (rows %v)", schemes[s], s, n, schemes)
		}
	}
	if rep.Policy == "" || !(rep.TrainingWallS > 0) {
		t.Errorf("policy %q, training wall %g s: want both recorded", rep.Policy, rep.TrainingWallS)
	}

	// Two policies (here the same weights under another training seed:
	// the same seed twice is refused): marlin rows over policies, each
	// policy's rows, and the median-seed choice on validation runs.
	twin, err := policy.Load(pol)
	if err != nil {
		t.Fatal(err)
	}
	twin.Meta.Seed++
	pol2 := filepath.Join(dir, "m2.policy")
	if err := twin.Save(pol2); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCmd(t, "marlin", "eval", "--policy", pol+","+pol2, "--runs", "1", "--validation-runs", "1", "--unseen=false", "--json")
	if code != 0 {
		t.Fatalf("eval of two policies exit %d: %s", code, errs)
	}
	var rep2 struct {
		Results []struct {
			Scheme   string `json:"scheme"`
			Policies int    `json:"policies"`
		} `json:"results"`
		PerPolicy [][]json.RawMessage `json:"per_policy"`
		Selected  *struct {
			Scores []float64 `json:"scores"`
		} `json:"selected"`
	}
	if err := json.Unmarshal([]byte(out), &rep2); err != nil {
		t.Fatalf("eval JSON: %v\n%s", err, out)
	}
	for _, r := range rep2.Results {
		if r.Scheme == "marlin" && r.Policies != 2 {
			t.Errorf("marlin row over %d policies, want 2", r.Policies)
		}
	}
	if len(rep2.PerPolicy) != 2 || rep2.Selected == nil || len(rep2.Selected.Scores) != 2 {
		t.Errorf("per_policy %d entries, selected %+v: want 2 and 2 scores", len(rep2.PerPolicy), rep2.Selected)
	}
	if code, _, errs := runCmd(t, "marlin", "eval", "--policy", pol+",missing.policy"); code != 1 || !strings.Contains(errs, "missing.policy") {
		t.Errorf("missing second policy: exit %d, stderr %q", code, errs)
	}
}

// TestMarlinTrainValidates: --validate-every writes the chosen snapshot to
// OUT, the last to OUT's stem + -last, a row per validation to the
// validation CSV, and the choice into OUT's metadata.
func TestMarlinTrainValidates(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "m.policy")
	code, out, errs := runCmd(t, "marlin", "train", "--variant", "compact", "--envs", "2", "--batch", "8", "--steps", "320",
		"--validate-every", "160", "--validate-runs", "2", "--out", pol)
	if code != 0 || !strings.Contains(out, "validation chose the snapshot of step") {
		t.Fatalf("train exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "m-validation.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "160,") || !strings.HasPrefix(lines[2], "320,") {
		t.Errorf("validation CSV:\n%s\nwant a header and rows at steps 160 and 320", b)
	}
	chosen, err := policy.Load(pol)
	if err != nil {
		t.Fatal(err)
	}
	last, err := policy.Load(filepath.Join(dir, "m-last.policy"))
	if err != nil {
		t.Fatal(err)
	}
	if s := chosen.Meta.Extra["selected_step"]; s != strconv.FormatInt(chosen.Meta.Steps, 10) || last.Meta.Steps != 320 {
		t.Errorf("chosen snapshot: selected_step %q, steps %d; last snapshot's steps %d (want 320)", s, chosen.Meta.Steps, last.Meta.Steps)
	}
}

// TestMarlinEnsemble writes the shipped compact policy as three seeds,
// combines two into an ensemble file, evaluates it, and checks the refusals
// a user meets: a repeated seed, a file that is not a policy.
func TestMarlinEnsemble(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, seed := range []uint64{21, 22, 21} {
		p, err := marlin.ShippedCompactPolicy()
		if err != nil {
			t.Fatal(err)
		}
		p.Meta.Seed = seed
		f := filepath.Join(dir, strconv.Itoa(len(files))+".policy")
		if err := p.Save(f); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	ens := filepath.Join(dir, "e.policy")
	code, out, errs := runCmd(t, "marlin", "ensemble", "--out", ens, files[0], files[1])
	if code != 0 || !strings.Contains(out, "ensemble of 2 policies (seeds 21,22, variant compact) written to "+ens) {
		t.Fatalf("ensemble exit %d: %s%s", code, out, errs)
	}
	e, err := policy.Load(ens)
	if err != nil || len(e.Members) != 2 {
		t.Fatalf("load: %v, %d members", err, len(e.Members))
	}
	code, out, errs = runCmd(t, "marlin", "eval", "--policy", ens, "--runs", "1", "--unseen=false", "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Policy string `json:"policy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !strings.Contains(rep.Policy, "an ensemble of seeds 21,22") {
		t.Fatalf("eval JSON policy %q (%v), want the ensemble's seeds named", rep.Policy, err)
	}
	if code, _, errs := runCmd(t, "marlin", "ensemble", "--out", ens, files[0], files[2]); code != 1 || !strings.Contains(errs, "both trained with seed 21") {
		t.Errorf("repeated seed: exit %d, stderr %q", code, errs)
	}
	junk := filepath.Join(dir, "junk.policy")
	if err := os.WriteFile(junk, []byte("not a policy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd(t, "marlin", "ensemble", "--out", ens, files[0], junk); code != 1 || !strings.Contains(errs, junk) {
		t.Errorf("junk member: exit %d, stderr %q", code, errs)
	}
}
