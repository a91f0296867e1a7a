//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestEmuAgentHook: a `stack: cclab` flow's agent keys are wired like
// cclab send's flags, and refused with the reason when they cannot work.
func TestEmuAgentHook(t *testing.T) {
	flow := func(cc, agent, target, mode string) *scenario.Flow {
		return &scenario.Flow{Name: "f", CC: scenario.CC{Name: cc}, Stack: "cclab", Agent: agent, Target: target, Mode: mode}
	}
	ok := []struct {
		f     *scenario.Flow
		label string
	}{
		{flow("external", "deepcc:g2", "8,70,0.01", ""), "deepcc"},
		{flow("external", "deepcc", "", "low-delay"), "deepcc"},
		{flow("bbr", "dc-bbr", "", ""), "dc-bbr"},
		{flow("bbr", "dc-bbr:static", "", ""), "dc-bbr:static"},
	}
	for _, c := range ok {
		o := live.SendOptions{CC: c.f.CC.Name}
		fin, err := emuAgentHook(emu.FlowSpec{Flow: c.f, LinkRate: 50 * units.Mbps}, &o)
		if err != nil {
			t.Errorf("%+v: %v", c.f, err)
			continue
		}
		if o.Attach == nil || o.Alg == nil || !strings.HasPrefix(o.CCLabel, c.label) {
			t.Errorf("%+v: not wired (label %q)", c.f, o.CCLabel)
		}
		fin(nil)
	}
	bad := []struct {
		f    *scenario.Flow
		rate units.Bandwidth
		want string
	}{
		{flow("external", "deepcc", "0,0,0", ""), 1, `target "0,0,0"`},
		{flow("external", "deepcc", "", "fast"), 1, `mode: deepcc: unknown preference mode "fast"`},
		{flow("cubic", "dc-bbr", "", ""), 1, "needs cc: bbr"},
		{flow("bbr", "dc-bbr", "", ""), 0, "rate-based bottleneck"},
	}
	for _, c := range bad {
		o := live.SendOptions{CC: c.f.CC.Name}
		_, err := emuAgentHook(emu.FlowSpec{Flow: c.f, LinkRate: c.rate * units.Mbps}, &o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want it to contain %q", c.f, err, c.want)
		}
	}
}

// TestEmuTunedAgents runs one scenario under cclab emu with two
// `stack: cclab` flows driven by in-process agents: the data-centre tuner
// on a BBR flow and DeepCC with its online goal tuner in low-delay mode
// (the scenario's mode key). Both transfers complete with every byte, and
// each agent reports that it acted.
func TestEmuTunedAgents(t *testing.T) {
	if err := netns.Check(); err != nil {
		t.Skipf("emulator unavailable: %v", err)
	}
	path := filepath.Join(t.TempDir(), "tuned.yaml")
	body := `name: tuned
seed: 1
duration: 30s
bottleneck: {rate: 20Mbps, delay: 1ms, queue: {discipline: droptail, limit: 100}}
flows:
  - {name: dc, cc: bbr, stack: cclab, agent: dc-bbr, bytes: 4MB}
  - {name: deep, cc: external, stack: cclab, agent: deepcc:g2, mode: low-delay, bytes: 2MB}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"emu", path, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("emu exit %d: %s", code, errb.String())
	}
	var res emu.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string]int64{"dc": 4_000_000, "deep": 2_000_000}
	for _, f := range res.Flows {
		if f.BytesDelivered != want[f.Name] || f.FCT == nil {
			t.Errorf("flow %s: delivered %d of %d, fct %v", f.Name, f.BytesDelivered, want[f.Name], f.FCT)
		}
	}
	dc, deep := res.Agents["dc"], res.Agents["deep"]
	if dc["dc_steps"] < 1 || dc["dc_changes"] < 1 {
		t.Errorf("dc-bbr agent: %v", dc)
	}
	if deep["agent_steps"] < 1 || deep["tune_intervals"] < 1 || deep["tune_stopped"] != 0 {
		t.Errorf("deepcc agent: %v", deep)
	}
	t.Logf("dc %v\ndeep %v", dc, deep)
}
