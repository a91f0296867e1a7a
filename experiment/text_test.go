package experiment

import (
	"fmt"
	"strings"
	"testing"
)

// TestRunTableBounds: bug 5. 100,000 flows printed 100,000 rows; an RTT
// never measured printed 0.00; Jain's index of flows that delivered
// nothing printed as a number.
func TestRunTableBounds(t *testing.T) {
	r := &Result{Scenario: "x"}
	for i := 0; i < 1000; i++ {
		r.Flows = append(r.Flows, FlowResult{Name: fmt.Sprintf("f-%d", i), CC: "newreno"})
	}
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	if n := strings.Count(out, "\n"); n > maxTableFlows+20 {
		t.Errorf("%d lines for 1000 flows", n)
	}
	if !strings.Contains(out, "(950 more flows: see --json or --out)") {
		t.Errorf("no note of the flows left out:\n%s", out)
	}
	// The note set the flow column's width when it was a cell of the table.
	if !strings.Contains(out, "\n  flow  ") {
		t.Errorf("the flow column is wider than its longest name (f-999):\n%s", out[:min(len(out), 300)])
	}
	if strings.Contains(out, "0.00  0.00  0.00") || !strings.Contains(out, "Jain's fairness index - ") {
		t.Errorf("unmeasured values printed as numbers:\n%s", out[:min(len(out), 600)])
	}
}
