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
	perAgent := len(s.Rows) > 0 && s.Rows[0].VsStaticPerAgent != nil
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "condition\treward\tvs default\tvs static best\t"
	if perAgent {
		head += "vs static/agent\t"
	}
	jain := len(s.Rows) > 0 && s.Rows[0].Metrics["agent_jain"].N > 0
	head += "util\t"
	if jain {
		head += "Jain (agents)\t"
	}
	fmt.Fprintln(tw, head+"RTT p95 ms\tshort FCT p95 ms\t")
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", r.Condition, r.Metrics["reward"].Format(3), r.VsDefault.Format(3), r.VsStatic.Format(3))
		if perAgent {
			g := "n/a"
			if r.VsStaticPerAgent != nil {
				g = r.VsStaticPerAgent.Format(3)
			}
			fmt.Fprintf(tw, "%s\t", g)
		}
		fmt.Fprintf(tw, "%s\t", r.Metrics["util"].Format(3))
		if jain {
			fmt.Fprintf(tw, "%s\t", r.Metrics["agent_jain"].Format(3))
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", r.Metrics["rtt_p95_ms"].Format(2), r.Metrics["small_fct_p95_ms"].Format(0))
	}
	tw.Flush()
}
