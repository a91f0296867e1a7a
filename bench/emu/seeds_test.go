package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/scenarios"
)

func TestRunStatsRow(t *testing.T) {
	var r runStats
	for _, f := range []float64{17, 25, 16, 18} {
		fct := f
		r.add(experiment.FlowResult{FCT: &fct, Retransmissions: 10, Drops: 7, Losses: 2, RTOs: 1}, 20*time.Second)
	}
	r.add(experiment.FlowResult{Retransmissions: 30, Drops: 20, Losses: 4, RTOs: 3}, 20*time.Second) // unfinished
	// Five runs, four finished: mean 19, median the midpoint of 17 and 18,
	// one above 20 s, one unfinished; per run 14 retransmissions for 12
	// discarded and 1.4 timeouts.
	want := "| cubic | simulator | 5 | 19.00 | 17.50 | 4.08 | 1 | 1 | 14.0 for 12.0 | 1.40 |"
	if got := r.row("cubic", "simulator"); got != want {
		t.Errorf("row\n got %s\nwant %s", got, want)
	}
}

func TestOverridesNameTheBadOne(t *testing.T) {
	var o overrides
	if err := o.Set("transport.lost_retransmissions=rack,seed=3"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"foo", "a=1,=2", "x=1,y"} {
		err := o.Set(bad)
		if err == nil || !strings.Contains(err.Error(), "want path=value") {
			t.Errorf("Set(%q) = %v, want an error asking for path=value", bad, err)
		}
	}
	if len(o) != 1 {
		t.Errorf("%d overrides kept, want only the good one", len(o))
	}
}

// TestFlowSelection: -flow picks a flow by its result name, replicated
// flows are named name-K as the simulator names them, and an unknown name
// is refused with the names there are.
func TestFlowSelection(t *testing.T) {
	s, err := scenarios.Load("dc-paper")
	if err != nil {
		t.Fatal(err)
	}
	names := flowNames(s)
	res, _, err := experiment.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(res.Flows) {
		t.Fatalf("flowNames gives %d names, the run %d flows", len(names), len(res.Flows))
	}
	for i, name := range names {
		f, err := pick(res, name)
		if err != nil || f.Name != res.Flows[i].Name {
			t.Errorf("pick(%q) = %q, %v; want flow %d, %q", name, f.Name, err, i, res.Flows[i].Name)
		}
	}
	if f, err := pick(res, ""); err != nil || f.Name != res.Flows[0].Name {
		t.Errorf("pick(\"\") = %q, %v; want the first flow", f.Name, err)
	}
	if _, err := pick(res, "nope"); err == nil || !strings.Contains(err.Error(), names[0]) {
		t.Errorf("pick(nope) = %v, want an error listing the flows", err)
	}
}

