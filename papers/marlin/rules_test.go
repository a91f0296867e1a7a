package marlin

import (
	"context"
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
		return satcomOrUHF(e, k, func() units.Bytes { return sat })
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
// queue for a quarter of the time); with the switch at 5 s the
// retransmission allowance is below the ideal sender's (CUBIC on Linux
// 6.18's recovery resends little beyond the radio's random losses), so
// no sender that leaves the background its share meets it; with the
// switch at 20 s (all SATCOM) a fixed window meets both.
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
	// With the switch at 5 s the allowance is below what random loss alone
	// costs: the ideal sender (the background's leftover capacity, no loss
	// but the radio's) retransmits p/(1-p) per packet it delivers over
	// UHF, more than 0.23 x CUBIC's. Rules told the switch, which met both
	// goals against the transport before Linux 6.18's recovery was
	// modelled, now miss.
	early := unseenCondition(t, "switch at 5 s")
	rows, _, err := Evaluate(context.Background(), EvalConfig{Base: early, Runs: runs, Losses: []float64{0.03}, Schemes: []Scheme{CUBIC, Ideal}})
	if err != nil {
		t.Fatal(err)
	}
	allowance, unavoidable := 0.23*rows[0].Retrans, rows[1].Retrans
	t.Logf("switch at 5 s: allowance %.1f retransmissions (CUBIC %.1f), the ideal sender's %.1f", allowance, rows[0].Retrans, unavoidable)
	if rows[0].Scheme != CUBIC || rows[1].Scheme != Ideal || allowance >= unavoidable {
		t.Errorf("switch at 5 s: allowance %.1f, the ideal sender's retransmissions %.1f (%v, %v): want the allowance below", allowance, unavoidable, rows[0].Scheme, rows[1].Scheme)
	}
	if met := meets("switch at 5 s", []windowRule{switchedWindow(120_000, 1.6), switchedWindow(125_000, 1.9)}); len(met) > 0 {
		t.Errorf("switch at 5 s: %v meet both goals, below the ideal sender's retransmissions", met)
	}
	if met := meets("switch at 20 s", []windowRule{fixedWindow(110_000)}); len(met) == 0 {
		t.Error("switch at 20 s: the fixed 110 KB window misses the goals the docs say it meets")
	}
}

// compactRuleStats is what compactRuleReturn measures over a condition's
// transfers: mean transfer time, retransmissions and undiscounted return
// of the compact reward per transfer, and, over the steps on the UHF link
// from 8 s on, the mean and standard deviation of the step reward and the
// mean of its delivered and queueing terms.
type compactRuleStats struct {
	secs, retx, ret                   float64
	uhfMean, uhfStd, uhfDeliv, uhfQue float64
}

// compactRuleReturn runs the evaluation's transfers (600 KB at 3% UHF
// loss, seeds 1..runs) on s through the compact environment (span 4,
// queueing weight qc, link shaping if shape), with rule r choosing each
// step's window.
func compactRuleReturn(t *testing.T, s *scenario.Scenario, runs int, qc float64, shape bool, r windowRule) compactRuleStats {
	t.Helper()
	const span = 4
	e, err := NewEnv(EnvConfig{Base: WithLoss(s, 0.03), Loss: -1, Bytes: 600_000, Variant: VariantCompact, Action: ActionBDP, BDPSpan: span, QueueCost: qc, LinkShaping: shape})
	if err != nil {
		t.Fatal(err)
	}
	var st compactRuleStats
	var n, sq float64
	act := []float32{0}
	for seed := range uint64(runs) {
		e.Reset(1 + seed)
		for range 1200 {
			a := math.Log2(float64(r.win(e))/float64(e.compact.bdp)) / span
			act[0] = float32(math.Max(-1, math.Min(1, a)))
			nt := e.net
			uhf := nt.LinkRate().BytesIn(time.Second) <= 100_000 && time.Duration(e.steps)*StepInterval >= 8*time.Second
			_, rew, term, _, info := e.Step(act)
			st.ret += rew
			if uhf {
				n++
				st.uhfMean += rew
				sq += rew * rew
				// Each term alone, from the reward itself, at the weights
				// the step was scored with: the step's time cost added
				// back to a step with only that term.
				wq, ref := e.compactWeights()
				dt := StepInterval.Seconds()
				st.uhfDeliv += compactReward(dt, info["delivered_kb"]*1000, 0, 1, wq, ref) + dt
				st.uhfQue -= compactReward(dt, 0, 0, info["rtt_inflation"], wq, ref) + dt
			}
			if term {
				break
			}
		}
		var o Outcome
		fillFromResult(&o, experiment.Summarize(e.Network(), 0), 120*time.Second)
		st.secs += o.TransferTime
		st.retx += o.Retransmissions
	}
	st.secs /= float64(runs)
	st.retx /= float64(runs)
	st.ret /= float64(runs)
	st.uhfMean /= n
	st.uhfStd = math.Sqrt(max(sq/n-st.uhfMean*st.uhfMean, 0))
	st.uhfDeliv /= n
	st.uhfQue /= n
	return st
}

