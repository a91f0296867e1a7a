package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/cclab/cclab/analysis/sweep"
)

const satcomLike = "../../analysis/sweep/testdata/satcom-like.yaml"

func mainIn(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// countLines counts complete lines of a file (0 if it does not exist).
func countLines(path string) int {
	data, _ := os.ReadFile(path)
	return bytes.Count(data, []byte("\n"))
}

// sameOutputs compares two sweep directories' outputs, ignoring only wall
// times (the rows' wall_seconds).
func sameOutputs(t *testing.T, got, want string) {
	t.Helper()
	for _, name := range []string{sweep.RowsFile, sweep.RowsCSVFile, sweep.AggregateCSVFile, sweep.AggregateJSONFile} {
		g, err1 := os.ReadFile(filepath.Join(got, name))
		w, err2 := os.ReadFile(filepath.Join(want, name))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		if gs, ws := withoutWall(t, name, g), withoutWall(t, name, w); gs != ws {
			t.Errorf("%s differs beyond wall times:\ngot  %.400s\nwant %.400s", name, gs, ws)
		}
	}
}

func withoutWall(t *testing.T, name string, data []byte) string {
	t.Helper()
	switch name {
	case sweep.RowsFile:
		var b strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r sweep.Row
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.Result.WallSeconds = 0
			j, _ := json.Marshal(r)
			b.Write(append(j, '\n'))
		}
		return b.String()
	case sweep.RowsCSVFile:
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
			t.Fatalf("%s has no wall_seconds column", name)
		}
		var b strings.Builder
		for _, r := range recs[1:] {
			r[col] = ""
			b.WriteString(strings.Join(r, ",") + "\n")
		}
		return strings.Join(recs[0], ",") + "\n" + b.String()
	}
	return string(data)
}

func TestSweepCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := mainIn(context.Background(), "sweep", satcomLike, "--grid", "cc=newreno,fixed", "--grid", "bottleneck.loss.p=0:0.02:0.02",
		"--set", "duration=20s", "--seeds", "5:9", "--jobs", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"cc=newreno, bottleneck.loss.p=0 ", "cc=fixed, bottleneck.loss.p=0.02 ", "goodput Mbit/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{"4 combination(s) × 4 run(s) = 16 runs", "sweep: 16/16 runs (100.0%)", "16 runs done (0 resumed)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	m, rs, err := sweep.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.FirstSeed != 5 || m.Runs != 4 || rs.Len() != 16 {
		t.Errorf("manifest first seed %d runs %d, %d rows; want 5, 4, 16", m.FirstSeed, m.Runs, rs.Len())
	}
	for _, r := range rs.Sorted() {
		if r.Seed != 5+uint64(r.Run) || r.Result.SimSeconds > 20 {
			t.Errorf("combo %d run %d: seed %d, %g simulated seconds", r.Combo, r.Run, r.Seed, r.Result.SimSeconds)
		}
	}
	// The sweep is complete: running it again does nothing.
	code, _, stderr = mainIn(context.Background(), "sweep", satcomLike, "--grid", "cc=newreno,fixed", "--grid", "bottleneck.loss.p=0:0.02:0.02",
		"--set", "duration=20s", "--seeds", "5:9", "--out", dir)
	if code != 0 || !strings.Contains(stderr, "16 runs done (16 resumed)") {
		t.Errorf("rerun: exit %d, stderr %s", code, stderr)
	}
}

