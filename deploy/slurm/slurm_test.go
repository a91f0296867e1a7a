// Package slurm runs the SLURM scripts in this folder, unchanged, on a real
// one-node SLURM cluster (testcluster.sh) and checks what a user relies on:
// the array job's shards merge into exactly the rows a single-process sweep
// writes, the merge waits for every shard, and a shard killed mid-run
// resumes without redoing its finished runs.
package slurm

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// scenario is heavy enough (about a second per shard) that a shard can be
// cancelled while it runs, and has an explicit loss model so that the
// scripts' bottleneck.loss.p grid applies.
const scenario = `name: slurm-test
seed: 7
duration: 120s
bottleneck:
  rate: 100Mbps
  delay: 10ms
  queue: {discipline: droptail, limit: 200}
  loss: {model: bernoulli, p: 0}
flows:
  - name: bulk
    cc: cubic
    count: 4
    start_spread: 100ms
`

const (
	shards = 4 // SHARDS: submit.sh's array size and sweep.sbatch's N
	runs   = 2 // runs per combination: 4 cc x 3 loss x 2 = 24 runs, 6 per shard
	victim = 3 // the shard the test cancels mid-run
)

type cluster struct {
	t    *testing.T
	dir  string
	env  []string
	work string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("skipping: a SLURM test cluster needs root")
	}
	for _, b := range []string{"slurmctld", "slurmd", "munged", "sbatch"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("skipping: %s not installed (deploy/slurm/testcluster.sh install, or .ci/setup-slurm.sh, installs Debian's slurm-wlm)", b)
		}
	}
	script, _ := filepath.Abs("testcluster.sh")
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, work: t.TempDir()}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping the cluster: %v\n%s", err, out)
		}
		// Nothing may outlive the test: no daemon of this cluster.
		if out, _ := exec.Command("pgrep", "-af", dir).Output(); len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("processes left behind:\n%s", out)
		}
	})
	out, err := exec.Command("bash", script, "start", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("starting the cluster: %v\n%s\nslurmctld log:\n%s", err, out, tail(filepath.Join(dir, "log", "slurmctld.log")))
	}
	c.env = append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	return c
}

