package deepcc

import (
	"context"
	"fmt"
	"time"

	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// CoexistCase is one pairing of the coexistence study: a tested flow
// beside Competitors flows of another scheme.
type CoexistCase struct {
	Name string `json:"name"`
	// Tested is the flow under study; Against the competitors' spec (its
	// label is numbered per flow).
	Tested  FlowSpec `json:"tested"`
	Against FlowSpec `json:"against"`
	// TestedMbps and CompetitorMbps (per competing flow) are mean
	// goodputs; Ratio is TestedMbps / CompetitorMbps per run, averaged;
	// Jain is Jain's index over all flows; TestedP95Ms the tested flow's
	// p95 queueing delay; Utilization the bottleneck's.
	TestedMbps     Stat `json:"tested_mbps"`
	CompetitorMbps Stat `json:"competitor_mbps"`
	Ratio          Stat `json:"ratio"`
	Jain           Stat `json:"jain"`
	TestedP95Ms    Stat `json:"tested_p95_ms"`
	Utilization    Stat `json:"utilization"`
	// Example is the first run, with its throughput time series.
	Example SharedResult `json:"example"`
}

// CoexistReport is the coexistence study (the paper's Figures 11-12).
type CoexistReport struct {
	Link        Link          `json:"link"`
	Duration    float64       `json:"duration_s"`
	Runs        int           `json:"runs"`
	Competitors int           `json:"competitors"`
	Cases       []CoexistCase `json:"cases"`
	WallSeconds float64       `json:"wall_seconds"`
}

// CoexistCases are the study's pairings: CUBIC beside CUBIC (the fair
// reference), BBR and Vegas beside CUBIC (Figure 11's classic schemes),
// DeepCC beside CUBIC with Figure 11's target (5 Mbit/s, 180 ms, 1%) and
// in both preference modes (Figure 12), and DeepCC beside DeepCC flows
// with the same target, and in high-throughput mode.
func CoexistCases(start Goal) []CoexistCase {
	cubic := FlowSpec{Label: "cubic", Scheme: "cubic"}
	dcc := func(label string, t *tuner.Target, m Mode) FlowSpec {
		return FlowSpec{Label: label, Scheme: SchemeDeepCC, Goal: start, Target: t, Mode: m}
	}
	tgt := targetPtr(CoexistTarget)
	return []CoexistCase{
		{Name: "cubic vs cubic", Tested: FlowSpec{Label: "cubic-tested", Scheme: "cubic"}, Against: cubic},
		{Name: "bbr vs cubic", Tested: FlowSpec{Label: "bbr", Scheme: "bbr"}, Against: cubic},
		{Name: "vegas vs cubic", Tested: FlowSpec{Label: "vegas", Scheme: "vegas"}, Against: cubic},
		{Name: "deepcc (5 Mbit/s, 180 ms, 1%) vs cubic", Tested: dcc("deepcc", tgt, ""), Against: cubic},
		{Name: "deepcc high-throughput vs cubic", Tested: dcc("deepcc", nil, ModeHighThroughput), Against: cubic},
		{Name: "deepcc low-delay vs cubic", Tested: dcc("deepcc", nil, ModeLowDelay), Against: cubic},
		{Name: "deepcc (5 Mbit/s, 180 ms, 1%) vs deepcc", Tested: dcc("deepcc", tgt, ""), Against: dcc("deepcc-peer", tgt, "")},
		{Name: "deepcc high-throughput vs deepcc", Tested: dcc("deepcc", nil, ModeHighThroughput), Against: dcc("deepcc-peer", nil, ModeHighThroughput)},
	}
}

// CoexistOffset spaces the competitors' starts from run to run.
const CoexistOffset = 100 * time.Millisecond

// Coexist runs every case on link (PaperLink(0) if its rate is 0) with
// competitors competing flows [1], all starting together, cfg.Runs seeds
// each [3 runs of 60 s]; in run k the competitors start (k+1) x
// CoexistOffset after the tested flow.
func Coexist(ctx context.Context, cfg StudyConfig, link Link, competitors int, cases []CoexistCase) (*CoexistReport, error) {
	start := time.Now()
	if err := cfg.defaults(60*time.Second, 3); err != nil {
		return nil, err
	}
	if link.Rate == 0 && link.Trace == "" {
		link = PaperLink(0)
	}
	if competitors == 0 {
		competitors = 1
	}
	if competitors < 1 || competitors > 16 {
		return nil, fmt.Errorf("deepcc: %d competing flows: want 1 to 16", competitors)
	}
	if cases == nil {
		cases = CoexistCases(*cfg.TunerStart)
	}
	rep := &CoexistReport{Link: link, Duration: cfg.Duration.Seconds(), Runs: cfg.Runs, Competitors: competitors}
	runs := make([]SharedResult, len(cases)*cfg.Runs)
	err := cfg.doAll(ctx, len(runs), func(p *policy.Policy, i int) error {
		c, k := cases[i/cfg.Runs], i%cfg.Runs
		flows := []FlowSpec{c.Tested}
		for j := range competitors {
			f := c.Against
			f.Label = fmt.Sprintf("%s-%d", f.Label, j+1)
			// On a steady lossless link the seed changes nothing; the
			// competitors' start offset (k+1) x 100 ms makes the runs
			// differ, as real flows never start in the same instant.
			f.Start = time.Duration(k+1) * CoexistOffset
			flows = append(flows, f)
		}
		var err error
		runs[i], err = RunShared(p, SharedRun{Link: link, Duration: cfg.Duration, Seed: cfg.seed(k), Flows: flows,
			DecisionRTTs: cfg.DecisionRTTs, TuneRTTs: cfg.TuneRTTs, Tuner: cfg.Tuner, DelayWindow: cfg.DelayWindow})
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for ci, c := range cases {
		var tested, comp, ratio, jain, p95, util []float64
		for k := range cfg.Runs {
			r := runs[ci*cfg.Runs+k]
			t := r.Flows[0].ThroughputMbps
			cm := 0.0
			for _, f := range r.Flows[1:] {
				cm += f.ThroughputMbps
			}
			cm /= float64(len(r.Flows) - 1)
			tested, comp, jain = append(tested, t), append(comp, cm), append(jain, r.Jain)
			p95, util = append(p95, r.Flows[0].DelayP95Ms), append(util, r.Utilization)
			if cm > 0 {
				ratio = append(ratio, t/cm)
			}
		}
		c.TestedMbps, c.CompetitorMbps, c.Ratio, c.Jain = statOf(tested), statOf(comp), statOf(ratio), statOf(jain)
		c.TestedP95Ms, c.Utilization = statOf(p95), statOf(util)
		c.Example = runs[ci*cfg.Runs]
		rep.Cases = append(rep.Cases, c)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}
