package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDCWorkloadFlags(t *testing.T) {
	code, out, errs := runCmd(t, "dc", "eval", "--policy", "none", "--workload", "paper", "--runs", "1", "--grid-runs", "1",
		"--static-best", "1,3", "--conditions", "train", "--event-gap", "2s,5s", "--rate-range", "2Mbps,8Mbps", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	for _, bad := range [][]string{
		{"--workload", "nope"},
		{"--event-gap", "5s"},
		{"--path-delay", "9ms,1ms"},
		{"--rate-range", "x,y"},
		{"--churn", "2"},
	} {
		args := append([]string{"dc", "eval", "--policy", "none", "--runs", "1", "--static-best", "1,3", "--conditions", "train"}, bad...)
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
	// The data-centre policy was trained on the datacenter workload.
	if code, _, errs := runCmd(t, "dc", "eval", "--workload", "paper", "--policy", "papers/datacenter/policy/ppo.policy",
		"--runs", "1", "--static-best", "1,3", "--conditions", "train"); code == 0 {
		t.Errorf("the data-centre policy ran on the paper workload: %s", errs)
	}
	// Without --policy each workload evaluates its own built-in policy, and
	// the unseen conditions say what that workload trained on.
	for _, c := range []struct{ workload, policy, load string }{
		{"datacenter", "papers/datacenter/policy/ppo.policy", "background load 60-70 % (training: 10-40 %)"},
		{"paper", "papers/datacenter/policy/paper-ppo.policy", "background load 60-70 % (training: 5-30 %)"},
	} {
		code, out, errs := runCmd(t, "dc", "eval", "--workload", c.workload, "--runs", "1", "--static-best", "1,3", "--conditions", "train,load")
		if code != 0 {
			t.Fatalf("--workload %s without --policy: exit %d: %s", c.workload, code, errs)
		}
		if !strings.Contains(out, "("+c.policy+")") || !strings.Contains(out, "condition load: "+c.load+"\n") {
			t.Errorf("--workload %s without --policy: want %s and the load condition as %q in:\n%s", c.workload, c.policy, c.load, out)
		}
	}
}

func TestDCEvalOnline(t *testing.T) {
	code, out, errs := runCmd(t, "dc", "eval", "--online-lr", "1e-4", "--runs", "1", "--static-best", "1,3", "--conditions", "train")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "PPO online") {
		t.Errorf("no online row in:\n%s", out)
	}
	for _, bad := range [][]string{
		{"dc", "eval", "--online-lr", "2", "--runs", "1", "--static-best", "1,3"},
		{"dc", "eval", "--policy", "none", "--online-lr", "1e-4", "--runs", "1", "--static-best", "1,3"},
	} {
		if code, _, _ := runCmd(t, bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
}
