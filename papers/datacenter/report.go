package datacenter

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/internal/fmtnum"
	"github.com/cclab/cclab/learn/rl/trainlog"
)

// ReadCurve reads a training CSV (trainlog format) and returns, per logged
// row, the learner's step count and the mean reward per step of its recent
// training episodes (ep_rew_mean / ep_len_mean).
func ReadCurve(path string) (steps, reward []float64, err error) {
	c, err := trainlog.ReadColumns(path, "step", "ep_rew_mean", "ep_len_mean")
	if err != nil {
		return nil, nil, err
	}
	for i, n := range c[2] {
		if n > 0 {
			steps, reward = append(steps, c[0][i]), append(reward, c[1][i]/n)
		}
	}
	if len(steps) == 0 {
		return nil, nil, fmt.Errorf("%s: no rows with a positive ep_len_mean", path)
	}
	return steps, reward, nil
}

// PlotLearningCurve draws a training CSV's mean reward per step against
// learner steps to stem.png and stem.svg.
func PlotLearningCurve(csvPath, stem, label string) error {
	xs, ys, err := ReadCurve(csvPath)
	if err != nil {
		return err
	}
	fig := plot.TimeSeries{Title: "Data-centre BBR tuning: training reward", X: plot.Axis{Label: "learner steps"},
		Y: plot.Axis{Label: "mean reward per step (last 100 episodes)"}, Series: []plot.Series{{Name: label, X: xs, Y: ys}}}
	_, err = plot.SaveAll(fig, stem, "png", "svg")
	return err
}

// PolicyInfo describes a trained scheme's policy files.
type PolicyInfo struct {
	Files         []string `json:"files"`
	Algo          string   `json:"algo"`
	Steps         int64    `json:"steps"`
	TrainingWallS float64  `json:"training_wall_s"`
	Mode          string   `json:"mode,omitempty"`
	Action        string   `json:"action,omitempty"`
}

// ConditionInfo names an evaluation condition.
type ConditionInfo struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// EvalReport is everything dc eval measured.
type EvalReport struct {
	Runs       int       `json:"runs"`
	Seed       uint64    `json:"seed"`
	Agents     int       `json:"agents"`
	GridRuns   int       `json:"grid_runs,omitempty"`
	StaticBest Params    `json:"static_best"`
	Grid       []GridRow `json:"grid,omitempty"`
	// StaticPerAgent is the best per-agent static combination
	// (GridSearchPerAgent, on the grid search's episodes), if searched;
	// GridPerAgent every combination's reward.
	StaticPerAgent []Params                `json:"static_best_per_agent,omitempty"`
	GridPerAgent   []AgentGridRow          `json:"grid_per_agent,omitempty"`
	Policies       map[string]PolicyInfo   `json:"policies,omitempty"`
	Conditions     []ConditionInfo         `json:"conditions"`
	Rows           []Row                   `json:"results"`
	Traces         map[string][]TracePoint `json:"traces,omitempty"`
	// TraceSeed is the training-condition episode the traces show.
	TraceSeed uint64 `json:"trace_seed"`
	// Alpha is the reward weight every scheme was scored with when
	// dc eval --alpha overrode the policies' (0: theirs).
	Alpha float64 `json:"alpha,omitempty"`
	// Seeds summarises independently trained policies of one learned
	// scheme (dc eval --seed-policy), whose per-policy rows are in Rows.
	Seeds *SeedsSummary `json:"seeds,omitempty"`
}

// MarshalJSON writes NaN (undefined) estimates as null.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"mean": jsonNum(e.Mean), "ci": jsonNum(e.CI), "n": e.N})
}

