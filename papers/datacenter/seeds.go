package datacenter

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/cclab/cclab/learn/rl"
)

// Results over training seeds. Each independently trained policy (set, for
// independent agents) of one configuration is evaluated as its own scheme
// on the same episodes; SummarizeSeeds then gives every metric as the mean
// over policies of each policy's mean with a 95% confidence interval across
// policies, and SelectPolicy applies the shipped-policy rule
// (rl.MedianSeed) on validation episodes whose seeds are disjoint from the
// evaluation's.

// SeedSchemeName names the scheme of one seed of a group.
func SeedSchemeName(group string, seed uint64) string {
	return fmt.Sprintf("%s seed %d", group, seed)
}

// SeedsSummary is a learned scheme over independently trained policies.
type SeedsSummary struct {
	// Name is the group's name (e.g. "PPO"); Schemes the per-policy
	// schemes in the report's rows, in policy order.
	Name    string   `json:"name"`
	Schemes []string `json:"schemes"`
	// Rule is the shipped-policy rule; Selection its choice, if applied.
	Rule      string        `json:"rule"`
	Selection *rl.Selection `json:"selection,omitempty"`
	Rows      []SeedsRow    `json:"results"`
}

// SeedsRow is the group on one condition.
type SeedsRow struct {
	Condition string                     `json:"condition"`
	Metrics   map[string]rl.SeedEstimate `json:"metrics"`
	// VsDefault and VsStatic are each policy's mean paired per-episode
	// reward gain over default BBR and the best static setting.
	VsDefault rl.SeedEstimate `json:"reward_gain_vs_default"`
	VsStatic  rl.SeedEstimate `json:"reward_gain_vs_static_best"`
	// VsStaticPerAgent is the gain over the best static setting per
	// agent, when the evaluation has that baseline.
	VsStaticPerAgent *rl.SeedEstimate `json:"reward_gain_vs_static_best_per_agent,omitempty"`
}

// SummarizeSeeds aggregates the rows of the per-policy schemes over the
// policies, per condition in the rows' order. Every scheme must have a row
// on every condition; "default BBR" and "static best" rows, if present,
// give the paired gains (NaN otherwise), as does a StaticPerAgentName row
// (VsStaticPerAgent nil otherwise).
func SummarizeSeeds(rows []Row, name string, schemes []string) (*SeedsSummary, error) {
	if len(schemes) == 0 {
		return nil, fmt.Errorf("datacenter: no seed schemes to summarise")
	}
	var conds []string
	find := map[[2]string]*Row{}
	for i, r := range rows {
		if _, ok := find[[2]string{r.Condition, ""}]; !ok {
			find[[2]string{r.Condition, ""}] = &rows[i]
			conds = append(conds, r.Condition)
		}
		find[[2]string{r.Condition, r.Scheme}] = &rows[i]
	}
	s := &SeedsSummary{Name: name, Schemes: append([]string(nil), schemes...), Rule: rl.MedianRule}
	for _, c := range conds {
		sr := SeedsRow{Condition: c, Metrics: map[string]rl.SeedEstimate{}}
		per := make([]*Row, len(schemes))
		for i, sc := range schemes {
			if per[i] = find[[2]string{c, sc}]; per[i] == nil {
				return nil, fmt.Errorf("datacenter: no row for %s on condition %s", sc, c)
			}
		}
		for _, m := range MetricNames {
			v := make([]float64, len(per))
			for i, r := range per {
				v[i] = r.Get(m).Mean
			}
			sr.Metrics[m] = rl.OverSeeds(v)
		}
		gain := func(base string) rl.SeedEstimate {
			v := make([]float64, len(per))
			b := find[[2]string{c, base}]
			for i, r := range per {
				v[i] = math.NaN()
				if b != nil {
					v[i] = PairedGain(*r, *b).Mean
				}
			}
			return rl.OverSeeds(v)
		}
		sr.VsDefault, sr.VsStatic = gain("default BBR"), gain("static best")
		if find[[2]string{c, StaticPerAgentName}] != nil {
			g := gain(StaticPerAgentName)
			sr.VsStaticPerAgent = &g
		}
		s.Rows = append(s.Rows, sr)
	}
	return s, nil
}

// ValidationScore says what SelectPolicy scores.
const ValidationScore = "minus the mean reward per step on the training condition"

// ValidationSeedOffset is added to the evaluation's first seed to get the
// validation episodes' default first seed: far from the evaluation's
// seeds and from the grid search's (1,000,000 above them).
const ValidationSeedOffset = 2_000_000