func TestSweepBadInput(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	gridFile := filepath.Join(tmp, "grid.yaml")
	os.WriteFile(gridFile, []byte("cc: [newreno, newreno]\n"), 0o644)
	out := filepath.Join(tmp, "out")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sweep", satcomLike}, 2, "--out DIR is required"},
		{[]string{"sweep", "--out", out}, 2, "want exactly one scenario file"},
		{[]string{"sweep", satcomLike, "--out", out, "--grid", "cc"}, 2, `--grid "cc": want KEY=V1,V2`},
		{[]string{"sweep", satcomLike, "--out", out, "--grid", "bottlenek.loss.p=0,0.1"}, 2, "--grid bottlenek.loss.p=0: "},
		{[]string{"sweep", satcomLike, "--out", out, "--grid", "bottleneck.loss.p=0,2"}, 2, "--grid combination bottleneck.loss.p=2: bottleneck.loss.p: must be in"},
		{[]string{"sweep", satcomLike, "--out", out, "--grid", "cc=newreno,nosuch"}, 2, `--grid combination cc=nosuch: flows[0].cc: unknown congestion controller`},
		{[]string{"sweep", satcomLike, "--out", out, "--grid-file", gridFile}, 2, `--grid-file ` + gridFile + `: cc: value "newreno" appears twice`},
		{[]string{"sweep", satcomLike, "--out", out, "--seeds", "9:3"}, 2, `--seeds "9:3": want A:B with A < B`},
		{[]string{"sweep", satcomLike, "--out", out, "--seeds", "1:3", "--runs", "4"}, 2, "--seeds replaces --seed and --runs"},
		{[]string{"sweep", satcomLike, "--out", out, "--shard", "4/4"}, 2, `--shard "4/4": want I/N with 0 <= I < N`},
		{[]string{"sweep", satcomLike, "--out", out, "--progress", "fancy"}, 2, `--progress "fancy"`},
		{[]string{"sweep", satcomLike, "--out", out, "--runs", "0"}, 2, "--runs 0: want at least 1"},
		{[]string{"sweep", satcomLike, "--out", filepath.Join(file, "sub"), "--runs", "1"}, 1, "--out " + filepath.Join(file, "sub") + ": cannot create the output directory"},
		{[]string{"sweep", filepath.Join(tmp, "missing.yaml"), "--out", out}, 1, "missing.yaml: no such file"},
		{[]string{"merge", "--out", out}, 2, "want the shard output directories"},
		{[]string{"merge", "--out", out, tmp}, 1, "has no sweep.json: not a sweep output directory"},
	}
	for _, c := range cases {
		code, _, stderr := mainIn(context.Background(), c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "panic") {
			t.Errorf("%v panicked: %s", c.args, stderr)
		}
	}
}

// heavySweep has enough runs (600 of about 1 ms CPU each) to be
// interrupted midway.
var heavySweep = []string{"sweep", satcomLike, "--grid", "cc=newreno,fixed", "--runs", "300", "--jobs", "2", "--progress", "lines"}

