package deepcc

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/policy"
)

// Results over training seeds. One trained policy is one draw from the
// training procedure; DDPG's run-to-run spread is as large as the
// differences the evaluation reports (docs/deepcc.md), so the evaluation
// of several independently trained policies reports every metric as the
// mean over policies of each policy's mean and a 95% confidence interval
// across policies, and the policy to ship is chosen by rl.MedianSeed on
// validation traces disjoint from the evaluation's (SelectPolicy).

// SeedsReport is the evaluation of independently trained policies of one
// configuration, the JSON of `cclab deepcc eval --policy a,b,c --json`.
type SeedsReport struct {
	// Rule is the shipped-policy rule (rl.MedianRule).
	Rule string `json:"rule"`
	// Policies names the policies (their files), in evaluation order.
	Policies []string `json:"policies"`
	// Selection is the rule's choice, if it was applied.
	Selection *rl.Selection `json:"selection,omitempty"`
	Traces    []SeedsTrace  `json:"traces"`
	// TCR is each scheme's target completion ratio over every trace.
	TCR []SeedsTCR `json:"tcr,omitempty"`
	// PerPolicy are the policies' own evaluations, in policy order.
	PerPolicy []*Report `json:"per_policy"`
}

// SeedsTrace is one evaluation trace over the policies.
type SeedsTrace struct {
	Name    string        `json:"name"`
	Schemes []SeedsScheme `json:"schemes"`
}

// SeedsScheme is one scheme on one trace: each policy's mean over the
// trace's runs, and their mean and CI across policies. Classic schemes do
// not depend on the policy, so their interval is 0.
type SeedsScheme struct {
	Scheme      string          `json:"scheme"`
	Goal        *Goal           `json:"goal,omitempty"`
	Throughput  rl.SeedEstimate `json:"throughput_mbps"`
	DelayP95    rl.SeedEstimate `json:"delay_p95_ms"`
	DelayMean   rl.SeedEstimate `json:"delay_mean_ms"`
	LossPercent rl.SeedEstimate `json:"loss_pct"`
}

// SeedsTCR is one scheme's target completion ratio over the policies.
type SeedsTCR struct {
	Scheme string          `json:"scheme"`
	Ratio  rl.SeedEstimate `json:"ratio"`
}

// EvaluateSeeds evaluates each policy with cfg (cfg.Policy is ignored) on
// the same runs and summarises them across policies. names label the
// policies (e.g. their files).
func EvaluateSeeds(ctx context.Context, cfg EvalConfig, pols []*policy.Policy, names []string) (*SeedsReport, error) {
	if len(pols) == 0 || len(names) != len(pols) {
		return nil, fmt.Errorf("deepcc: %d policies with %d names to evaluate", len(pols), len(names))
	}
	reps := make([]*Report, len(pols))
	for i, p := range pols {
		c := cfg
		c.Policy = p
		r, err := Evaluate(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", names[i], err)
		}
		reps[i] = r
	}
	s, err := SummarizeSeeds(reps)
	if err != nil {
		return nil, err
	}
	s.Policies = append([]string(nil), names...)
	return s, nil
}

// SummarizeSeeds aggregates evaluations of several policies made with one
// configuration: the same traces and schemes in the same order.
func SummarizeSeeds(reps []*Report) (*SeedsReport, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("deepcc: no evaluations to summarise")
	}
	first := reps[0]
	for i, r := range reps[1:] {
		if len(r.Traces) != len(first.Traces) || len(r.TCR) != len(first.TCR) {
			return nil, fmt.Errorf("deepcc: evaluation %d has other traces or schemes than the first", i+2)
		}
		for t := range r.Traces {
			if r.Traces[t].Name != first.Traces[t].Name || len(r.Traces[t].Schemes) != len(first.Traces[t].Schemes) {
				return nil, fmt.Errorf("deepcc: evaluation %d has other traces or schemes than the first", i+2)
			}
			for k := range r.Traces[t].Schemes {
				if r.Traces[t].Schemes[k].Scheme != first.Traces[t].Schemes[k].Scheme {
					return nil, fmt.Errorf("deepcc: evaluation %d has other schemes than the first", i+2)
				}
			}
		}
		for k := range r.TCR {
			if r.TCR[k].Scheme != first.TCR[k].Scheme {
				return nil, fmt.Errorf("deepcc: evaluation %d has other TCR schemes than the first", i+2)
			}
		}
	}
	over := func(f func(*Report) float64) rl.SeedEstimate {
		v := make([]float64, len(reps))
		for i, r := range reps {
			v[i] = f(r)
		}
		return rl.OverSeeds(v)
	}
	s := &SeedsReport{Rule: rl.MedianRule, PerPolicy: reps}
	for t, tr := range first.Traces {
		st := SeedsTrace{Name: tr.Name}
		for k, sc := range tr.Schemes {
			at := func(r *Report) SchemeResult { return r.Traces[t].Schemes[k] }
			st.Schemes = append(st.Schemes, SeedsScheme{
				Scheme: sc.Scheme, Goal: sc.Goal,
				Throughput:  over(func(r *Report) float64 { return at(r).ThroughputMbps }),
				DelayP95:    over(func(r *Report) float64 { return at(r).DelayP95Ms }),
				DelayMean:   over(func(r *Report) float64 { return at(r).DelayMeanMs }),
				LossPercent: over(func(r *Report) float64 { return 100 * at(r).Loss }),
			})
		}
		s.Traces = append(s.Traces, st)
	}
	for k, c := range first.TCR {
		s.TCR = append(s.TCR, SeedsTCR{Scheme: c.Scheme, Ratio: over(func(r *Report) float64 { return r.TCR[k].Ratio })})
	}
	return s, nil
}

