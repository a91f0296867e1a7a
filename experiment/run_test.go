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

// TestRunInSlicesMatchesOneRun checks that running in slices (to check the
// context) changes nothing: the same events, the same summary, as running
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
	n.Sched.After(2*time.Second, sim.HandlerFunc(func(clock.Time, any) { cancel() }), nil)
	res, err := RunNetwork(ctx, n)
	if res != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunNetwork after cancel: %v, %v; want a context.Canceled error", res, err)
	}
	if now := n.Now().Sub(0); now < 2*time.Second || now > 2*time.Second+Slice {
		t.Errorf("stopped at simulated %v, want within %v after 2s", now, Slice)
	}
}