// TestSweepInterruptMessage cancels the command's context (what Ctrl-C
// does) midway and checks the message, the recorded rows and the resume.
func TestSweepInterruptMessage(t *testing.T) {
	tmp := t.TempDir()
	ref := filepath.Join(tmp, "ref")
	if code, _, stderr := mainIn(context.Background(), append(heavySweep, "--out", ref)...); code != 0 {
		t.Fatalf("reference sweep: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(tmp, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for countLines(filepath.Join(dir, sweep.RowsFile)) < 40 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	code, _, stderr := mainIn(ctx, append(heavySweep, "--out", dir)...)
	if code != 1 || !strings.Contains(stderr, "run the same command again to resume:\n  cclab sweep ../../analysis/sweep/testdata/satcom-like.yaml --grid cc=newreno,fixed --runs 300") {
		t.Fatalf("interrupted sweep: exit %d, stderr %s", code, stderr)
	}
	_, rs, err := sweep.Load(dir, nil)
	if err != nil || rs.Len() < 40 || rs.Len() == 600 {
		t.Fatalf("after the interrupt: %d rows, %v; want at least 40 and fewer than 600", rs.Len(), err)
	}
	if code, _, stderr := mainIn(context.Background(), append(heavySweep, "--out", dir)...); code != 0 || !strings.Contains(stderr, "resumed") {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	sameOutputs(t, dir, ref)
}

// TestCCLabHelperProcess is not a test: other tests run the test binary as
// a cclab process through it (cclabCommand), with cclab's arguments after
// "--".
func TestCCLabHelperProcess(t *testing.T) {
	if os.Getenv("CCLAB_HELPER_PROCESS") != "1" {
		t.Skip("helper process for tests that need a cclab process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, args, os.Stdout, os.Stderr))
}

// cclabCommand returns a command running cclab with args in a separate
// process (the test binary, through TestCCLabHelperProcess).
func cclabCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCCLabHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "CCLAB_HELPER_PROCESS=1")
	return cmd
}

// TestSweepSignals interrupts a sweep process with SIGINT (what Ctrl-C
// sends), resumes it in a second process killed with SIGKILL (no chance to
// clean up), resumes again and checks that the outputs equal an
// uninterrupted sweep's.
func TestSweepSignals(t *testing.T) {
	tmp := t.TempDir()
	ref := filepath.Join(tmp, "ref")
	if code, _, stderr := mainIn(context.Background(), append(heavySweep, "--out", ref)...); code != 0 {
		t.Fatalf("reference sweep: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(tmp, "out")
	rows := filepath.Join(dir, sweep.RowsFile)
	// start runs the sweep in a new process and returns once it has
	// recorded at least n rows.
	start := func(n int) (*exec.Cmd, *bytes.Buffer) {
		cmd := cclabCommand(append(heavySweep, "--out", dir)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for countLines(rows) < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		return cmd, &stderr
	}

	cmd, stderr := start(60)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	n1 := countLines(rows)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Fatalf("after SIGINT: %v, stderr %s", err, stderr)
	}
	if n1 < 60 || n1 >= 600 || !exists(filepath.Join(dir, sweep.RowsCSVFile)) {
		t.Fatalf("after SIGINT: %d rows, rows.csv written: %v; want 60 to 599 rows and rows.csv", n1, exists(filepath.Join(dir, sweep.RowsCSVFile)))
	}

	cmd, stderr = start(n1 + 60)
	cmd.Process.Kill()
	cmd.Wait()
	n2 := countLines(rows)
	if n2 < n1+60 || n2 >= 600 {
		t.Fatalf("killed with %d rows recorded (%d before); want a sweep killed midway (stderr: %s)", n2, n1, stderr)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("[%d resumed]", n1)) {
		t.Errorf("the second process did not resume %d runs: %s", n1, stderr)
	}

	code, _, errOut := mainIn(context.Background(), append(heavySweep, "--out", dir)...)
	if code != 0 {
		t.Fatalf("resume after SIGKILL: exit %d: %s", code, errOut)
	}
	sameOutputs(t, dir, ref)
}

func TestMergeCommand(t *testing.T) {
	tmp := t.TempDir()
	base := []string{"sweep", satcomLike, "--grid", "cc=newreno,fixed", "--runs", "3", "--set", "duration=20s"}
	ref := filepath.Join(tmp, "ref")
	if code, _, stderr := mainIn(context.Background(), append(base, "--out", ref)...); code != 0 {
		t.Fatal(stderr)
	}
	var shards []string
	for i := range 2 {
		d := filepath.Join(tmp, "shard-"+string(rune('0'+i)))
		code, stdout, stderr := mainIn(context.Background(), append(base, "--shard", string(rune('0'+i))+"/2", "--out", d)...)
		if code != 0 || !strings.Contains(stderr, "shard "+string(rune('0'+i))+"/2 has 3") || stdout != "" {
			t.Fatalf("shard %d: exit %d, stdout %q, stderr %s", i, code, stdout, stderr)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(tmp, "merged")
	code, stdout, stderr := mainIn(context.Background(), "merge", "--out", merged, shards[0], shards[1])
	if code != 0 || !strings.Contains(stderr, "merged 2 shard(s): 6 of 6 runs") || !strings.Contains(stdout, "cc=fixed") {
		t.Fatalf("merge: exit %d, stdout %s, stderr %s", code, stdout, stderr)
	}
	sameOutputs(t, merged, ref)
	code, _, stderr = mainIn(context.Background(), "merge", "--out", filepath.Join(tmp, "m2"), shards[1])
	if code != 1 || !strings.Contains(stderr, "missing shard(s) 0/2; merge with --partial") {
		t.Errorf("merge with a missing shard: exit %d, %s", code, stderr)
	}
	code, _, stderr = mainIn(context.Background(), "merge", "--partial", "--out", filepath.Join(tmp, "m3"), shards[1])
	if code != 0 || !strings.Contains(stderr, "3 of 6 runs") || !strings.Contains(stderr, "the sweep is incomplete") {
		t.Errorf("partial merge: exit %d, %s", code, stderr)
	}
}

// k8sJob is the part of a Kubernetes Job manifest the deploy examples use.
type k8sJob struct {
	Spec struct {
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		CompletionMode string `yaml:"completionMode"`
		Template       struct {
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Args []string `yaml:"args"`
	Env  []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

func readJob(t *testing.T, path string) k8sJob {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j k8sJob
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return j
}

// TestKubernetesExample runs the example Indexed Job's commands as its pods
// would (each completion index, then the merge step), with the shared
// volume mapped to a temporary folder and one run per combination.
func TestKubernetesExample(t *testing.T) {
	sweepJob := readJob(t, "../../deploy/kubernetes/sweep-job.yaml")
	mergeJob := readJob(t, "../../deploy/kubernetes/merge-job.yaml")
	s := sweepJob.Spec
	if s.CompletionMode != "Indexed" || s.Completions < 2 || s.Parallelism != s.Completions || len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("sweep job spec %+v", s)
	}
	c := s.Template.Spec.Containers[0]
	if len(c.Env) != 1 || c.Env[0].Name != "SHARD" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("SHARD is not the completion index: %+v", c.Env)
	}
	shared := t.TempDir()
	pod := func(args []string, index int) []string {
		out := make([]string, len(args))
		for i, a := range args {
			a = strings.ReplaceAll(a, "$(SHARD)", strconv.Itoa(index))
			a = strings.ReplaceAll(a, "/shared/", shared+"/")
			out[i] = strings.ReplaceAll(a, "/scenarios/", "../../scenarios/")
		}
		return out
	}
	for i := range s.Completions {
		args := append(pod(c.Args, i), "--runs", "1", "--progress", "off")
		if !slices.Contains(args, fmt.Sprintf("%d/%d", i, s.Completions)) {
			t.Errorf("index %d: args %v lack --shard %d/%d", i, args, i, s.Completions)
		}
		if code, _, stderr := mainIn(context.Background(), args...); code != 0 {
			t.Fatalf("index %d: exit %d: %s", i, code, stderr)
		}
	}
	ms := mergeJob.Spec.Template.Spec
	if len(ms.InitContainers) != 1 || len(ms.Containers) != 1 {
		t.Fatalf("merge job spec %+v", ms)
	}
	code, stdout, stderr := mainIn(context.Background(), pod(ms.InitContainers[0].Args, 0)...)
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("merged %d shard(s)", s.Completions)) || !strings.Contains(stdout, "cc=bbr, bottleneck.loss.p=0.03") {
		t.Fatalf("merge step: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := ms.Containers[0].Args; !slices.Equal(got, []string{"report", "/shared/out/merged"}) {
		t.Errorf("report step args %v", got)
	}
}

// TestSlurmExample runs the example array job's script for each task of a
// 3-task array, then the merge script, with cclab being this test binary.
func TestSlurmExample(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	log := filepath.Join(tmp, "calls.log")
	wrapper := filepath.Join(tmp, "cclab")
	// The report step is covered by other tests; here it is only logged.
	script := "#!/bin/sh\necho \"$*\" >> " + shellQuote(log) + "\n[ \"$1\" = report ] && exit 0\nexec " +
		shellQuote(os.Args[0]) + " -test.run='^TestCCLabHelperProcess$' -- \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	env := append(os.Environ(), "CCLAB_HELPER_PROCESS=1", "CCLAB="+wrapper, "OUT="+out,
		"SCENARIO=../../scenarios/satcom-uhf.yaml", "RUNS=1", "SHARDS=3", "SLURM_CPUS_PER_TASK=1")
	for i := range 3 {
		cmd := exec.Command("bash", "../../deploy/slurm/sweep.sbatch")
		cmd.Env = append(env, "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("task %d: %v\n%s", i, err, b)
		}
	}
	cmd := exec.Command("bash", "../../deploy/slurm/merge.sbatch")
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, b)
	}
	_, rs, err := sweep.Load(filepath.Join(out, "merged"), nil)
	if err != nil || rs.Len() != 12 {
		t.Fatalf("merged: %v rows, %v; want 12", rs, err)
	}
	calls, _ := os.ReadFile(log)
	for _, want := range []string{"--shard 0/3 --out " + out + "/shard-0", "--shard 2/3", "--jobs 1", "merge --out " + out + "/merged", "report " + out + "/merged"} {
		if !strings.Contains(string(calls), want) {
			t.Errorf("calls lack %q:\n%s", want, calls)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
