package scenarios_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
	_ "github.com/cclab/cclab/traces"
)

// TestBuiltinsRunDeterministically loads every built-in scenario, runs its
// first two simulated seconds twice and compares the results.
func TestBuiltinsRunDeterministically(t *testing.T) {
	names := scenarios.Names()
	if len(names) < 7 {
		t.Fatalf("built-in scenarios: %v", names)
	}
	for _, name := range names {
		run := func() []byte {
			s, err := scenarios.Load(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			s.Duration = scenario.Dur(2 * time.Second)
			r, _, err := experiment.Run(context.Background(), s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.WallSeconds = 0
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		a, b := run(), run()
		if string(a) != string(b) {
			t.Errorf("%s: two runs with the same seed differ", name)
		}
		if !strings.Contains(string(a), `"flows"`) {
			t.Errorf("%s: result without flows: %.200s", name, a)
		}
	}
}

func TestUnknownBuiltin(t *testing.T) {
	_, err := scenarios.Load("mars")
	if err == nil || !strings.Contains(err.Error(), "satcom-uhf") {
		t.Errorf("unknown scenario error %v should list the built-ins", err)
	}
}
