//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/endpoint"
	"github.com/cclab/cclab/emu/netns"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/scenarios"
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
		"bad-cc.yaml":       "name: x\nbottleneck: {rate: 10Mbps, delay: 5ms}\nflows: [{name: a, cc: nosuchcc}]\n",
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

// TestCompareDiffs: the relative differences are (sim - emu) / emu per
// metric, absent where a metric is missing on one side.
func TestCompareDiffs(t *testing.T) {
	fct := 10.0
	fctE := 8.0
	rti, rtiE := 1.5, 2.0
	sim := &experiment.Result{Scenario: "s", RTI: &rti, Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 11, FCT: &fct, Retransmissions: 30, RTTMeanMs: 100, QdelayP95Ms: 0}}}
	em := &emu.Result{Result: experiment.Result{RTI: &rtiE, Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 10, FCT: &fctE, Retransmissions: 20, RTTMeanMs: 100, QdelayP95Ms: 0}}}}
	c := compareResults(sim, em)
	m := c.Diff[0].Metrics
	for name, want := range map[string]float64{"goodput_mbps": 0.1, "fct_s": 0.25, "retransmissions": 0.5, "rtt_mean_ms": 0, "qdelay_p95_ms": 0} {
		if m[name] == nil || *m[name] != want {
			t.Errorf("%s: got %v, want %g", name, m[name], want)
		}
	}
	if _, ok := m["rti"]; ok {
		t.Error("per-flow RTI compared though neither side has one")
	}
	if c.RTIDiff == nil || *c.RTIDiff != -0.25 {
		t.Errorf("RTI diff %v, want -0.25", c.RTIDiff)
	}
	var out bytes.Buffer
	printComparison(&out, c)
	if !strings.Contains(out.String(), "+10.0%") || !strings.Contains(out.String(), "-25.0%") {
		t.Errorf("table:\n%s", out.String())
	}
	if strings.Contains(out.String(), "loss probes") {
		t.Errorf("loss probes compared without the kernel's counters:\n%s", out.String())
	}
	// The kernel counts loss probes and recoveries per namespace: they are
	// compared over all the measured flows.
	p, v := int64(3), int64(7)
	sim.Flows[0].LossProbes, sim.Flows[0].FastRecoveries = &p, &v
	comp, lost := int64(12), int64(21)
	sim.Flows[0].AcksCompressed, sim.Flows[0].LostRetransmits = &comp, &lost
	em.KernelCounters = &emu.KernelCounters{Sender: map[string]int64{"TcpExt.TCPLossProbes": 4, "TcpExt.TCPSackRecovery": 9, "TcpExt.TCPLostRetransmit": 17},
		Receiver: map[string]int64{"TcpExt.TCPAckCompressed": 15}}
	out.Reset()
	printComparison(&out, compareResults(sim, em))
	if !strings.Contains(out.String(), "loss probes 3 vs 4, fast recoveries 7 vs 9") {
		t.Errorf("counters line missing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "ACKs saved by SACK compression 12 vs 15") {
		t.Errorf("SACK compression line missing:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "retransmissions lost in turn 21 vs 17") {
		t.Errorf("lost retransmissions line missing:\n%s", out.String())
	}
	// Background TCP connections share the kernel's namespaces: its
	// counters count them too, and nothing is compared against them.
	em.Background = []experiment.BackgroundResult{{Name: "websearch", Flows: 5}}
	out.Reset()
	printComparison(&out, compareResults(sim, em))
	if strings.Contains(out.String(), "vs 4") || strings.Contains(out.String(), "vs 17") || strings.Contains(out.String(), "12 vs 15") ||
		!strings.Contains(out.String(), "not compared") {
		t.Errorf("counters compared though background TCP connections share them:\n%s", out.String())
	}
	em.Background = []experiment.BackgroundResult{{Name: "udp"}} // UDP sources open no TCP connection
	out.Reset()
	printComparison(&out, compareResults(sim, em))
	if !strings.Contains(out.String(), "loss probes 3 vs 4") {
		t.Errorf("counters not compared beside a UDP background:\n%s", out.String())
	}
	em.Background = nil
	if _, ok := m["rwnd_limited_s"]; ok {
		t.Error("rwnd_limited_s compared though the simulator's flow has none (no receive_window: linux)")
	}
	// With Linux's receive window the simulator reports the time the
	// window held its sender back, beside the kernel's tcpi_rwnd_limited.
	rs, re := 0.03, 0.12
	sim.Flows[0].RwndLimitedS, em.Flows[0].RwndLimitedS = &rs, &re
	if d := compareResults(sim, em).Diff[0].Metrics["rwnd_limited_s"]; d == nil || *d != -0.75 {
		t.Errorf("rwnd_limited_s diff %v, want -0.75", d)
	}
}

// TestEmuBBROutputs: kernel BBR samples become bbr.csv (the simulator's
// columns, with the smoothed RTT named as such, and the gains) and the
// Figure 2 plot; the throughput column is what was acknowledged over each
// interval; flows without BBR samples write nothing.
func TestEmuBBROutputs(t *testing.T) {
	s, err := scenarios.Load("bbr-bw-probe")
	if err != nil {
		t.Fatal(err)
	}
	smp := func(at time.Duration, acked uint64, bw float64, bbr bool) endpoint.Sample {
		return endpoint.Sample{At: clock.Time(at), RTT: 41 * time.Millisecond, BytesAcked: acked, HasBBR: bbr, SndWnd: 65535,
			Unacked: 20, Sacked: 5, Lost: 3, RetransOut: 2,
			BBR: endpoint.BBRModel{BtlBw: bw, RTprop: 40 * time.Millisecond, PacingGain: 1.25, CwndGain: 2}}
	}
	res := &emu.Result{Result: experiment.Result{Flows: []experiment.FlowResult{{Name: "bbr"}, {Name: "cubic"}}}}
	det := &emu.Details{Samples: map[string][]endpoint.Sample{
		"bbr":   {smp(100*time.Millisecond, 0, 19e6, true), smp(200*time.Millisecond, 250_000, 19.5e6, true)},
		"cubic": {smp(100*time.Millisecond, 100, 0, false)},
	}}
	dir := t.TempDir()
	if err := writeEmuOutputs(dir, s, res, det); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bbr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "t_s,flow,btlbw_mbps,rtprop_ms,srtt_ms,throughput_mbps,pacing_gain,cwnd_gain\n" +
		"0.1,bbr,19,40,41,0,1.25,2\n" +
		"0.2,bbr,19.5,40,41,20,1.25,2\n"
	if string(b) != want {
		t.Errorf("bbr.csv:\n%s\nwant:\n%s", b, want)
	}
	for _, f := range []string{"bbr_estimates.png", "bbr_estimates.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	ti, err := os.ReadFile(filepath.Join(dir, "tcp_info.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ti)), "\n")
	// The pipe is the kernel's tcp_packets_in_flight: 20 out, 5 SACKed, 3
	// lost, 2 retransmitted: 14.
	if len(lines) != 4 || !strings.HasSuffix(lines[0], ",bbr_btlbw_mbps,bbr_rtprop_ms,bbr_pacing_gain,bbr_cwnd_gain,snd_wnd_bytes,sacked_segments,lost_segments,retrans_out_segments,in_flight_segments") ||
		!strings.HasSuffix(lines[1], ",19,40,1.25,2,65535,5,3,2,14") || !strings.HasSuffix(lines[3], ",,,,65535,5,3,2,14") {
		t.Errorf("tcp_info.csv:\n%s", ti)
	}
}

