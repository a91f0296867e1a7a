package datacenter

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

// Defaults of Config (see docs/datacenter.md for why).
const (
	// DefaultInterval is the agent's step, the paper's T2: the time
	// between parameter updates and the span its statistics cover. The
	// paper acts every few seconds on 10-50 ms paths; on 50 us - 1 ms
	// data-centre paths 100 ms is still hundreds to thousands of RTTs.
	DefaultInterval = 100 * time.Millisecond
	// DefaultSteps is the number of agent steps in an episode (3 s of
	// simulated time after a one-interval warm-up).
	DefaultSteps = 30
)

// Config configures a simulated data centre and its agents. Zero values
// take the defaults in brackets.
type Config struct {
	// Base is the scenario: its flows are the controlled flows (they must
	// all use BBR); its background is the uncontrolled traffic. Required.
	Base *scenario.Scenario
	// Agents is the number of agents K [1]. The controlled flows are
	// split into K contiguous subsets of (nearly) equal size, in scenario
	// order: with the datacenter scenario and K = 2, one agent per rack.
	Agents int
	// Interval is the agent step T2 [DefaultInterval].
	Interval time.Duration
	// Steps is the number of agent steps per episode [DefaultSteps].
	Steps int
	// Action selects the action space [Discrete].
	Action ActionKind
	// History is the number of stacked observations [1].
	History int
	// Reward weighs the reward's terms.
	Reward RewardConfig
	// Random randomises each episode; its zero value randomises nothing.
	Random Randomization
	// Workload names the workload preset (Workloads) the configuration
	// came from ["": datacenter]; policies record it so that an
	// evaluation on another workload is caught.
	Workload string
}

// Randomization describes an episode's random events, after the paper's
// training workload: "a series of random events where the available
// bandwidth varies ..., latency varies ..., and flows joining and leaving
// the network. The random intervals of these events are uniformly
// distributed" (section VI). Ranges [lo, hi] with hi = 0 are off.
type Randomization struct {
	// EventGap is the range of the uniform time between two link or path
	// events (the paper: 1-50 s on its WAN-scale emulation).
	EventGap [2]time.Duration
	// PathDelay is the range of a rack's one-way extra path delay
	// (log-uniform), drawn for every rack at the start and again for one
	// rack at each path event (a re-route changes that rack's RTT).
	PathDelay [2]time.Duration
	// Rate is the range of the bottleneck rate (log-uniform) set by
	// capacity events; the episode starts at the scenario's rate.
	Rate [2]units.Bandwidth
	// Load is the range of the background arrivals' offered load, as a
	// fraction of the scenario's bottleneck rate, drawn per episode.
	Load [2]float64
	// Sizes, if set, replaces the arrivals' flow-size distribution
	// ("websearch", "datamining" or a CDF file, relative to the working
	// directory).
	Sizes string
	// Churn is the probability that a controlled flow other than the
	// first of its rack starts late (uniformly in the first half of the
	// episode) and, independently, that it stops early (uniformly in the
	// second half): controlled flows join and leave.
	Churn float64
}

// Condition is a named evaluation condition: a scenario change and a
// randomisation.
type Condition struct {
	// Name identifies it ("train", "load", ...).
	Name string
	// Doc says what differs from training.
	Doc string
	// Training, if set, says what a training workload's randomisation has
	// in its place (Describe).
	Training func(r Randomization) string
	// Apply changes a copy of the base scenario and the training
	// randomisation.
	Apply func(s *scenario.Scenario, r *Randomization) error
}

// Describe is the condition's Doc with what the training workload, whose
// randomisation is r, has in its place: the same condition departs from
// different ranges on the data-centre and the paper workloads.
func (c Condition) Describe(r Randomization) string {
	if c.Training == nil {
		return c.Doc
	}
	return c.Doc + " (training: " + c.Training(r) + ")"
}