// SelectPolicy applies the shipped-policy rule (rl.MedianSeed) to the
// learned schemes seeds: each is scored by ValidationScore over runs
// episodes of the training condition with seeds first, first+1, ...,
// which must be disjoint from the evaluation's (evalSeed, ..., evalSeed +
// evalRuns - 1).
func SelectPolicy(ctx context.Context, env Config, seeds []Learned, runs int, first, evalSeed uint64, evalRuns, jobs int) (rl.Selection, error) {
	if len(seeds) == 0 {
		return rl.Selection{}, fmt.Errorf("datacenter: no policies to choose from")
	}
	if runs < 1 {
		return rl.Selection{}, fmt.Errorf("datacenter: validation runs %d must be at least 1", runs)
	}
	if err := rl.CheckDisjoint("seed", rl.SeedRange(first, runs), rl.SeedRange(evalSeed, evalRuns)); err != nil {
		return rl.Selection{}, fmt.Errorf("datacenter: %w", err)
	}
	var schemes []Scheme
	for _, l := range seeds {
		schemes = append(schemes, PolicyScheme(l.Name, l.Policies, l.Action))
	}
	rows, err := Evaluate(ctx, EvalConfig{Env: env, Conditions: Conditions[:1], Schemes: schemes, Runs: runs, Seed: first, Jobs: jobs})
	if err != nil {
		return rl.Selection{}, err
	}
	scores := make([]float64, len(seeds))
	for i := range seeds {
		scores[i] = -rows[i].Get("reward").Mean
	}
	return rl.SelectMedian(scores, ValidationScore, fmt.Sprintf("%d episodes of the %s condition, seeds %d-%d (disjoint from the evaluation's)",
		runs, Conditions[0].Name, first, first+uint64(runs)-1))
}

// WriteText writes the group's table: mean ± 95% CI across policies, each
// policy's mean in brackets.
func (s *SeedsSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "\n%s over %d independently trained policies (%s): mean ± 95%% CI across policies (Student t, %d d.o.f.), each policy's mean in brackets\n",
		s.Name, len(s.Schemes), strings.Join(s.Schemes, ", "), len(s.Schemes)-1)
	if sel := s.Selection; sel != nil {
		fmt.Fprintf(w, "shipped-policy rule: %s\nvalidation: %s; score: %s\nscores %.4f -> %s\n",
			sel.Rule, sel.Validation, sel.Score, sel.Scores, s.Schemes[sel.Index])
	}
	cols := s.columns()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "condition\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.text)
	}
	fmt.Fprintln(tw)
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t", r.Condition)
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", c.get(r).Format(c.digits))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// seedColumn is a column of the over-seeds table: its heading in the text
// and in the HTML report, its decimals in the text, and its value.
type seedColumn struct {
	text, html string
	digits     int
	get        func(SeedsRow) rl.SeedEstimate
}

// columns are the over-seeds table's columns after the condition; the gain
// over the static best per agent and the agents' Jain index appear when
// the evaluation has them.
func (s *SeedsSummary) columns() []seedColumn {
	metric := func(k string) func(SeedsRow) rl.SeedEstimate {
		return func(r SeedsRow) rl.SeedEstimate { return r.Metrics[k] }
	}
	cols := []seedColumn{
		{"reward", "reward", 3, metric("reward")},
		{"vs default", "vs default BBR", 3, func(r SeedsRow) rl.SeedEstimate { return r.VsDefault }},
		{"vs static best", "vs static best", 3, func(r SeedsRow) rl.SeedEstimate { return r.VsStatic }},
	}
	if len(s.Rows) > 0 && s.Rows[0].VsStaticPerAgent != nil {
		cols = append(cols, seedColumn{"vs static/agent", "vs static best per agent", 3, func(r SeedsRow) rl.SeedEstimate {
			if r.VsStaticPerAgent == nil {
				return rl.SeedEstimate{Mean: math.NaN()}
			}
			return *r.VsStaticPerAgent
		}})
	}
	cols = append(cols, seedColumn{"util", "util", 3, metric("util")})
	if len(s.Rows) > 0 && s.Rows[0].Metrics["agent_jain"].N > 0 {
		cols = append(cols, seedColumn{"Jain (agents)", "Jain's index of the agents' goodputs", 3, metric("agent_jain")})
	}
	return append(cols, seedColumn{"RTT p95 ms", "RTT p95 (ms)", 2, metric("rtt_p95_ms")},
		seedColumn{"short FCT p95 ms", "short FCT p95 (ms)", 0, metric("small_fct_p95_ms")})
}