func tail(file string) string {
	b, _ := os.ReadFile(file)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// run runs a SLURM client or a script in the cluster's environment.
func (c *cluster) run(extraEnv []string, name string, args ...string) string {
	c.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = c.work
	cmd.Env = append(append([]string{}, c.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// state is a job's (or array task's) state from squeue, or "" once it has
// left the queue.
func (c *cluster) state(job string) string {
	cmd := exec.Command("squeue", "-h", "-j", job, "-o", "%T")
	cmd.Env = c.env
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

func (c *cluster) waitGone(job string, d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.state(job) == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("job %s still queued after %s (state %q)\nslurmctld log:\n%s", job, d, c.state(job), tail(filepath.Join(c.dir, "log", "slurmctld.log")))
}

func buildCclab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cclab")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cclab/cclab/cmd/cclab")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// rowsWithoutWall reads a rows.csv and drops the wall_seconds column, the
// only one that depends on the machine.
func rowsWithoutWall(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	wall := -1
	for i, h := range recs[0] {
		if h == "wall_seconds" {
			wall = i
		}
	}
	var b strings.Builder
	for _, r := range recs {
		for i, v := range r {
			if i != wall {
				b.WriteString(v + ",")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestArrayJobMergeAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the SLURM cluster test in -short mode")
	}
	c := startCluster(t)
	bin := buildCclab(t)
	scn := filepath.Join(c.work, "slurm-test.yaml")
	if err := os.WriteFile(scn, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(c.work, "out")
	here, _ := filepath.Abs(".")
	env := []string{"CCLAB=" + bin, "OUT=" + out, "SCENARIO=" + scn, fmt.Sprint("RUNS=", runs), fmt.Sprint("SHARDS=", shards)}
	start := time.Now()

	// The scripts, unchanged: submit.sh queues the array and the merge.
	msg := c.run(env, "sh", filepath.Join(here, "submit.sh"))
	m := regexp.MustCompile(`sweep array job (\d+); merge job (\d+)`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("submit.sh said %q", msg)
	}
	array, merge := m[1], m[2]

	// Cancel the victim shard once it has finished some runs but not all.
	// rows.jsonl is the sweep's journal: a line per finished run.
	rows := filepath.Join(out, fmt.Sprintf("shard-%d", victim), "rows.jsonl")
	task := fmt.Sprintf("%s_%d", array, victim)
	deadline := time.Now().Add(3 * time.Minute)
	cancelled := false
	for time.Now().Before(deadline) && !cancelled {
		if b, err := os.ReadFile(rows); err == nil && bytes.Count(b, []byte("\n")) >= 1 {
			c.run(nil, "scancel", task)
			cancelled = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !cancelled {
		t.Fatalf("shard %d never started writing rows", victim)
	}
	c.waitGone(array, 5*time.Minute)
	b, _ := os.ReadFile(rows)
	doneBefore := bytes.Count(b, []byte("\n"))
	perShard := 4 * 3 * runs / shards
	if doneBefore >= perShard {
		t.Skipf("shard %d finished all %d runs before scancel took effect; the machine is too fast for this scenario", victim, perShard)
	}

	// The merge never starts: one shard did not succeed.
	if st := c.state(merge); st != "PENDING" {
		t.Fatalf("merge job is %q after a shard failed; want PENDING on its dependency", st)
	}
	if _, err := os.Stat(filepath.Join(out, "merged")); err == nil {
		t.Fatal("merge ran although a shard failed")
	}
	c.run(nil, "scancel", merge)

	// Resubmit the one shard, unchanged script, and the merge after it.
	re := strings.TrimSpace(c.run(env, "sbatch", "--parsable", "--export=ALL", fmt.Sprintf("--array=%d", victim), filepath.Join(here, "sweep.sbatch")))
	merge2 := strings.TrimSpace(c.run(env, "sbatch", "--parsable", "--export=ALL", "--dependency=afterok:"+re, filepath.Join(here, "merge.sbatch")))
	c.waitGone(merge2, 5*time.Minute)
	wall := time.Since(start)

	log, err := os.ReadFile(filepath.Join(c.work, fmt.Sprintf("cclab-sweep-%s_%d.log", re, victim)))
	if err != nil {
		t.Fatalf("the resubmitted shard's log: %v", err)
	}
	lm := regexp.MustCompile(`(\d+) runs done \((\d+) resumed\)`).FindSubmatch(log)
	if lm == nil {
		t.Fatalf("resubmitted shard's log has no summary:\n%s", log)
	}
	var done, resumed int
	fmt.Sscan(string(lm[1]), &done)
	fmt.Sscan(string(lm[2]), &resumed)
	if resumed != doneBefore || done != perShard {
		t.Errorf("resubmitted shard: %d runs done, %d resumed; want %d done, %d resumed (the rows finished before scancel)", done, resumed, perShard, doneBefore)
	}
	if _, err := os.Stat(filepath.Join(out, "merged", "report.html")); err != nil {
		t.Errorf("the merge job wrote no report: %v", err)
	}

	// The merged rows are the single-process sweep's, bar wall times.
	single := filepath.Join(c.work, "single")
	cmd := exec.Command(bin, "sweep", scn, "--grid", "cc=cubic,newreno,vegas,bbr", "--grid", "bottleneck.loss.p=0,0.01,0.03",
		"--runs", fmt.Sprint(runs), "--out", single, "--progress", "off")
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("single-process sweep: %v\n%s", err, o)
	}
	got := rowsWithoutWall(t, filepath.Join(out, "merged", "rows.csv"))
	want := rowsWithoutWall(t, filepath.Join(single, "rows.csv"))
	if got != want {
		t.Errorf("merged rows differ from the single-process sweep's:\nmerged:\n%s\nsingle:\n%s", got, want)
	}
	t.Logf("SLURM: %d runs in %d shards (shard %d cancelled after %d runs and resumed), merged and reported in %s wall",
		4*3*runs, shards, victim, doneBefore, wall.Round(100*time.Millisecond))
}
