package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/emu/netns"
)

// TestEmuRefusesLikeRun: malformed scenarios get exactly the simulator's
// error (the same loading and validation code), before any namespace is
// made, so this runs without root.
func TestEmuRefusesLikeRun(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"bad-rate.yaml":     "name: x\nbottleneck: {rate: 10 furlongs, delay: 10ms}\nflows: [{name: a, cc: cubic}]\n",
		"neg-delay.yaml":    "name: x\nbottleneck: {rate: 10Mbps, delay: -5ms}\nflows: [{name: a, cc: cubic}]\n",
		"unknown.yaml":      "name: x\nbottleneck: {rate: 10Mbps, delay: 5ms, colour: red}\nflows: [{name: a, cc: cubic}]\n",
		"bad-cc.yaml":       "name: x\nbottleneck: {rate: 10Mbps, delay: 5ms}\nflows: [{name: a, cc: hybla}]\n",
		"bad-schedule.yaml": "name: x\nbottleneck: {rate: 10Mbps, delay: 5ms, schedule: [{at: 2s, rate: fast}]}\nflows: [{name: a, cc: cubic}]\n",
		"bad-loss.yaml":     "name: x\nbottleneck: {rate: 10Mbps, delay: 5ms, loss: {p: 1.5}}\nflows: [{name: a, cc: cubic}]\n",
		"empty.yaml":        "",
	}
	for name, body := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		var msgs [3]string
		for i, cmd := range []string{"run", "emu", "compare"} {
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{cmd, path}, &out, &errb)
			if code == 0 {
				t.Errorf("%s %s: accepted", cmd, name)
			}
			msgs[i] = strings.TrimPrefix(errb.String(), "cclab "+cmd+": ")
		}
		if msgs[0] == "" || msgs[1] != msgs[0] || msgs[2] != msgs[0] {
			t.Errorf("%s: run says %q, emu says %q, compare says %q", name, msgs[0], msgs[1], msgs[2])
		}
	}
}

// TestEmuClean: --clean removes a namespace whose process is dead and
// keeps one whose process is alive.
func TestEmuClean(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	// A pid above the kernel's pid_max cannot be alive.
	dead := "cclab-4194399-test"
	live := netns.Name("cleantest")
	for _, n := range []string{dead, live} {
		if err := exec.Command("ip", "netns", "add", n).Run(); err != nil {
			t.Skipf("ip netns add: %v", err)
		}
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", dead).Run()
		exec.Command("ip", "netns", "del", live).Run()
	})
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"emu", "--clean"}, &out, &errb); code != 0 {
		t.Fatalf("emu --clean: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "removed namespace "+dead) || !strings.Contains(out.String(), "kept namespace "+live) {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := os.Stat("/run/netns/" + dead); err == nil {
		t.Errorf("%s survived --clean", dead)
	}
	if _, err := os.Stat("/run/netns/" + live); err != nil {
		t.Errorf("--clean removed the live process's %s", live)
	}
}
