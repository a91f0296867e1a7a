package marlin

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// windowRule chooses the window for the next 100-ms step; it may read the
// simulation (privileged information no policy has).
type windowRule struct {
	name string
	win  func(e *Env) units.Bytes
}

// fixedWindow holds w throughout.
func fixedWindow(w units.Bytes) windowRule {
	return windowRule{fmt.Sprintf("fixed %d KB", w/1000), func(*Env) units.Bytes { return w }}
}

// switchedWindow holds sat while the link runs at more than 100 KB/s (the
// SATCOM segment) and k x the current link's nominal BDP after it (the
// UHF segment): a sender told the switch's instant and the UHF link.
func switchedWindow(sat units.Bytes, k float64) windowRule {
	return windowRule{fmt.Sprintf("%d KB, then %g UHF BDPs", sat/1000, k), func(e *Env) units.Bytes {
		n := e.net
		if n.LinkRate().BytesIn(time.Second) > 100_000 {
			return sat
		}
		bdp := float64(n.LinkRate().BytesIn(n.NominalRTT(e.flow, n.CurrentSegment())))
		return min(max(units.Bytes(k*bdp), e.mss), WindowCap)
	}}
}

// ruleOutcome runs the evaluation's transfers (600 KB at 3% UHF loss,
// seeds 1..runs) on s through the paper's environment, whose action
// w' = w (1 + a) lets any window from one segment to the cap be held, with
// the rule choosing the window, and returns the mean transfer time in
// seconds and the mean retransmissions.
func ruleOutcome(t *testing.T, s *scenario.Scenario, runs int, r windowRule) (secs, retx float64) {
	t.Helper()
	e, err := NewEnv(EnvConfig{Base: WithLoss(s, 0.03), Loss: -1, Bytes: 600_000})
	if err != nil {
		t.Fatal(err)
	}
	act := []float32{0}
	for seed := range uint64(runs) {
		e.Reset(1 + seed)
		for range 1200 { // 120 s of 100-ms steps
			cw := float64(e.flow.Sender.CC().CongestionWindow())
			act[0] = float32(math.Max(-1, math.Min(1, float64(r.win(e))/cw-1)))
			if _, _, term, _, _ := e.Step(act); term {
				break
			}
		}
		var o Outcome
		fillFromResult(&o, experiment.Summarize(e.Network(), 0), 120*time.Second)
		secs += o.TransferTime
		retx += o.Retransmissions
	}
	return secs / float64(runs), retx / float64(runs)
}

// TestWindowRulesAgainstPaperAgentUnseenGoals checks what docs/marlin.md
// says of the paper's agent's two goals (at most 0.87 x CUBIC's transfer
// time and 0.23 x its retransmissions) on the conditions never trained
// on: with the background x1.5 no window rule tried meets both, fixed or
// told the switch (every rule fast enough retransmits more than twice
// the allowance, because the UDP stream alone overfills the drop-tail
// queue for a quarter of the time); with the switch at 5 s a rule told
// the switch meets both, so that goal is reachable in principle; with
// the switch at 20 s (all SATCOM) a fixed window meets both.
func TestWindowRulesAgainstPaperAgentUnseenGoals(t *testing.T) {
	const runs = 100
	meets := func(cond string, rules []windowRule) (met []string) {
		s := unseenCondition(t, cond)
		c := cubicRow(t, s, runs)
		gs, gr := 0.87*c.TransferTime, 0.23*c.Retrans
		for _, r := range rules {
			secs, retx := ruleOutcome(t, s, runs, r)
			ok := secs <= gs && retx <= gr
			t.Logf("%s, %s: %.2f s, %.1f retransmissions (goals %.2f s, %.1f) met %v", cond, r.name, secs, retx, gs, gr, ok)
			if ok {
				met = append(met, r.name)
			}
			if cond == "background x1.5" && secs <= gs && retx <= 2*gr {
				t.Errorf("background x1.5, %s: %.1f retransmissions at %.2f s, within twice the allowance %.1f that the docs say every fast enough rule exceeds", r.name, retx, secs, gr)
			}
		}
		return met
	}

	var heavy []windowRule
	for _, w := range []units.Bytes{30_000, 60_000, 90_000, 120_000, 150_000} {
		heavy = append(heavy, fixedWindow(w))
	}
	for _, sat := range []units.Bytes{90_000, 120_000, 150_000} {
		for _, k := range []float64{1, 2, 4} {
			heavy = append(heavy, switchedWindow(sat, k))
		}
	}
	if met := meets("background x1.5", heavy); len(met) > 0 {
		t.Errorf("background x1.5: %v meet both goals, which the docs call out of these rules' reach", met)
	}
	if met := meets("switch at 5 s", []windowRule{switchedWindow(120_000, 1.6), switchedWindow(125_000, 1.9)}); len(met) == 0 {
		t.Error("switch at 5 s: no rule told the switch meets both goals, which the docs call reachable")
	}
	if met := meets("switch at 20 s", []windowRule{fixedWindow(110_000)}); len(met) == 0 {
		t.Error("switch at 20 s: the fixed 110 KB window misses the goals the docs say it meets")
	}
}