// MarshalJSON writes NaN values as null.
func (p TracePoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"t_s": jsonNum(p.T), "base_rtt_ms": jsonNum(p.BaseRTTMs), "rtprop_ms": jsonNum(p.RTpropMs),
		"rtt_ms": jsonNum(p.RTTMs), "util": jsonNum(p.Util), "goodput_mbps": jsonNum(p.GoodputMbps), "delay_term": jsonNum(p.DelayTerm),
		"min_rtt_window_s": jsonNum(p.MinRTTWindow), "bw_window_rounds": jsonNum(p.BwWindowRounds),
		"bottleneck_mbps": jsonNum(p.BottleneckMbps), "active_controlled": jsonNum(p.ActiveControl)})
}

func jsonNum(v float64) any { return fmtnum.JSON(v) }

// FigureSpec is one figure of the evaluation.
type FigureSpec struct {
	Name, Caption string
	Fig           plot.Figure
}

// barMetrics are the metrics drawn as grouped bars.
var barMetrics = []struct{ key, title, label string }{
	{"reward", "Mean reward per step (paper's objective, 95% CI)", "reward"},
	{"goodput_mbps", "Controlled flows' goodput (95% CI)", "goodput (Mbit/s)"},
	{"rtt_p95_ms", "95th-percentile RTT of controlled flows (95% CI)", "RTT p95 (ms)"},
	{"small_fct_p95_ms", "95th-percentile completion time of short (<100 KB) background flows (95% CI)", "FCT p95 (ms)"},
	{"rtprop_accuracy", "Share of time RTprop is within 10% of the true propagation RTT (95% CI)", "accurate share"},
	{"retx_pct", "Controlled flows' retransmissions (95% CI)", "retransmitted segments (%)"},
}

