package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/experiment"
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
