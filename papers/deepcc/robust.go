package deepcc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/learn/rl/policy"
)

// LossPoint is one scheme at one random-loss rate.
type LossPoint struct {
	Loss           float64 `json:"loss"`
	ThroughputMbps Stat    `json:"throughput_mbps"`
	DelayP95Ms     Stat    `json:"delay_p95_ms"`
}

// LossCurve is one scheme across the loss rates.
type LossCurve struct {
	Scheme Scheme      `json:"scheme"`
	Points []LossPoint `json:"points"`
}

// LossReport is the random-loss robustness study (the paper's Figure 14).
type LossReport struct {
	Link        Link        `json:"link"`
	Duration    float64     `json:"duration_s"`
	Runs        int         `json:"runs"`
	Losses      []float64   `json:"losses"`
	Curves      []LossCurve `json:"curves"`
	WallSeconds float64     `json:"wall_seconds"`
}

// DefaultLosses are Figure 14's random-loss rates, 0 to 6%.
var DefaultLosses = []float64{0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06}

// RobustSchemes are the schemes of the loss and convergence studies:
// DeepCC pursuing Figure 14's target (11 Mbit/s, 100 ms, 5%), in
// high-throughput mode and with the fixed goal g2, and the classic
// controllers.
func RobustSchemes() []Scheme {
	g2 := DefaultGoals[1].Goal
	return []Scheme{
		{Name: "deepcc (11 Mbit/s, 100 ms, 5%)", Target: targetPtr(LossTarget)},
		{Name: "deepcc high-throughput", Mode: ModeHighThroughput},
		{Name: "deepcc g2", Goal: &g2},
		{Name: "cubic", CC: "cubic"}, {Name: "bbr", CC: "bbr"}, {Name: "vegas", CC: "vegas"}, {Name: "newreno", CC: "newreno"},
	}
}

