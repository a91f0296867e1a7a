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
	// The shipped policy was trained on the datacenter workload.
	if code, _, errs := runCmd(t, "dc", "eval", "--workload", "paper", "--runs", "1", "--static-best", "1,3", "--conditions", "train"); code == 0 {
		t.Errorf("the shipped policy ran on the paper workload: %s", errs)
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