// TestCompactRewardRanksUHFWindows checks what docs/marlin.md says of the
// compact reward with the switch at 5 s, where the learned policies hold
// 2-3 UHF BDPs against the privileged teacher's 4 and lose about a second:
// at the queueing weight of the best configuration (0.02) the reward
// ranks every window tried (1-6 UHF BDPs) as their transfer times do, so
// the shortfall is the learner's, not the reward's; at the default weight
// (0.2) it prefers 3 BDPs to the faster 4. On the UHF link the step
// rewards of 2 and 4 BDPs differ by far less than the step reward's
// spread, which is what a learner that sees a couple of seconds ahead
// sees; link shaping widens that per-step lead by half or more. (Against
// the transport before Linux 6.18's recovery was modelled the reward at
// 0.02 preferred the teacher's 4 to 6 BDPs, and 3 BDPs per step.)
func TestCompactRewardRanksUHFWindows(t *testing.T) {
	const runs = 100
	s := unseenCondition(t, "switch at 5 s")
	ks := []float64{1, 2, 3, 4, 6}
	stats := func(qc float64, shape bool) map[float64]compactRuleStats {
		m := map[float64]compactRuleStats{}
		for _, k := range ks {
			st := compactRuleReturn(t, s, runs, qc, shape, switchedWindow(150_000, k))
			t.Logf("queueing weight %g, link shaping %v, %g UHF BDPs: %.2f s, %.1f retransmissions, return %.2f; UHF steps: reward %.4f ± %.4f (delivered term %.4f, queueing term %.4f)",
				qc, shape, k, st.secs, st.retx, st.ret, st.uhfMean, st.uhfStd, st.uhfDeliv, st.uhfQue)
			m[k] = st
		}
		return m
	}
	low := stats(0.02, false)
	for i := 1; i < len(ks); i++ {
		a, b := low[ks[i-1]], low[ks[i]]
		if (a.secs > b.secs) != (a.ret < b.ret) {
			t.Errorf("queueing weight 0.02: %g and %g UHF BDPs ranked by return (%.2f, %.2f) against their times (%.2f, %.2f s)", ks[i-1], ks[i], a.ret, b.ret, a.secs, b.secs)
		}
	}
	if d := low[4].uhfMean - low[2].uhfMean; !(d > 0 && d < low[4].uhfStd/4) {
		t.Errorf("queueing weight 0.02: UHF step reward of 4 BDPs over 2 BDPs %.4f, want positive and under a quarter of the spread %.4f", d, low[4].uhfStd)
	}
	def := stats(QueueCost, false)
	if def[3].ret <= def[4].ret || def[3].secs <= def[4].secs {
		t.Errorf("default queueing weight: 3 UHF BDPs %.2f s, return %.2f; 4 BDPs %.2f s, return %.2f: want 3 slower but preferred", def[3].secs, def[3].ret, def[4].secs, def[4].ret)
	}
	shaped := stats(0.02, true)
	if d0, d1 := low[4].uhfMean-low[2].uhfMean, shaped[4].uhfMean-shaped[2].uhfMean; d1 < 1.5*d0 {
		t.Errorf("link shaping: UHF step reward of 4 BDPs over 2 %.4f, want at least 1.5 times the unshaped %.4f", d1, d0)
	}
}

// satcomOrUHF holds sat() on the SATCOM segment (the link runs at more
// than 100 KB/s) and k x the current link's nominal BDP after the switch.
func satcomOrUHF(e *Env, k float64, sat func() units.Bytes) units.Bytes {
	n := e.net
	if n.LinkRate().BytesIn(time.Second) > 100_000 {
		return max(sat(), e.mss)
	}
	bdp := float64(n.LinkRate().BytesIn(n.NominalRTT(e.flow, n.CurrentSegment())))
	return min(max(units.Bytes(k*bdp), e.mss), WindowCap)
}

