package main

import (
	"context"
	"strings"
	"testing"
	"time"

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
	if err := s.Set("flows.1.cc", "newreno"); err != nil {
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
		t.Errorf("flow 1 (newreno, no such parameter) got linux: %v", s.Flows[1].CC.Params)
	}
	if err := (sides{params: []string{"lnux=1"}}).check(); err == nil || !strings.Contains(err.Error(), `"lnux"`) {
		t.Errorf("a typo: %v, want an error naming it", err)
	}
}