// TestCompareOutputs: compare --out writes comparison.json, each side's
// directory and, for a flow with BBR on both sides, one figure of both
// sides' estimates; without kernel BBR samples there is no such figure.
func TestCompareOutputs(t *testing.T) {
	s, err := scenarios.Load("bbr-bw-probe")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("duration", "1s"); err != nil {
		t.Fatal(err)
	}
	ss := s.Clone()
	simRes, n, err := experiment.RunCaptured(context.Background(), ss, experiment.Capture{})
	if err != nil {
		t.Fatal(err)
	}
	em := &emu.Result{Result: experiment.Result{Flows: []experiment.FlowResult{{Name: "bbr"}}}, Kernel: "6.18"}
	bbr := func(on bool) *emu.Details {
		d := &emu.Details{Samples: map[string][]endpoint.Sample{}}
		for k := 1; k <= 9; k++ {
			d.Samples["bbr"] = append(d.Samples["bbr"], endpoint.Sample{At: clock.Time(time.Duration(k) * 100 * time.Millisecond), HasBBR: on,
				Cwnd: uint32(10 * k), Ssthresh: math.MaxInt32, RTT: 40 * time.Millisecond,
				BBR: endpoint.BBRModel{BtlBw: 19e6, RTprop: 40 * time.Millisecond, PacingGain: 1, CwndGain: 2}})
		}
		return d
	}
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		c := compareResults(simRes, em)
		if err := writeCompareOutputs(dir, ss, s, c, n, bbr(on)); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"comparison.json", "sim/summary.json", "sim/bbr.csv", "emu/tcp_info.csv", "windows.svg", "windows.png"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("kernel BBR %v: %s: %v", on, f, err)
			}
		}
		_, err := os.Stat(filepath.Join(dir, "bbr_estimates.svg"))
		if on && err != nil {
			t.Errorf("no side-by-side BBR figure: %v", err)
		}
		if !on && err == nil {
			t.Errorf("a BBR figure without the kernel's BBR samples")
		}
	}
}