// Figures draws the evaluation: bars per metric (conditions × schemes)
// and, per traced scheme, RTprop against the true and measured RTT (the
// paper's figure 3(a)) and throughput over time (figure 3(c)).
func (r *EvalReport) Figures() []FigureSpec {
	var conds, schemes []string
	seenC, seenS := map[string]bool{}, map[string]bool{}
	for _, row := range r.Rows {
		if !seenC[row.Condition] {
			seenC[row.Condition] = true
			conds = append(conds, row.Condition)
		}
		if !seenS[row.Scheme] {
			seenS[row.Scheme] = true
			schemes = append(schemes, row.Scheme)
		}
	}
	get := func(c, s, key string) plot.Estimate {
		for _, row := range r.Rows {
			if row.Condition == c && row.Scheme == s {
				e := row.Get(key)
				return plot.Estimate{Mean: e.Mean, CI: e.CI}
			}
		}
		return plot.Estimate{Mean: math.NaN()}
	}
	var out []FigureSpec
	for _, m := range barMetrics {
		vals := make([][]plot.Estimate, len(conds))
		for i, c := range conds {
			for _, s := range schemes {
				e := get(c, s, m.key)
				if math.IsNaN(e.CI) {
					e.CI = 0
				}
				vals[i] = append(vals[i], e)
			}
		}
		out = append(out, FigureSpec{Name: "bars_" + m.key, Caption: m.title, Fig: plot.Bars{Title: m.title,
			X: plot.Axis{Label: "condition"}, Y: plot.Axis{Label: m.label, IncludeZero: true},
			Groups: conds, Categories: schemes, Values: vals}})
	}
	var sqErr, good []plot.Sample
	for _, row := range r.Rows {
		if len(row.RTpropSqErrMs2) > 0 {
			sqErr = append(sqErr, plot.Sample{Name: row.Scheme, Values: row.RTpropSqErrMs2})
		}
		if len(row.FlowGoodputMbps) > 0 {
			good = append(good, plot.Sample{Name: row.Scheme, Values: row.FlowGoodputMbps})
		}
	}
	if len(sqErr) > 0 {
		c := conds[0]
		out = append(out,
			FigureSpec{Name: "cdf_rtprop_sq_err", Caption: fmt.Sprintf("CDF of the squared error of RTprop against the true propagation RTT, every (controlled flow, step), condition %s (paper figure 3(b))", c),
				Fig: plot.CDF{Title: "Squared RTprop error (" + c + ")", X: plot.Axis{Label: "(RTprop - true RTT)² (ms²)", Log: true}, Samples: sqErr}},
			FigureSpec{Name: "cdf_goodput", Caption: fmt.Sprintf("CDF of the controlled flows' goodput per step, condition %s (paper figure 3(d))", c),
				Fig: plot.CDF{Title: "Per-flow goodput per step (" + c + ")", X: plot.Axis{Label: "goodput (Mbit/s)"}, Samples: good}})
	}
	var names []string
	for _, s := range schemes {
		if _, ok := r.Traces[s]; ok {
			names = append(names, s)
		}
	}
	if len(names) > 0 {
		var panels []plot.Panel
		var thr []plot.Series
		for _, s := range names {
			tr := r.Traces[s]
			var t, base, est, meas, good []float64
			for _, p := range tr {
				t = append(t, p.T)
				base = append(base, p.BaseRTTMs)
				est = append(est, p.RTpropMs)
				meas = append(meas, p.RTTMs)
				good = append(good, p.GoodputMbps)
			}
			panels = append(panels, plot.Panel{Y: plot.Axis{Label: s + ": RTT (ms)", Log: true}, Step: true, Series: []plot.Series{
				{Name: "true propagation RTT", X: t, Y: base}, {Name: "RTprop estimate", X: t, Y: est}, {Name: "measured RTT", X: t, Y: meas}}})
			thr = append(thr, plot.Series{Name: s, X: t, Y: good})
		}
		out = append(out,
			FigureSpec{Name: "trace_rtt", Caption: fmt.Sprintf("RTprop estimate against the true propagation RTT and the measured RTT, means over the active controlled flows, training condition, episode %d (paper figure 3(a))", r.TraceSeed),
				Fig: plot.Stacked{Title: "RTprop estimate vs actual RTT", X: plot.Axis{Label: "time (s)"}, Panels: panels}},
			FigureSpec{Name: "trace_goodput", Caption: "Controlled flows' goodput per interval, same episode (paper figure 3(c))",
				Fig: plot.TimeSeries{Title: "Controlled flows' goodput", X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true}, Series: thr, Step: true}})
		var ps []plot.Series
		for _, s := range names {
			var t, mrw []float64
			for _, p := range r.Traces[s] {
				t = append(t, p.T)
				mrw = append(mrw, p.MinRTTWindow)
			}
			ps = append(ps, plot.Series{Name: s, X: t, Y: mrw})
		}
		out = append(out, FigureSpec{Name: "trace_params", Caption: "RTprop window chosen by agent 0 over the same episode",
			Fig: plot.TimeSeries{Title: "RTprop (min RTT) filter window", X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "window (s)", Log: true}, Series: ps, Step: true}})
	}
	return out
}

