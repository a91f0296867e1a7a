package experiment

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/sim"
	"github.com/cclab/cclab/experiment/network"
)

// TestRunInSlicesMatchesOneRun checks that running with context checks
// changes nothing: the same events, the same summary, as running
// the network to its end at once.
func TestRunInSlicesMatchesOneRun(t *testing.T) {
	s := mustParse(t, lossyScenario("{model: bernoulli, p: 0.02}", "2MB", 3, 7))
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	got, _ := run(t, s)
	n, err := network.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	n.Run()
	want := Summarize(n, 0)
	got.WallSeconds = 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sliced run differs from one run:\n got %+v\nwant %+v", got, want)
	}
}

// TestRunStopsOnCancel checks that a cancelled context stops the run early
// with an error that wraps the context's and says how far it got.
func TestRunStopsOnCancel(t *testing.T) {
	s := mustParse(t, lossyScenario("{model: bernoulli, p: 0.01}", "1GB", 1, 1))
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := network.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel from inside the simulation, at a known simulated time.
	var at uint64
	n.Sched.After(2*time.Second, sim.HandlerFunc(func(clock.Time, any) { at = n.Sched.Events(); cancel() }), nil)
	res, err := RunNetwork(ctx, n)
	if res != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunNetwork after cancel: %v, %v; want a context.Canceled error", res, err)
	}
	// The context is looked at every 4096 events (network.RunContext):
	// a bound on the wall time however sparse or dense the events are.
	if after := n.Sched.Events() - at; n.Now().Sub(0) < 2*time.Second || after > 4096 {
		t.Errorf("stopped at simulated %v, %d events after the cancel; want at most 4096", n.Now().Sub(0), after)
	}
}