// fmtPathDelay prints a path delay as the conditions' docs do: whole
// microseconds below a millisecond, milliseconds above.
func fmtPathDelay(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%d us", d/time.Microsecond)
	}
	return fmt.Sprintf("%g ms", float64(d)/float64(time.Millisecond))
}

// TrainingRandomization is the training workload on the datacenter
// scenario: path or capacity events every 0.3-1.2 s, one-way rack path
// delays of 10 us - 1 ms (propagation RTTs of about 0.04-2 ms), capacity
// 300 Mbit/s - 1 Gbit/s, background load 10-40 %, and half of the
// controlled flows other than each rack's first joining late or leaving
// early.
func TrainingRandomization() Randomization {
	return Randomization{
		EventGap:  [2]time.Duration{300 * time.Millisecond, 1200 * time.Millisecond},
		PathDelay: [2]time.Duration{10 * time.Microsecond, time.Millisecond},
		Rate:      [2]units.Bandwidth{300 * units.Mbps, units.Gbps},
		Load:      [2]float64{0.1, 0.4},
		Churn:     0.5,
	}
}

// Conditions are the evaluation conditions: the training one and four the
// agents never saw.
var Conditions = []Condition{
	{Name: "train", Doc: "the training workload", Apply: func(*scenario.Scenario, *Randomization) error { return nil }},
	{Name: "load", Doc: "background load 60-70 %",
		Training: func(r Randomization) string { return fmt.Sprintf("%.0f-%.0f %%", 100*r.Load[0], 100*r.Load[1]) },
		Apply: func(_ *scenario.Scenario, r *Randomization) error {
			r.Load = [2]float64{0.6, 0.7}
			return nil
		}},
	{Name: "rtt", Doc: "rack paths of 1.5-3 ms one way",
		Training: func(r Randomization) string {
			return fmtPathDelay(r.PathDelay[0]) + " - " + fmtPathDelay(r.PathDelay[1])
		},
		Apply: func(_ *scenario.Scenario, r *Randomization) error {
			r.PathDelay = [2]time.Duration{1500 * time.Microsecond, 3 * time.Millisecond}
			return nil
		}},
	{Name: "sizes", Doc: "VL2 data-mining flow sizes for the background",
		Training: func(r Randomization) string {
			if r.Sizes == "" {
				// The arrivals' own sizes, which both built-in
				// scenarios take from DCTCP's web search.
				return "DCTCP web search"
			}
			return r.Sizes
		},
		Apply: func(_ *scenario.Scenario, r *Randomization) error {
			r.Sizes = "datamining"
			return nil
		}},
	{Name: "flows", Doc: "twice as many controlled flows per rack", Apply: func(s *scenario.Scenario, _ *Randomization) error {
		for i := range s.Flows {
			s.Flows[i].Count *= 2
		}
		return nil
	}},
}

// ConditionNames lists the conditions' names.
func ConditionNames() []string {
	var out []string
	for _, c := range Conditions {
		out = append(out, c.Name)
	}
	return out
}