// Write saves the report as dir/dc_eval.json, the figures (PNG and SVG)
// and dir/report.html.
func (r *EvalReport) Write(dir string) error {
	if err := report.WriteJSON(filepath.Join(dir, "dc_eval.json"), r); err != nil {
		return err
	}
	rep := report.New("Data-centre BBR parameter tuning: evaluation")
	rep.Paragraph(fmt.Sprintf("%d episodes per scheme and condition (seeds %d-%d, the same for every scheme), %d agent(s). Static best: %v (grid search over %d settings, %d episodes each, on the training condition).",
		r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1, r.Agents, r.StaticBest, len(r.Grid), r.GridRuns))
	if r.Alpha != 0 {
		rep.Paragraph(fmt.Sprintf("Every scheme scored with the reward weight alpha = %g (--alpha).", r.Alpha))
	}
	var cl []string
	for _, c := range r.Conditions {
		cl = append(cl, fmt.Sprintf("%s: %s", c.Name, c.Doc))
	}
	rep.List(cl...)
	for _, name := range slices.Sorted(maps.Keys(r.Policies)) {
		p := r.Policies[name]
		rep.Paragraph(fmt.Sprintf("%s: %s policy, %d learner steps, %.0f s of training wall time (%s).", name, p.Algo, p.Steps, p.TrainingWallS, strings.Join(p.Files, ", ")))
	}
	rep.Heading("Results")
	cols := []string{"reward", "util", "goodput_mbps", "rtt_p50_ms", "rtt_p95_ms", "retx_pct", "rtprop_accuracy", "bg_fct_mean_ms", "small_fct_p95_ms"}
	if r.Agents > 1 {
		cols = append(cols, "agent_jain")
	}
	for _, c := range r.Conditions {
		header := append([]string{"scheme"}, cols...)
		header = append(header, "reward gain vs default BBR", "vs static best")
		if len(r.StaticPerAgent) > 0 {
			header = append(header, "vs static best per agent")
		}
		var rows [][]any
		for _, row := range r.Rows {
			if row.Condition != c.Name {
				continue
			}
			cells := []any{row.Scheme}
			for _, k := range cols {
				e := row.Get(k)
				cells = append(cells, report.MeanCI{Mean: e.Mean, CI: e.CI})
			}
			cells = append(cells, report.MeanCI{Mean: row.RewardGain.Mean, CI: row.RewardGain.CI})
			for _, g := range r.baselineGains(row) {
				if g != nil {
					cells = append(cells, report.MeanCI{Mean: g.Mean, CI: g.CI})
				} else {
					cells = append(cells, "")
				}
			}
			rows = append(rows, cells)
		}
		rep.Table(fmt.Sprintf("Condition %s (%s)", c.Name, c.Doc), header, rows)
	}
	if sd := r.Seeds; sd != nil {
		rep.Heading("Over training seeds: " + sd.Name)
		rep.Paragraph(fmt.Sprintf("%d independently trained policies (%s): mean over policies of each policy's mean, ± 95%% CI across policies.", len(sd.Schemes), strings.Join(sd.Schemes, ", ")))
		if sel := sd.Selection; sel != nil {
			rep.Paragraph(fmt.Sprintf("Shipped-policy rule: %s. Validation: %s; score: %s; scores %.4f: %s.", sel.Rule, sel.Validation, sel.Score, sel.Scores, sd.Schemes[sel.Index]))
		}
		cols := sd.columns()
		head := []string{"condition"}
		for _, c := range cols {
			head = append(head, c.html)
		}
		var rows [][]any
		for _, row := range sd.Rows {
			cells := []any{row.Condition}
			for _, c := range cols {
				e := c.get(row)
				cells = append(cells, report.MeanCI{Mean: e.Mean, CI: e.CI95})
			}
			rows = append(rows, cells)
		}
		rep.Table(sd.Name+" over seeds", head, rows)
	}
	rep.Heading("Figures")
	for _, f := range r.Figures() {
		if _, err := plot.SaveAll(f.Fig, filepath.Join(dir, f.Name), "png", "svg"); err != nil {
			return fmt.Errorf("figure %s: %w", f.Name, err)
		}
		rep.Plot(f.Caption, f.Fig)
	}
	if len(r.Grid) > 0 {
		rep.Heading("Static grid search")
		var rows [][]any
		for _, g := range r.Grid {
			rows = append(rows, []any{g.Params.MinRTTWindow, g.Params.BwWindowRounds, report.MeanCI{Mean: g.Reward.Mean, CI: g.Reward.CI}})
		}
		rep.Table("Mean reward per step of each static setting on the training condition", []string{"RTprop window (s)", "BtlBw window (rounds)", "reward"}, rows)
	}
	if len(r.StaticPerAgent) > 0 {
		rep.Paragraph(fmt.Sprintf("%s: %v, the best of %d combinations of one grid setting per agent on the same episodes.", StaticPerAgentName, r.StaticPerAgent, len(r.GridPerAgent)))
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}