// scheduledWindow is told the background's schedule: on SATCOM it holds
// low from `from` to `to` into each UDP elephant's phase (they start at 0
// and 4 s of the 8-s cycle and last 2 s) and sat otherwise.
func scheduledWindow(sat, low units.Bytes, from, to time.Duration, k float64) windowRule {
	return windowRule{fmt.Sprintf("%d KB, %d KB from %v to %v into each UDP phase, then %g UHF BDPs", sat/1000, low/1000, from, to, k), func(e *Env) units.Bytes {
		return satcomOrUHF(e, k, func() units.Bytes {
			c := time.Duration(e.net.Now()) % (4 * time.Second)
			if c >= from && c < to {
				return low
			}
			return sat
		})
	}}
}

// queueWindow is told the bottleneck queue's occupancy at each step: on
// SATCOM it holds low while th or more packets are queued, sat otherwise.
func queueWindow(sat, low units.Bytes, th int, k float64) windowRule {
	return windowRule{fmt.Sprintf("%d KB, %d KB while %d or more packets are queued, then %g UHF BDPs", sat/1000, low/1000, th, k), func(e *Env) units.Bytes {
		return satcomOrUHF(e, k, func() units.Bytes {
			if e.net.Bottleneck.Queue().Len() >= th {
				return low
			}
			return sat
		})
	}}
}

// delayWindow reads only the sender's own RTT samples on SATCOM, what a
// policy can observe: it holds low while the latest sample exceeds the
// minimum by th or more (a queue that deep), sat otherwise.
func delayWindow(sat, low units.Bytes, th time.Duration, k float64) windowRule {
	return windowRule{fmt.Sprintf("%d KB, %d KB while the latest RTT is %v or more above the minimum, then %g UHF BDPs", sat/1000, low/1000, th, k), func(e *Env) units.Bytes {
		return satcomOrUHF(e, k, func() units.Bytes {
			r := e.flow.Sender.RTT()
			if r.Samples() > 0 && r.Latest()-r.Min() >= th {
				return low
			}
			return sat
		})
	}}
}

// TestBackgroundGoalsBeyondWindowRules checks what docs/marlin.md says
// of the paper's agent's two goals with the background x1.5: no window
// rule tried meets both, not even one told when the UDP elephants
// overload the link (the background's schedule, or the queue's occupancy
// at each step). Against the transport before Linux 6.18's recovery was
// modelled such rules met both; CUBIC now retransmits less (77.6 against
// 102.6), the allowance fell to 17.9, and of 360 told rules searched the
// closest are the three below, each missing one goal. Rules that learn
// the overload from their own RTT samples, which on the 1-s SATCOM path
// report a full queue one to two seconds late, do worse: every such rule
// fast enough retransmits more than twice the allowance.
func TestBackgroundGoalsBeyondWindowRules(t *testing.T) {
	const runs = 100
	s := unseenCondition(t, "background x1.5")
	c := cubicRow(t, s, runs)
	gs, gr := 0.87*c.TransferTime, 0.23*c.Retrans
	outcome := func(r windowRule) (ok bool, secs, retx float64) {
		secs, retx = ruleOutcome(t, s, runs, r)
		t.Logf("%s: %.2f s, %.1f retransmissions (goals %.2f s, %.1f)", r.name, secs, retx, gs, gr)
		return secs <= gs && retx <= gr, secs, retx
	}
	for _, r := range []windowRule{
		queueWindow(95_000, 1500, 95, 2),
		queueWindow(95_000, 1500, 90, 2),
		scheduledWindow(95_000, 10_000, 1250*time.Millisecond, 2500*time.Millisecond, 1.5),
	} {
		if ok, _, _ := outcome(r); ok {
			t.Errorf("%s meets both goals, which the docs say no rule tried does", r.name)
		}
	}
	for _, sat := range []units.Bytes{95_000, 110_000, 130_000} {
		for _, low := range []units.Bytes{1500, 30_000, 60_000} {
			for _, th := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
				r := delayWindow(sat, low, th, 1.5)
				if _, secs, retx := outcome(r); secs <= gs && retx <= 2*gr {
					t.Errorf("%s: %.1f retransmissions at %.2f s, within twice the allowance %.1f that the docs say every fast enough rule reading its own RTT exceeds", r.name, retx, secs, gr)
				}
			}
		}
	}
}