// LossSweep runs every scheme alone on the paper's steady link (12 Mbit/s,
// 60 ms RTT, 90 KB buffer) with each random-loss rate, cfg.Runs seeds per
// point [2 runs of 30 s]; schemes default to RobustSchemes, losses to
// DefaultLosses.
func LossSweep(ctx context.Context, cfg StudyConfig, schemes []Scheme, losses []float64) (*LossReport, error) {
	start := time.Now()
	if err := cfg.defaults(30*time.Second, 2); err != nil {
		return nil, err
	}
	if schemes == nil {
		schemes = RobustSchemes()
	}
	if losses == nil {
		losses = DefaultLosses
	}
	for _, l := range losses {
		if !(l >= 0 && l < 0.5) {
			return nil, fmt.Errorf("deepcc: loss rate %g must be in [0, 0.5)", l)
		}
	}
	rep := &LossReport{Link: PaperLink(0), Duration: cfg.Duration.Seconds(), Runs: cfg.Runs, Losses: losses}
	nl := len(losses)
	res := make([]RunResult, len(schemes)*nl*cfg.Runs)
	err := cfg.doAll(ctx, len(res), func(p *policy.Policy, i int) error {
		s, l, k := schemes[i/(nl*cfg.Runs)], losses[i/cfg.Runs%nl], i%cfg.Runs
		var err error
		res[i], err = cfg.runScheme(p, s, PaperLink(l), cfg.seed(k))
		if err != nil {
			return fmt.Errorf("%s at %g%% loss: %w", s.Name, 100*l, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for si, s := range schemes {
		c := LossCurve{Scheme: s}
		for li, l := range losses {
			var thr, d []float64
			for k := range cfg.Runs {
				r := res[(si*nl+li)*cfg.Runs+k]
				thr, d = append(thr, r.ThroughputMbps), append(d, r.DelayP95Ms)
			}
			c.Points = append(c.Points, LossPoint{Loss: l, ThroughputMbps: statOf(thr), DelayP95Ms: statOf(d)})
		}
		rep.Curves = append(rep.Curves, c)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// ConvergenceScheme is one scheme of the convergence study.
type ConvergenceScheme struct {
	Scheme Scheme `json:"scheme"`
	// RampS is the time the first flow takes to first deliver
	// ConvergeShare of the link rate in a sample interval, seconds (NaN
	// encoded as -1: never).
	RampS Stat `json:"ramp_s"`
	// ConvergeS is the time after a flow joins until Jain's index over the
	// active flows' rates first reaches ConvergeJain, averaged over the
	// joins (-1: never within the join's period).
	ConvergeS Stat `json:"converge_s"`
	// NeverConverged counts joins after which the index never reached
	// ConvergeJain.
	NeverConverged int `json:"never_converged"`
	// SteadyJain is the mean Jain's index over the second half of each
	// period between joins (and of the last period); SteadyCV the
	// coefficient of variation of the single first flow's rate in the
	// second half of the first period (its stability alone on the link).
	SteadyJain Stat `json:"steady_jain"`
	SteadyCV   Stat `json:"steady_cv"`
	// Example is the first run.
	Example SharedResult `json:"example"`
}

// ConvergenceReport is the convergence study (the paper's Figure 15, run
// the way Vivace, whose result the paper cites, runs it: flows of one
// scheme joining one after another).
type ConvergenceReport struct {
	Link        Link                `json:"link"`
	Duration    float64             `json:"duration_s"`
	Runs        int                 `json:"runs"`
	Flows       int                 `json:"flows"`
	Every       float64             `json:"join_every_s"`
	Schemes     []ConvergenceScheme `json:"schemes"`
	WallSeconds float64             `json:"wall_seconds"`
}

// Convergence thresholds (ours; the paper gives none).
const (
	ConvergeShare = 0.8
	ConvergeJain  = 0.9
)

// Convergence runs, per scheme, flows flows of that scheme on the paper's
// steady link, flow k joining at k x every [3 flows, one every 10 s, runs
// of 40 s, 2 seeds]; schemes default to RobustSchemes.
func Convergence(ctx context.Context, cfg StudyConfig, schemes []Scheme, flows int, every time.Duration) (*ConvergenceReport, error) {
	start := time.Now()
	if flows == 0 {
		flows = 3
	}
	if every == 0 {
		every = 10 * time.Second
	}
	if err := cfg.defaults(time.Duration(flows+1)*every, 2); err != nil {
		return nil, err
	}
	if flows < 1 || flows > 16 || every <= 0 || time.Duration(flows-1)*every >= cfg.Duration {
		return nil, fmt.Errorf("deepcc: %d flows joining every %v must all start within the run (%v); 1 to 16 flows", flows, every, cfg.Duration)
	}
	if schemes == nil {
		schemes = RobustSchemes()
	}
	link := PaperLink(0)
	rep := &ConvergenceReport{Link: link, Duration: cfg.Duration.Seconds(), Runs: cfg.Runs, Flows: flows, Every: every.Seconds()}
	res := make([]SharedResult, len(schemes)*cfg.Runs)
	err := cfg.doAll(ctx, len(res), func(p *policy.Policy, i int) error {
		s, k := schemes[i/cfg.Runs], i%cfg.Runs
		var specs []FlowSpec
		for j := range flows {
			// Run k delays each join by k x CoexistOffset so that runs
			// on the steady link differ.
			f := FlowSpec{Label: fmt.Sprintf("flow-%d", j+1), Start: time.Duration(j) * (every + time.Duration(k)*CoexistOffset)}
			if s.CC != "" {
				f.Scheme = s.CC
			} else {
				f.Scheme, f.Target, f.Mode, f.Goal = SchemeDeepCC, s.Target, s.Mode, *cfg.TunerStart
				if s.Goal != nil {
					f.Goal = *s.Goal
				}
			}
			specs = append(specs, f)
		}
		var err error
		res[i], err = RunShared(p, SharedRun{Link: link, Duration: cfg.Duration, Seed: cfg.seed(k), Flows: specs,
			Sample: 250 * time.Millisecond, DecisionRTTs: cfg.DecisionRTTs, TuneRTTs: cfg.TuneRTTs, Tuner: cfg.Tuner, DelayWindow: cfg.DelayWindow})
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for si, s := range schemes {
		cs := ConvergenceScheme{Scheme: s, Example: res[si*cfg.Runs]}
		var ramp, conv, jain, cv []float64
		for k := range cfg.Runs {
			m := convergenceOf(res[si*cfg.Runs+k], link.Rate.Mbps(), cfg.Duration.Seconds())
			if m.ramp >= 0 {
				ramp = append(ramp, m.ramp)
			}
			jain, cv = append(jain, m.jain), append(cv, m.cv)
			conv = append(conv, m.conv...)
			cs.NeverConverged += m.never
		}
		cs.RampS, cs.ConvergeS, cs.SteadyJain, cs.SteadyCV = statOf(ramp), statOf(conv), statOf(jain), statOf(cv)
		rep.Schemes = append(rep.Schemes, cs)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

type convMetrics struct {
	ramp     float64
	conv     []float64
	never    int
	jain, cv float64
}

// convergenceOf measures one convergence run from its rate series; flows
// join in order at their Start times.
func convergenceOf(r SharedResult, linkMbps, end float64) convMetrics {
	flows := len(r.Flows)
	m := convMetrics{ramp: -1}
	for i, t := range r.T {
		if r.Flows[0].Mbps[i] >= ConvergeShare*linkMbps {
			m.ramp = t
			break
		}
	}
	var jains []float64
	for k := range flows {
		lo := r.Flows[k].Start.Seconds()
		hi := end
		if k < flows-1 {
			hi = r.Flows[k+1].Start.Seconds()
		}
		conv := math.NaN()
		for i, t := range r.T {
			if t <= lo || t > hi {
				continue
			}
			rates := make([]float64, k+1)
			for j := range rates {
				rates[j] = r.Flows[j].Mbps[i]
			}
			jn := metrics.Jain(rates)
			if k > 0 && math.IsNaN(conv) && jn >= ConvergeJain {
				conv = t - lo
			}
			if t > (lo+hi)/2 {
				jains = append(jains, jn)
			}
		}
		if k > 0 {
			if math.IsNaN(conv) {
				m.never++
			} else {
				m.conv = append(m.conv, conv)
			}
		}
	}
	m.jain = metrics.Summarize(jains).Mean
	if math.IsNaN(m.jain) {
		m.jain = 1
	}
	var first []float64
	firstEnd := end
	if flows > 1 {
		firstEnd = r.Flows[1].Start.Seconds()
	}
	for i, t := range r.T {
		if t > firstEnd/2 && t <= firstEnd {
			first = append(first, r.Flows[0].Mbps[i])
		}
	}
	if s := metrics.Summarize(first); s.Mean > 0 {
		m.cv = s.Std / s.Mean
	}
	return m
}