// TestWindowSeries: the windows figure pairs the simulator's window and
// in-flight data, in segments of its MSS, with the kernel's snd_cwnd and
// ssthresh, which is left out (NaN) while it is TCP_INFTHRESH, before the
// first loss; a flow without kernel samples draws nothing.
func TestWindowSeries(t *testing.T) {
	s, err := loadScenario("dumbbell", "", -1, []string{"duration=1s", "sample=100ms"})
	if err != nil {
		t.Fatal(err)
	}
	res, n, err := experiment.RunCaptured(context.Background(), s, experiment.Capture{})
	if err != nil {
		t.Fatal(err)
	}
	name := res.Flows[0].Name
	em := &emu.Result{Result: experiment.Result{Flows: []experiment.FlowResult{{Name: name}}}}
	det := &emu.Details{Samples: map[string][]endpoint.Sample{name: {
		{At: clock.Time(100 * time.Millisecond), Cwnd: 10, Ssthresh: math.MaxInt32, RTT: 50 * time.Millisecond},
		{At: clock.Time(200 * time.Millisecond), Cwnd: 7, Ssthresh: 7, RTT: 60 * time.Millisecond},
	}}}
	win, rtt := windowSeries(n, compareResults(res, em), det)
	if len(win) != 4 || len(rtt) != 2 {
		t.Fatalf("%d window and %d RTT series, want 4 and 2", len(win), len(rtt))
	}
	fs, mss := n.Series.Flows[0], float64(n.Flows[0].Sender.Config().MSS)
	for k, y := range win[0].Y {
		if want := float64(fs.CwndBytes[k]) / mss; y != want {
			t.Fatalf("simulator cwnd %d: %g segments, want %g", k, y, want)
		}
	}
	if ss := win[3].Y; !math.IsNaN(ss[0]) || ss[1] != 7 {
		t.Errorf("Linux ssthresh %v, want [NaN 7]", ss)
	}
	if got := rtt[1].Y; got[0] != 50 || got[1] != 60 {
		t.Errorf("Linux RTT %v ms, want [50 60]", got)
	}
	// Without a finite ssthresh (no loss yet, or BBR) the series is left
	// out rather than drawn empty.
	det.Samples[name][1].Ssthresh = math.MaxInt32
	if win, _ := windowSeries(n, compareResults(res, em), det); len(win) != 3 {
		t.Errorf("%d window series when Linux's ssthresh is never set, want 3", len(win))
	}
	det.Samples = map[string][]endpoint.Sample{}
	if win, _ := windowSeries(n, compareResults(res, em), det); len(win) != 0 {
		t.Errorf("%d series without kernel samples", len(win))
	}
}

