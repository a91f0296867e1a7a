package deepcc

import (
	"context"
	"fmt"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// Figure 9's grids.
var (
	// DecisionIntervals are the decision intervals studied, minimum RTTs.
	DecisionIntervals = []float64{0.25, 0.5, 1, 2, 4}
	// DecisionRTTsMs are the path RTTs they are studied on, ms.
	DecisionRTTsMs = []float64{20, 60, 120, 200}
	// TuningIntervals are the tuning intervals studied, RTTs ("from half
	// to 8 RTTs").
	TuningIntervals = []float64{0.5, 1, 2, 4, 8}
)

// DecisionPoint is one decision interval on one path RTT: DeepCC with the
// high-throughput goal g1 alone on a 12 Mbit/s link with a one-BDP buffer.
type DecisionPoint struct {
	DecisionRTTs float64 `json:"decision_rtts"`
	RTTMs        float64 `json:"rtt_ms"`
	// Normalized is goodput over the link's payload rate.
	Normalized Stat `json:"normalized_throughput"`
	DelayP95Ms Stat `json:"delay_p95_ms"`
}

// TuningPoint is one tuning interval: DeepCC with the tuner on the
// held-out traces' windows, every target of TargetsFor.
type TuningPoint struct {
	TuneRTTs float64 `json:"tune_rtts"`
	// Effective is the interval actually used: a whole number of
	// decision intervals, at least one.
	Effective float64 `json:"effective_rtts"`
	// Normalized is goodput over the window's mean capacity, averaged
	// over the runs; TCR the share of targets met.
	Normalized Stat       `json:"normalized_throughput"`
	TCR        Completion `json:"tcr"`
}

// IntervalReport is the interval study (the paper's Figure 9).
type IntervalReport struct {
	Duration     float64         `json:"duration_s"`
	Runs         int             `json:"runs"`
	DecisionRTTs float64         `json:"tuning_study_decision_rtts"`
	Decision     []DecisionPoint `json:"decision"`
	Tuning       []TuningPoint   `json:"tuning"`
	WallSeconds  float64         `json:"wall_seconds"`
}

// Intervals runs Figure 9's two studies: decision intervals (DeepCC, goal
// g1, cfg.Runs seeds per point on fixed links) and tuning intervals (the
// tuner at cfg.DecisionRTTs on cfg.Runs windows of each held-out trace, all
// nine targets) [2 runs of 30 s].
func Intervals(ctx context.Context, cfg StudyConfig, decisions, rttsMs, tunings []float64) (*IntervalReport, error) {
	start := time.Now()
	if err := cfg.defaults(30*time.Second, 2); err != nil {
		return nil, err
	}
	decisions = orDefault(decisions, DecisionIntervals)
	rttsMs = orDefault(rttsMs, DecisionRTTsMs)
	tunings = orDefault(tunings, TuningIntervals)
	for _, d := range decisions {
		if !(d >= 0.05 && d <= 20) {
			return nil, fmt.Errorf("deepcc: decision interval %g minimum RTTs must be in [0.05, 20]", d)
		}
	}
	for _, r := range rttsMs {
		if !(r >= 1 && r <= 2000) {
			return nil, fmt.Errorf("deepcc: RTT %g ms must be in [1, 2000]", r)
		}
	}
	for _, t := range tunings {
		if !(t > 0 && t <= 1000) {
			return nil, fmt.Errorf("deepcc: tuning interval %g RTTs must be in (0, 1000]", t)
		}
	}
	rep := &IntervalReport{Duration: cfg.Duration.Seconds(), Runs: cfg.Runs, DecisionRTTs: cfg.DecisionRTTs}
	// Decision-interval jobs.
	type djob struct {
		d, rtt float64
		k      int
	}
	var djobs []djob
	for _, d := range decisions {
		for _, r := range rttsMs {
			for k := range cfg.Runs {
				djobs = append(djobs, djob{d, r, k})
			}
		}
	}
	// Tuning-interval jobs: windows of every trace x targets.
	var windows []Link
	var targets [][]tuner.Target
	for _, path := range cfg.Traces {
		t, err := cfg.Set.Load(path)
		if err != nil {
			return nil, err
		}
		if t.Period() < cfg.Duration {
			return nil, fmt.Errorf("deepcc: trace %s lasts %v, shorter than a run (%v)", path, t.Period(), cfg.Duration)
		}
		span := t.Period() - cfg.Duration
		for k := range cfg.Runs {
			off := time.Duration(0)
			if cfg.Runs > 1 {
				off = (span / time.Duration(cfg.Runs-1) * time.Duration(k)).Truncate(time.Second)
			}
			l, err := TraceLink(cfg.Set, path, off, cfg.Duration, 20*time.Millisecond, 200, 0)
			if err != nil {
				return nil, err
			}
			windows = append(windows, l)
			targets = append(targets, TargetsFor(l.Capacity.Mbps()))
		}
	}
	type tjob struct{ ti, wi, gi int }
	var tjobs []tjob
	for ti := range tunings {
		for wi := range windows {
			for gi := range targets[wi] {
				tjobs = append(tjobs, tjob{ti, wi, gi})
			}
		}
	}
	dres := make([]RunResult, len(djobs))
	tres := make([]RunResult, len(tjobs))
	err := cfg.doAll(ctx, len(djobs)+len(tjobs), func(p *policy.Policy, i int) error {
		if i < len(djobs) {
			j := djobs[i]
			l := decisionLink(j.rtt)
			r := cfg.run(l, cfg.seed(j.k), DefaultGoals[0].Goal, nil, "")
			r.DecisionRTTs = j.d
			var err error
			dres[i], err = RunDeepCC(p, r)
			return err
		}
		j := tjobs[i-len(djobs)]
		tg := targets[j.wi][j.gi]
		r := cfg.run(windows[j.wi], cfg.seed(0), Goal{}, &tg, "")
		r.TuneRTTs = tunings[j.ti]
		var err error
		tres[i-len(djobs)], err = RunDeepCC(p, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	for di, d := range decisions {
		for ri, rtt := range rttsMs {
			var thr, dl []float64
			for k := range cfg.Runs {
				r := dres[(di*len(rttsMs)+ri)*cfg.Runs+k]
				payload := float64(PaperRate) * 1448 / 1500 / 1e6
				thr, dl = append(thr, r.ThroughputMbps/payload), append(dl, r.DelayP95Ms)
			}
			rep.Decision = append(rep.Decision, DecisionPoint{DecisionRTTs: d, RTTMs: rtt, Normalized: statOf(thr), DelayP95Ms: statOf(dl)})
		}
	}
	i := 0
	for _, tu := range tunings {
		pt := TuningPoint{TuneRTTs: tu, Effective: float64(Run{DecisionRTTs: cfg.DecisionRTTs, TuneRTTs: tu}.tuneSteps()) * cfg.DecisionRTTs}
		var norm []float64
		var att []Attempt
		for wi, w := range windows {
			for _, tg := range targets[wi] {
				r := tres[i]
				i++
				norm = append(norm, r.ThroughputMbps/w.Capacity.Mbps())
				att = append(att, Attempt{Target: tg, Outcome: r.Outcome})
			}
		}
		pt.Normalized, pt.TCR = statOf(norm), TCR(att)
		rep.Tuning = append(rep.Tuning, pt)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// decisionLink is the decision study's link: 12 Mbit/s, the given RTT, a
// one-BDP DropTail buffer (at least 10 packets).
func decisionLink(rttMs float64) Link {
	rtt := time.Duration(rttMs * 1e6)
	q := max(10, int(float64(PaperRate)*rtt.Seconds()/8/1500))
	return Link{Name: fmt.Sprintf("12Mbps-%gms", rttMs), Rate: PaperRate, Delay: rtt / 2, Queue: q, Capacity: PaperRate}
}

func orDefault(x, d []float64) []float64 {
	if len(x) == 0 {
		return d
	}
	return x
}

// ModeResult is one scheme of the preference-mode study on one link set.
type ModeResult struct {
	Scheme         Scheme `json:"scheme"`
	ThroughputMbps Stat   `json:"throughput_mbps"`
	// Normalized is goodput over the link's mean capacity.
	Normalized Stat `json:"normalized_throughput"`
	DelayP95Ms Stat `json:"delay_p95_ms"`
	Loss       Stat `json:"loss"`
	// FinalGoal is the mean goal at the end of DeepCC's runs.
	FinalGoal *Goal `json:"final_goal,omitempty"`
}

// ModeLinkResult is the mode study on one link (a held-out trace's windows
// or the paper's steady link).
type ModeLinkResult struct {
	Name    string       `json:"name"`
	Schemes []ModeResult `json:"schemes"`
}

// ModeReport is the preference-mode study (section III-C's low-delay and
// high-throughput modes, which the paper describes but does not plot).
type ModeReport struct {
	Duration    float64          `json:"duration_s"`
	Runs        int              `json:"runs"`
	Links       []ModeLinkResult `json:"links"`
	WallSeconds float64          `json:"wall_seconds"`
}

// ModeSchemes compares the two modes with the fixed goals at either end
// of the trade-off (g1, g5) and with CUBIC and Vegas.
func ModeSchemes() []Scheme {
	return []Scheme{
		{Name: "deepcc low-delay", Mode: ModeLowDelay},
		{Name: "deepcc high-throughput", Mode: ModeHighThroughput},
		{Name: "deepcc g1", Goal: goalPtr(DefaultGoals[0].Goal)},
		{Name: "deepcc g5", Goal: goalPtr(DefaultGoals[4].Goal)},
		{Name: "cubic", CC: "cubic"}, {Name: "vegas", CC: "vegas"},
	}
}

// Modes runs the schemes on cfg.Runs windows of each held-out trace and
// cfg.Runs seeds on the paper's steady link [2 runs of 30 s].
func Modes(ctx context.Context, cfg StudyConfig, schemes []Scheme) (*ModeReport, error) {
	start := time.Now()
	if err := cfg.defaults(30*time.Second, 2); err != nil {
		return nil, err
	}
	if schemes == nil {
		schemes = ModeSchemes()
	}
	type set struct {
		name  string
		links []Link
	}
	var sets []set
	for _, path := range cfg.Traces {
		t, err := cfg.Set.Load(path)
		if err != nil {
			return nil, err
		}
		if t.Period() < cfg.Duration {
			return nil, fmt.Errorf("deepcc: trace %s lasts %v, shorter than a run (%v)", path, t.Period(), cfg.Duration)
		}
		st := set{name: TraceName(path)}
		span := t.Period() - cfg.Duration
		for k := range cfg.Runs {
			off := time.Duration(0)
			if cfg.Runs > 1 {
				off = (span / time.Duration(cfg.Runs-1) * time.Duration(k)).Truncate(time.Second)
			}
			l, err := TraceLink(cfg.Set, path, off, cfg.Duration, 20*time.Millisecond, 200, 0)
			if err != nil {
				return nil, err
			}
			st.links = append(st.links, l)
		}
		sets = append(sets, st)
	}
	steady := set{name: PaperLink(0).Name}
	for range cfg.Runs {
		steady.links = append(steady.links, PaperLink(0))
	}
	sets = append(sets, steady)
	per := len(schemes) * cfg.Runs
	res := make([]RunResult, len(sets)*per)
	err := cfg.doAll(ctx, len(res), func(p *policy.Policy, i int) error {
		st, s, k := sets[i/per], schemes[i%per/cfg.Runs], i%cfg.Runs
		var err error
		res[i], err = cfg.runScheme(p, s, st.links[k], cfg.seed(k))
		if err != nil {
			return fmt.Errorf("%s on %s: %w", s.Name, st.name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep := &ModeReport{Duration: cfg.Duration.Seconds(), Runs: cfg.Runs}
	for si, st := range sets {
		lr := ModeLinkResult{Name: st.name}
		for ci, s := range schemes {
			var thr, norm, d, loss []float64
			var g Goal
			for k := range cfg.Runs {
				r := res[si*per+ci*cfg.Runs+k]
				thr, d, loss = append(thr, r.ThroughputMbps), append(d, r.DelayP95Ms), append(loss, r.Loss)
				norm = append(norm, r.ThroughputMbps/units.Bandwidth(st.links[k].Capacity).Mbps())
				for j := range g {
					g[j] += r.FinalGoal[j] / float64(cfg.Runs)
				}
			}
			mr := ModeResult{Scheme: s, ThroughputMbps: statOf(thr), Normalized: statOf(norm), DelayP95Ms: statOf(d), Loss: statOf(loss)}
			if s.CC == "" {
				mr.FinalGoal = &g
			}
			lr.Schemes = append(lr.Schemes, mr)
		}
		rep.Links = append(rep.Links, lr)
	}
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}
