package marlin

import (
	"context"
	"testing"

	"github.com/cclab/cclab/scenarios"
)

// TestEvaluateAllOnTrainingTimelines: with EvalConfig.Timeline the loss
// levels' runs each get a drawn timeline (so their rows differ from the
// scenario's timeline, the same for every scheme, and the report says
// which), while the unseen conditions keep their own timelines: their rows
// are identical to an evaluation without it.
func TestEvaluateAllOnTrainingTimelines(t *testing.T) {
	base, err := scenarios.Load("satcom-uhf")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Base: base, Runs: 3, Losses: []float64{0.03}, Policy: p, Jobs: 1}
	plain, err := EvaluateAll(context.Background(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeline = TrainingTimeline()
	drawn, err := EvaluateAll(context.Background(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Timeline != "" || drawn.Timeline != "switch 5s-15s, background x0.8-1.2" {
		t.Fatalf("report timelines %q and %q", plain.Timeline, drawn.Timeline)
	}
	differ := 0
	for i, r := range drawn.Results {
		if r.TransferTime != plain.Results[i].TransferTime {
			differ++
		}
	}
	// Every scheme runs into the switch (drawn from 5-15 s) or a changed
	// background on some of its three transfers.
	if differ < len(drawn.Results)-1 {
		t.Errorf("%d of %d rows changed with drawn timelines, want nearly all", differ, len(drawn.Results))
	}
	if len(drawn.Unseen) != len(plain.Unseen) || len(drawn.Unseen) == 0 {
		t.Fatalf("%d and %d unseen conditions", len(drawn.Unseen), len(plain.Unseen))
	}
	for i, u := range drawn.Unseen {
		for j, r := range u.Results {
			if r != plain.Unseen[i].Results[j] {
				t.Errorf("%s, %s: %+v with drawn loss-level timelines, %+v without", u.Name, r.Scheme, r, plain.Unseen[i].Results[j])
			}
		}
	}
}