// TestFidelitySides: -cc-param reaches the simulator's flows whose
// controller has the parameter and no other; -set reaches every flow; an
// unknown parameter is refused before any run.
func TestFidelitySides(t *testing.T) {
	d := sides{sets: []string{"transport.lost_retransmissions=rack"}, params: []string{"linux=1"}}
	if err := d.check(); err != nil {
		t.Fatal(err)
	}
	s, err := load("lossy", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("flows.1.cc", "vegas"); err != nil {
		t.Fatal(err)
	}
	if err := d.both(s); err != nil {
		t.Fatal(err)
	}
	if err := d.sim(s); err != nil {
		t.Fatal(err)
	}
	if s.Transport.LostRetransmissions != "rack" {
		t.Errorf("-set did not reach the transport: %q", s.Transport.LostRetransmissions)
	}
	if s.Flows[0].CC.Params["linux"] != 1 {
		t.Errorf("flow 0 (%s): params %v, want linux=1", s.Flows[0].CC.Name, s.Flows[0].CC.Params)
	}
	if _, ok := s.Flows[1].CC.Params["linux"]; ok {
		t.Errorf("flow 1 (vegas, no such parameter) got linux: %v", s.Flows[1].CC.Params)
	}
	if err := (sides{params: []string{"lnux=1"}}).check(); err == nil || !strings.Contains(err.Error(), `"lnux"`) {
		t.Errorf("a typo: %v, want an error naming it", err)
	}
}

// TestAllStatsRow: -all sums every flow of a run and gives the mean and
// range over the runs; a run in which no flow delivered has no Jain index
// and is said so, not averaged in as 0 or 1. Loss probes, recoveries and
// timeouts by state come from the kernels' counters for a kernel run (a
// counter that did not change is absent: 0) and from the flows' for a
// simulator run; a run with neither shows none.
func TestAllStatsRow(t *testing.T) {
	j1, j2 := 0.9, 0.7
	var a allStats
	a.add(&experiment.Result{Jain: &j1, Flows: []experiment.FlowResult{
		{GoodputMbps: 3, Retransmissions: 10, Drops: 9, Losses: 1, RTOs: 2},
		{GoodputMbps: 1, Retransmissions: 20, Drops: 18, RTOs: 0},
	}}, &emu.KernelCounters{Sender: map[string]int64{"TcpExt.TCPLossProbes": 7, "TcpExt.TCPSackRecovery": 9, "TcpExt.TCPSackRecoveryFail": 2, "TcpExt.TCPLossFailures": 1, "TcpExt.TCPLostRetransmit": 11},
		Receiver: map[string]int64{"TcpExt.TCPAckCompressed": 40}})
	a.add(&experiment.Result{Jain: &j2, Flows: []experiment.FlowResult{
		{GoodputMbps: 5, Retransmissions: 4, Drops: 4, RTOs: 1},
		{GoodputMbps: 0.5, Retransmissions: 6, Drops: 5, Losses: 1, RTOs: 1},
	}}, &emu.KernelCounters{Sender: map[string]int64{"TcpExt.TCPSackRecovery": 3}})
	a.add(&experiment.Result{Flows: []experiment.FlowResult{{}, {}}}, &emu.KernelCounters{})
	// Runs: goodput 4, 5.5, 0; retransmissions 30, 10, 0; discarded 28,
	// 10, 0; RTOs 2, 2, 0, of them first in recovery 2, 0, 0 and in the
	// loss state 1, 0, 0; lost retransmissions 11, 0, 0; probes 7, 0, 0;
	// recoveries 9, 3, 0; slowest 1, 0.5, 0; flows under 0.1 Mbit/s 0, 0,
	// 2; ACKs compressed 40, 0, 0.
	want := "| cubic | kernel | 3 | 3.17 [0.00-5.50] | 13 [0-30] | 13 [0-28] | 1 [0-2] | 1 [0-2] | 0 [0-1] | 4 [0-11] | 2 [0-7] | 4 [0-9] | 0.800 [0.700-0.900] (1 runs without) | 0.500 [0.000-1.000] | 1 [0-2] | 13 [0-40] |"
	if got := a.row("cubic", "kernel"); got != want {
		t.Errorf("row\n got %s\nwant %s", got, want)
	}
	var one allStats
	p, v, r, l, c, x := int64(4), int64(6), int64(1), int64(2), int64(5), int64(7)
	one.add(&experiment.Result{Jain: &j1, Flows: []experiment.FlowResult{{GoodputMbps: 2, Retransmissions: 3, RTOs: 3, LossProbes: &p, FastRecoveries: &v, RTOsInRecovery: &r, RTOsInLoss: &l, LostRetransmits: &x, AcksCompressed: &c}}}, nil)
	if got, want := one.row("newreno", "simulator"), "| newreno | simulator | 1 | 2.00 | 3 | 0 | 3 | 1 | 2 | 7 | 4 | 6 | 0.900 | 2.000 | 0 | 5 |"; got != want {
		t.Errorf("one run\n got %s\nwant %s", got, want)
	}
	// A run whose background opened TCP connections: the kernel's
	// namespace counters count them too, so they count for nothing.
	var mixed allStats
	mixed.add(&experiment.Result{Jain: &j1, Flows: []experiment.FlowResult{{GoodputMbps: 2, Retransmissions: 3}},
		Background: []experiment.BackgroundResult{{Name: "websearch", Flows: 5}}},
		&emu.KernelCounters{Sender: map[string]int64{"TcpExt.TCPLossProbes": 7, "TcpExt.TCPSackRecovery": 9, "TcpExt.TCPLostRetransmit": 11},
			Receiver: map[string]int64{"TcpExt.TCPAckCompressed": 40}})
	if got, want := mixed.row("bbr", "kernel"), "| bbr | kernel | 1 | 2.00 | 3 | 0 | 0 | - | - | - | - | - | 0.900 | 2.000 | 0 | - |"; got != want {
		t.Errorf("a run with background TCP connections\n got %s\nwant %s", got, want)
	}
	var uncounted allStats
	uncounted.add(&experiment.Result{Flows: []experiment.FlowResult{{GoodputMbps: 2}}}, nil)
	if got, want := uncounted.row("bbr", "simulator"), "| bbr | simulator | 1 | 2.00 | 0 | 0 | 0 | - | - | - | - | - | - (1 runs without) | 2.000 | 0 | 0 |"; got != want {
		t.Errorf("a run without counters\n got %s\nwant %s", got, want)
	}
}

// TestRefLineReadsBack: seeds -tsv writes each kernel run as a line of a
// many-flow reference, which the tests' reader takes back as written:
// every flow's goodput, retransmissions, drops plus losses and RTOs
// summed, and the run's Jain index.
func TestRefLineReadsBack(t *testing.T) {
	jain := 0.93456
	res := &experiment.Result{Jain: &jain, Flows: []experiment.FlowResult{
		{GoodputMbps: 1.25, Retransmissions: 10, Drops: 7, Losses: 2, RTOs: 1},
		{GoodputMbps: 2.5, Retransmissions: 5, Drops: 4, RTOs: 3},
	}}
	path := filepath.Join(t.TempDir(), "ref.tsv")
	text := "# a comment\n" + refHeader + "\n" + refLine("bench/x.yaml", "newreno", 3, res) + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := readKernelRuns(path)
	if err != nil {
		t.Fatal(err)
	}
	got := runs[[2]string{"bench/x.yaml", "newreno"}]
	want := kernelRun{goodput: 3.75, retx: 15, rtos: 4, jain: 0.9346}
	if len(got) != 1 || got[0] != want {
		t.Errorf("read back %+v, want [%+v] (from %q)", got, want, text)
	}
	if !strings.HasSuffix(refLine("s", "c", 1, res), "\t13\t4\t0.9346") {
		t.Errorf("line %q: want 13 discarded, 4 RTOs, Jain 0.9346", refLine("s", "c", 1, res))
	}
}

// TestSweepValues: -sweep's path=v1,v2,... gives one override per value;
// a missing path, an empty value or a second field is refused, naming the
// flag.
func TestSweepValues(t *testing.T) {
	path, sets, err := sweepValues("bottleneck.delay=10ms, 10.01ms,10.02ms")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bottleneck.delay=10ms", "bottleneck.delay=10.01ms", "bottleneck.delay=10.02ms"}
	if path != "bottleneck.delay" || !slices.Equal(sets, want) {
		t.Errorf("got %q %q, want bottleneck.delay %q", path, sets, want)
	}
	for _, bad := range []string{"", "bottleneck.delay", "=1ms", "bottleneck.delay=", "bottleneck.delay=1ms,,2ms", "a,b=1"} {
		if _, _, err := sweepValues(bad); err == nil || !strings.Contains(err.Error(), "-sweep") {
			t.Errorf("sweepValues(%q) = %v, want an error naming -sweep", bad, err)
		}
	}
}

// TestSweepRowAveragesValues: a row over a sweep is the mean of each
// value's mean, whatever the number of runs at each, with the values'
// range, in seeds -all's columns; a value without a column (here Jain's
// index) leaves that column's mean to the others and is counted.
func TestSweepRowAveragesValues(t *testing.T) {
	var w allStats
	jains := []*float64{ptr(0.9), ptr(0.7), nil}
	for i, runs := range [][]int64{{100, 300}, {50}, {10, 20, 30}} {
		var a allStats
		for _, rtos := range runs {
			a.add(&experiment.Result{Flows: []experiment.FlowResult{{GoodputMbps: 1, Retransmissions: 2 * rtos, RTOs: rtos}}, Jain: jains[i]}, nil)
		}
		w.addMeans(&a)
	}
	// Value means 200, 50 and 20: their mean 90, range 20-200.
	want := "| newreno | kernel | 3 | 1.00 [1.00-1.00] | 180 [40-400] | 0 [0-0] | 90 [20-200] | - | - | - | - | - | 0.800 [0.700-0.900] (1 runs without) | 1.000 [1.000-1.000] | 0 [0-0] | 0 [0-0] |"
	if got := w.row("newreno", "kernel"); got != want {
		t.Errorf("row\n got %s\nwant %s", got, want)
	}
	head, _, _ := strings.Cut(allHeader, "\n")
	if got, want := strings.Count(w.row("a", "b"), "|"), strings.Count(head, "|"); got != want {
		t.Errorf("row has %d column bars, the header %d", got, want)
	}
}

func ptr(x float64) *float64 { return &x }
