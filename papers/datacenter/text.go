package datacenter

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

func fmtEst(e Estimate, digits int) string {
	if math.IsNaN(e.Mean) {
		return "n/a"
	}
	if math.IsNaN(e.CI) || e.N < 2 {
		return strconv.FormatFloat(e.Mean, 'f', digits, 64)
	}
	return fmt.Sprintf("%.*f ±%.*f", digits, e.Mean, digits, e.CI)
}

// WriteText writes the evaluation as the tables cclab dc eval prints.
func (r *EvalReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "Data-centre BBR tuning: %d episodes per scheme and condition (seeds %d-%d), %d agent(s)\n", r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1, r.Agents)
	if r.Alpha != 0 {
		fmt.Fprintf(w, "reward: every scheme scored with alpha %g (--alpha)\n", r.Alpha)
	}
	if len(r.Grid) > 0 {
		fmt.Fprintf(w, "static best: %v (grid search, %d settings x %d episodes on the training condition)\n", r.StaticBest, len(r.Grid), r.GridRuns)
	} else {
		fmt.Fprintf(w, "static best: %v (given)\n", r.StaticBest)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Policies)) {
		p := r.Policies[name]
		fmt.Fprintf(w, "%s: %s, %d learner steps, %.0f s of training (%s)\n", name, p.Algo, p.Steps, p.TrainingWallS, strings.Join(p.Files, ", "))
	}
	if len(r.StaticPerAgent) > 0 {
		fmt.Fprintf(w, "%s: %v (grid search, %d combinations x %d episodes, the static best's episodes)\n", StaticPerAgentName, r.StaticPerAgent, len(r.GridPerAgent), r.GridRuns)
	}
	for _, c := range r.Conditions {
		fmt.Fprintf(w, "\ncondition %s: %s\n", c.Name, c.Doc)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "scheme\treward\tvs default\tvs static best\t"
		if len(r.StaticPerAgent) > 0 {
			head += "vs static/agent\t"
		}
		head += "util\tgoodput Mbit/s\t"
		if r.Agents > 1 {
			head += "Jain (agents)\t"
		}
		fmt.Fprintln(tw, head+"RTT p50 ms\tRTT p95 ms\tretx %\tRTprop acc\tbg FCT ms\tshort FCT p95 ms\t")
		for _, row := range r.Rows {
			if row.Condition != c.Name {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t", row.Scheme, fmtEst(row.Get("reward"), 3), fmtEst(row.RewardGain, 3))
			for _, g := range r.baselineGains(row) {
				s := "-"
				if g != nil {
					s = fmtEst(*g, 3)
				}
				fmt.Fprintf(tw, "%s\t", s)
			}
			fmt.Fprintf(tw, "%s\t%s\t", fmtEst(row.Get("util"), 3), fmtEst(row.Get("goodput_mbps"), 0))
			if r.Agents > 1 {
				fmt.Fprintf(tw, "%s\t", fmtEst(row.Get("agent_jain"), 3))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n",
				fmtEst(row.Get("rtt_p50_ms"), 2), fmtEst(row.Get("rtt_p95_ms"), 2), fmtEst(row.Get("retx_pct"), 1),
				fmtEst(row.Get("rtprop_accuracy"), 2), fmtEst(row.Get("bg_fct_mean_ms"), 0), fmtEst(row.Get("small_fct_p95_ms"), 0))
		}
		tw.Flush()
	}
	if r.Seeds != nil {
		r.Seeds.WriteText(w)
	}
}

// baselineGains returns row's paired reward gains over the static best and,
// when the report has it, the static best per agent, nil where the gain is
// not shown: a baseline against itself or a lesser one.
func (r *EvalReport) baselineGains(row Row) []*Estimate {
	var static, perAgent *Row
	for i, o := range r.Rows {
		if o.Condition != row.Condition {
			continue
		}
		switch o.Scheme {
		case "static best":
			static = &r.Rows[i]
		case StaticPerAgentName:
			perAgent = &r.Rows[i]
		}
	}
	gain := func(base *Row, skip ...string) *Estimate {
		if base == nil || slices.Contains(skip, row.Scheme) {
			return nil
		}
		g := PairedGain(row, *base)
		return &g
	}
	gs := []*Estimate{gain(static, "default BBR", "static best")}
	if len(r.StaticPerAgent) > 0 {
		gs = append(gs, gain(perAgent, "default BBR", "static best", StaticPerAgentName))
	}
	return gs
}