// ValidationScore says what SelectPolicy scores.
const ValidationScore = "1 - target completion ratio of DeepCC with the tuner (deepcc-tuned)"

// SelectPolicy applies the shipped-policy rule (rl.MedianSeed): each
// policy is scored by ValidationScore on runs windows of each validation
// trace (by default the training traces), which must not share a trace
// with cfg.Traces, the evaluation's held-out ones. Only the tuned runs are
// made: the target completion study is DeepCC's headline result.
func SelectPolicy(ctx context.Context, cfg EvalConfig, pols []*policy.Policy, validation []string, runs int) (rl.Selection, error) {
	if len(validation) == 0 {
		return rl.Selection{}, fmt.Errorf("deepcc: no validation traces")
	}
	if runs < 1 {
		return rl.Selection{}, fmt.Errorf("deepcc: validation runs %d must be at least 1", runs)
	}
	names := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = TraceName(p)
		}
		return out
	}
	if err := rl.CheckDisjoint("trace", names(validation), names(cfg.Traces)); err != nil {
		return rl.Selection{}, fmt.Errorf("deepcc: %w", err)
	}
	c := cfg
	c.Traces, c.Runs, c.NoTargets = validation, runs, false
	c.Classic, c.Goals = []string{}, []NamedGoal{}
	scores := make([]float64, len(pols))
	for i, p := range pols {
		c.Policy = p
		r, err := Evaluate(ctx, c)
		if err != nil {
			return rl.Selection{}, fmt.Errorf("validation of policy %d: %w", i+1, err)
		}
		if len(r.TCR) == 0 || r.TCR[0].Scheme != TunedScheme {
			return rl.Selection{}, fmt.Errorf("deepcc: validation of policy %d made no tuned runs", i+1)
		}
		scores[i] = 1 - r.TCR[0].Ratio
	}
	return rl.SelectMedian(scores, ValidationScore, fmt.Sprintf("%d windows of %.0f s on each of %s (disjoint from the evaluation traces)",
		runs, c.Duration.Seconds(), strings.Join(names(validation), ", ")))
}

// WriteText writes the tables cclab deepcc eval prints for several
// policies: mean ± 95% CI across policies, each policy's value in brackets.
func (s *SeedsReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC over %d independently trained policies: mean ± 95%% CI across policies (Student t, %d d.o.f.), each policy's mean in brackets\n", len(s.PerPolicy), len(s.PerPolicy)-1)
	for i, p := range s.Policies {
		r := s.PerPolicy[i]
		fmt.Fprintf(w, "policy %d: %s (%s, %d steps)\n", i+1, p, r.Policy, r.PolicySteps)
	}
	if sel := s.Selection; sel != nil {
		fmt.Fprintf(w, "shipped-policy rule: %s\nvalidation: %s; score: %s\nscores %.3f -> policy %d (%s)\n",
			sel.Rule, sel.Validation, sel.Score, sel.Scores, sel.Index+1, s.Policies[sel.Index])
	}
	if len(s.PerPolicy) > 0 {
		r := s.PerPolicy[0]
		fmt.Fprintf(w, "%d runs of %.0f s per held-out trace (one-way delay %.0f ms, %d-packet DropTail queue)\n", r.Runs, r.Duration, r.DelayMs, r.Queue)
	}
	for _, t := range s.Traces {
		fmt.Fprintf(w, "\n%s\n", t.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\tthroughput Mbit/s\tp95 qdelay ms\tloss %\t")
		for _, sc := range t.Schemes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", sc.Scheme, sc.Throughput.Format(2), sc.DelayP95.Format(1), sc.LossPercent.Format(2))
		}
		tw.Flush()
	}
	if len(s.TCR) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTarget completion ratio over all traces (%%)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, c := range s.TCR {
		fmt.Fprintf(tw, "%s\t%s\t\n", c.Scheme, c.Ratio.Scale(100).Format(1))
	}
	tw.Flush()
}

// WriteDir writes deepcc_seeds.json, report.html (the across-policy
// tables) and each policy's own evaluation (figures and report.html)
// under policyN/ in dir.
func (s *SeedsReport) WriteDir(dir string) error {
	if err := report.WriteJSON(filepath.Join(dir, "deepcc_seeds.json"), s); err != nil {
		return err
	}
	for i, r := range s.PerPolicy {
		if err := r.WriteDir(filepath.Join(dir, fmt.Sprintf("policy%d", i+1))); err != nil {
			return err
		}
	}
	rep := report.New("DeepCC evaluation over training seeds")
	rep.Paragraph("Mean over the independently trained policies of each policy's mean, ± 95% confidence interval across policies; each policy's value in brackets. Each policy's own evaluation (figures, tables) is in policyN/report.html.")
	var text strings.Builder
	s.WriteText(&text)
	rep.Pre(text.String())
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}