// LookupConditions returns the named conditions in the given order, or an
// error naming an unknown one.
func LookupConditions(names []string) ([]Condition, error) {
	var out []Condition
	for _, n := range names {
		found := false
		for _, c := range Conditions {
			if c.Name == n {
				out = append(out, c)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown condition %q (known: %s)", n, strings.Join(ConditionNames(), ", "))
		}
	}
	return out, nil
}

// WithCondition returns cfg changed by c (cfg.Base is cloned).
func (cfg Config) WithCondition(c Condition) (Config, error) {
	s := cfg.Base.Clone()
	r := cfg.Random
	if err := c.Apply(s, &r); err != nil {
		return cfg, err
	}
	if err := s.Validate(); err != nil {
		return cfg, fmt.Errorf("condition %s: %w", c.Name, err)
	}
	cfg.Base, cfg.Random = s, r
	return cfg, nil
}

func (cfg *Config) defaults() {
	if cfg.Agents == 0 {
		cfg.Agents = 1
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Steps == 0 {
		cfg.Steps = DefaultSteps
	}
	if cfg.History == 0 {
		cfg.History = 1
	}
	cfg.Reward.defaults()
}

// validate checks cfg (after defaults) against the scenario.
func (cfg *Config) validate() error {
	s := cfg.Base
	if s == nil {
		return fmt.Errorf("datacenter: no base scenario")
	}
	ctl := 0
	for _, f := range s.Flows {
		if f.CC.Name != "bbr" {
			return fmt.Errorf("datacenter: flow %q uses %q; the agents tune BBR, so every scenario flow must use bbr", f.Name, f.CC.Name)
		}
		if f.Bytes.V > 0 {
			return fmt.Errorf("datacenter: flow %q has a size; controlled flows must be long-lived (no bytes)", f.Name)
		}
		ctl += max(f.Count, 1)
	}
	switch {
	case ctl == 0:
		return fmt.Errorf("datacenter: scenario %s has no flows for the agents to control", s.Name)
	case cfg.Agents < 1 || cfg.Agents > ctl:
		return fmt.Errorf("datacenter: %d agents for %d controlled flows; want 1 to %d", cfg.Agents, ctl, ctl)
	case cfg.Interval < time.Millisecond:
		return fmt.Errorf("datacenter: interval %v is below 1ms", cfg.Interval)
	case cfg.Steps < 1:
		return fmt.Errorf("datacenter: %d steps per episode, want >= 1", cfg.Steps)
	case cfg.History < 1 || cfg.History > 16:
		return fmt.Errorf("datacenter: history %d, want 1 to 16", cfg.History)
	case cfg.Action != Discrete && cfg.Action != Continuous:
		return fmt.Errorf("datacenter: unknown action kind %d", cfg.Action)
	case s.Bottleneck.Rate.V <= 0:
		return fmt.Errorf("datacenter: scenario %s needs a rate-based bottleneck (no trace)", s.Name)
	}
	if err := cfg.Reward.validate(); err != nil {
		return err
	}
	return cfg.Random.validate()
}

func (r Randomization) validate() error {
	ok := func(lo, hi float64) bool { return hi == 0 || (lo > 0 && lo <= hi) }
	switch {
	case !ok(float64(r.EventGap[0]), float64(r.EventGap[1])):
		return fmt.Errorf("datacenter: event gap range %v must be positive and ordered", r.EventGap)
	case r.PathDelay[1] != 0 && (r.PathDelay[0] <= 0 || r.PathDelay[0] > r.PathDelay[1] || r.PathDelay[1] > time.Second):
		return fmt.Errorf("datacenter: path delay range %v must be positive, ordered and at most 1s", r.PathDelay)
	case !ok(float64(r.Rate[0]), float64(r.Rate[1])):
		return fmt.Errorf("datacenter: rate range %v must be positive and ordered", r.Rate)
	// Written so that a NaN fails: with it every comparison is false, and
	// a NaN load drew arrival gaps that filled memory with events.
	case r.Load[1] != 0 && !(r.Load[0] >= 0 && r.Load[0] <= r.Load[1] && r.Load[1] < 1):
		return fmt.Errorf("datacenter: load range %v must be ordered within [0, 1)", r.Load)
	case !(r.Churn >= 0 && r.Churn <= 1):
		return fmt.Errorf("datacenter: churn %g must be in [0, 1]", r.Churn)
	}
	return nil
}

// logUniform maps u in [0, 1) to [lo, hi] on a log scale.
func logUniform(u, lo, hi float64) float64 {
	if hi <= lo {
		return lo
	}
	return math.Exp(math.Log(lo) + u*(math.Log(hi)-math.Log(lo)))
}

// sortedCopy returns the values sorted (for percentiles).
func sortedCopy(x []float64) []float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	return y
}
