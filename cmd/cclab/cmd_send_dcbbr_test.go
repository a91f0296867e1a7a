package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestSendDCBBR: `cclab send --cc dc-bbr` over loopback: the shipped
// policy tunes the flow every 100 ms, the receiver gets every byte once
// (it checks each against the sender's pattern) and the sender reports
// the tuner's counters.
func TestSendDCBBR(t *testing.T) {
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rout, rerr bytes.Buffer
	rcode := make(chan int)
	go func() { rcode <- Main(ctx, []string{"recv", "--listen", addr, "--once", "--json"}, &rout, &rerr) }()
	time.Sleep(200 * time.Millisecond)
	var sout, serr bytes.Buffer
	if code := Main(ctx, []string{"send", addr, "--cc", "dc-bbr", "--link-rate", "1Gbps", "--bytes", "40MB", "--json"}, &sout, &serr); code != 0 {
		t.Fatalf("send exit %d: %s", code, serr.String())
	}
	if code := <-rcode; code != 0 {
		t.Fatalf("recv exit %d: %s", code, rerr.String())
	}
	var s, r live.Result
	if err := json.Unmarshal(sout.Bytes(), &s); err != nil {
		t.Fatalf("send output: %v\n%s", err, sout.String())
	}
	if err := json.Unmarshal(rout.Bytes(), &r); err != nil {
		t.Fatalf("recv output: %v\n%s", err, rout.String())
	}
	if !s.Complete || !r.Complete || r.Flow.BytesDelivered != 40_000_000 || r.CorruptBytes != 0 || s.Flow.CC != "dc-bbr" {
		t.Fatalf("sender %+v\nreceiver %+v", s, r)
	}
	if s.WallSeconds > 0.3 && s.Extra["dc_steps"] < 1 {
		t.Errorf("%.2f s transfer, tuner counters %v", s.WallSeconds, s.Extra)
	}
	t.Logf("%.2f s, %v", s.WallSeconds, s.Extra)
}

func TestSendDCBBRFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cc", "dc-bbr"}, "needs --link-rate"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "fast"}, `--link-rate "fast"`},
		{[]string{"--cc", "dc-bbr", "--link-rate", "0Mbps"}, `--link-rate "0Mbps"`},
		{[]string{"--cc", "cubic", "--link-rate", "1Gbps"}, "--link-rate needs --cc dc-bbr"},
		{[]string{"--cc", "dc-bbr:static", "--policy", "x.policy", "--link-rate", "1Gbps"}, "give the policy once"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "1Gbps", "--param", "min_rtt_window=0"}, "min_rtt_window"},
		{[]string{"--cc", "dc-bbr", "--link-rate", "1Gbps", "--policy", "../../papers/deepcc/policy/deepcc.policy"}, "data-centre"},
	} {
		var out, errb bytes.Buffer
		full := append([]string{"send", "127.0.0.1:9", "--time", "1s"}, c.args...)
		if code := Main(context.Background(), full, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", c.args, code, errb.String(), c.want)
		}
	}
}

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