// TestCompareSimSetRefused: a bad --sim-set is refused with the override
// named, before anything runs.
func TestCompareSimSetRefused(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"flows.0.cc.linux=7", "--sim-set flows.0.cc.linux=7: flows[0].cc: bbr: parameter linux = 7 is out of range [0, 1]"},
		{"nonsense", `--sim-set "nonsense": want dotted.path=value`},
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), []string{"compare", "bbr-rtt-probe", "--sim-set", c.set}, &out, &errb); code == 0 {
			t.Errorf("--sim-set %s: accepted", c.set)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("--sim-set %s: %q, want %q", c.set, errb.String(), c.want)
		}
	}
}

// TestDeviceDropsWarned: a run whose TUN devices dropped packets says so,
// in cclab emu's summary and in cclab compare's; a clean one does not.
func TestDeviceDropsWarned(t *testing.T) {
	link := []experiment.LinkResult{{Name: "bottleneck"}}
	sim := &experiment.Result{Scenario: "s", Links: link, Flows: []experiment.FlowResult{{Name: "a"}}}
	for _, drops := range []int64{0, 7} {
		em := &emu.Result{Result: experiment.Result{Links: link, Flows: []experiment.FlowResult{{Name: "a"}}}}
		em.Emulator.DeviceDrops = drops
		var cmp, sum bytes.Buffer
		printComparison(&cmp, compareResults(sim, em))
		printEmuResult(&sum, em)
		for name, out := range map[string]string{"compare": cmp.String(), "emu": sum.String()} {
			if warned := strings.Contains(out, "dropped 7 packets"); warned != (drops > 0) {
				t.Errorf("%s with %d device drops: warned %v:\n%s", name, drops, warned, out)
			}
		}
	}
}

// TestCompareTimingNote: compare notes the simulator's exact timing where
// TCP flows share a DropTail queue (two measured flows, or one beside
// background TCP connections) and the simulator's side has no ACK
// jitter, and only there.
func TestCompareTimingNote(t *testing.T) {
	one := []experiment.FlowResult{{Name: "a"}}
	two := []experiment.FlowResult{{Name: "a"}, {Name: "b"}}
	tcpBackground := []experiment.BackgroundResult{{Name: "websearch", Flows: 5}}
	udpBackground := []experiment.BackgroundResult{{Name: "udp"}}
	for _, c := range []struct {
		name     string
		scenario string
		sets     []string
		flows    []experiment.FlowResult
		bg       []experiment.BackgroundResult
		want     bool
	}{
		{"two flows", "dumbbell", nil, two, nil, true},
		{"one flow and TCP background", "dc-paper", nil, one, tcpBackground, true},
		{"one flow", "dumbbell", nil, one, nil, false},
		{"one flow and UDP background", "dumbbell", nil, one, udpBackground, false},
		{"with ACK jitter", "dc-paper", []string{"bottleneck.ack_jitter=100us"}, two, tcpBackground, false},
		{"behind CoDel", "dumbbell", []string{"bottleneck.queue.discipline=codel"}, two, nil, false},
	} {
		s, err := loadScenario(c.scenario, "", -1, c.sets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		note := timingNote(s, &experiment.Result{Flows: c.flows, Background: c.bg})
		if (note != "") != c.want {
			t.Errorf("%s: note %q, want one: %v", c.name, note, c.want)
		}
	}
	sim := &experiment.Result{Scenario: "s", Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 1}}}
	em := &emu.Result{Result: experiment.Result{Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 1}}}}
	c := compareResults(sim, em)
	c.Notes = []string{"a note"}
	var out bytes.Buffer
	printComparison(&out, c)
	if !strings.Contains(out.String(), "note: a note") {
		t.Errorf("note not printed:\n%s", out.String())
	}
}

// TestEmuWarnsUnapplied: fields the kernel path does not apply are
// warned about on stderr before the run (here a capture that cannot be
// created ends the command before any namespace is made).
func TestEmuWarnsUnapplied(t *testing.T) {
	var out, errb bytes.Buffer
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.pcap")
	code := Main(context.Background(), []string{"emu", "dumbbell", "--cc", "cubic", "--set", "transport.recv_window=16KB", "--pcap", bad}, &out, &errb)
	if code == 0 {
		t.Fatal("accepted an uncreatable capture")
	}
	if !strings.Contains(errb.String(), "warning (emulator): transport.recv_window: simulator-only (the kernel autotunes its receive window)") {
		t.Errorf("stderr lacks the recv_window warning:\n%s", errb.String())
	}
	// The datacenter scenario's min_rto is warned about, not refused.
	errb.Reset()
	Main(context.Background(), []string{"emu", "datacenter", "--cc", "bbr", "--pcap", bad}, &out, &errb)
	if !strings.Contains(errb.String(), "warning (emulator): transport.min_rto") || strings.Contains(errb.String(), "parameters") {
		t.Errorf("datacenter --cc bbr:\n%s", errb.String())
	}
}

// TestEmuCCReno: the emulator's --cc takes the kernel's name reno for
// newreno, which it runs as the kernel's reno.
func TestEmuCCReno(t *testing.T) {
	if got := emuCC("reno"); got != "newreno" {
		t.Errorf("emuCC(reno) = %q", got)
	}
	if got := emuCC("cubic"); got != "cubic" {
		t.Errorf("emuCC(cubic) = %q", got)
	}
	s, err := loadScenario("dumbbell", emuCC("reno"), -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Supported(s, false); err != nil {
		t.Errorf("--cc reno refused: %v", err)
	}
}

// TestEmuHeader: the emulator's table says it ran in real time on which
// kernel, not the simulator's events.
func TestEmuHeader(t *testing.T) {
	r := &emu.Result{Result: experiment.Result{Scenario: "dumbbell", Seed: 1, SimSeconds: 5, WallSeconds: 5.002, Events: 10475}, Mode: "emu", Kernel: "6.18.0"}
	var out bytes.Buffer
	printEmuResult(&out, r)
	first, _, _ := strings.Cut(out.String(), "\n")
	if first != "scenario dumbbell  seed 1  emulated 5.000 s in real time (Linux 6.18.0)" {
		t.Errorf("header %q", first)
	}
}

// TestCompareLegendAndUnapplied: the table says what its difference is
// and lists the fields the emulator did not apply; the JSON carries them.
func TestCompareLegendAndUnapplied(t *testing.T) {
	sim := &experiment.Result{Scenario: "s", Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 11}}}
	em := &emu.Result{Result: experiment.Result{Flows: []experiment.FlowResult{{Name: "a", GoodputMbps: 10}}}}
	c := compareResults(sim, em)
	c.Unapplied = []string{"transport.recv_window: simulator-only (the kernel autotunes its receive window)"}
	var out bytes.Buffer
	printComparison(&out, c)
	for _, want := range []string{"difference: (simulator - emulator) / emulator", "not applied by the emulator", "  transport.recv_window: simulator-only"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := emit(&out, true, c, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"unapplied": [`) {
		t.Errorf("JSON lacks unapplied:\n%s", out.String())
	}
	var help bytes.Buffer
	Main(context.Background(), []string{"help", "compare"}, &help, &help)
	if !strings.Contains(help.String(), "(simulator - emulator) / emulator") {
		t.Errorf("help lacks the difference's definition:\n%s", help.String())
	}
}

// TestEmuMessages: an interrupted run says its namespaces are gone, a
// non-root --clean says it needs root, and too many flows name the field.
func TestEmuMessages(t *testing.T) {
	if msg := interrupted(2).Error(); !strings.Contains(msg, "interrupted after 2.0 s of emulation; its network namespaces, with their TUN devices and sockets, were removed") {
		t.Errorf("interrupted: %q", msg)
	}
	perm := errors.New("ip netns del cclab-1-snd: Permission denied")
	if msg := cleanError(1000, perm).Error(); !strings.Contains(msg, "needs root") {
		t.Errorf("non-root --clean: %q", msg)
	}
	if err := cleanError(0, nil); err != nil {
		t.Errorf("root --clean: %v", err)
	}
	var out, errb bytes.Buffer
	Main(context.Background(), []string{"emu", "dumbbell", "--cc", "cubic", "--set", "flows.0.count=100000"}, &out, &errb)
	if !strings.Contains(errb.String(), "flows[0].count (100000)") || !strings.Contains(errb.String(), "5001-5499") {
		t.Errorf("count refusal:\n%s", errb.String())
	}
}
