package datacenter

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl/policy"
)

// Controller chooses an agent's parameters from its observation. A
// Controller serves one episode at a time (it may keep per-episode state).
type Controller func(agent int, obs []float32) Params

// Scheme is an evaluated way of setting BBR's windows.
type Scheme struct {
	// Name labels it in tables and figures.
	Name string
	// New returns a fresh Controller for one episode (goroutine-local).
	New func() Controller
}

// StaticScheme keeps p for every agent all the time.
func StaticScheme(name string, p Params) Scheme {
	return Scheme{Name: name, New: func() Controller { return func(int, []float32) Params { return p } }}
}

// StaticAgentsScheme keeps ps[i] for agent i all the time.
func StaticAgentsScheme(name string, ps []Params) Scheme {
	ps = append([]Params(nil), ps...)
	return Scheme{Name: name, New: func() Controller { return func(agent int, _ []float32) Params { return ps[agent%len(ps)] } }}
}

// PolicyScheme drives agents with trained policies: one shared by all
// agents, or one per agent.
func PolicyScheme(name string, pols []*policy.Policy, kind ActionKind) Scheme {
	return Scheme{Name: name, New: func() Controller {
		cl := make([]*policy.Policy, len(pols))
		for i, p := range pols {
			cl[i] = p.Clone()
		}
		return func(agent int, obs []float32) Params {
			return kind.Decode(cl[agent%len(cl)].ActInto(obs))
		}
	}}
}

// CheckPolicies verifies that pols fit cfg: shapes, and one policy or one
// per agent.
func CheckPolicies(cfg Config, pols []*policy.Policy) error {
	s, err := NewSim(cfg)
	if err != nil {
		return err
	}
	if len(pols) != 1 && len(pols) != s.Agents() {
		return fmt.Errorf("datacenter: %d policies for %d agents; want one shared policy or one per agent", len(pols), s.Agents())
	}
	e := &Env{sim: s, kind: s.cfg.Action}
	for i, p := range pols {
		if err := p.Check(e.ObservationSpace(), e.ActionSpace()); err != nil {
			return fmt.Errorf("datacenter: policy %d: %w", i, err)
		}
	}
	return nil
}

// ConfigFromPolicy returns base with the environment settings recorded in
// a policy trained by Train (action space, history, interval, episode
// length, reward weights, number of agents), so evaluation observes and
// acts as training did.
func ConfigFromPolicy(base Config, p *policy.Policy) (Config, error) {
	return ConfigFromSettings(base, p.Meta.Extra)
}

// ConfigFromSettings is ConfigFromPolicy from a policy's recorded settings
// (its Meta.Extra, which the host-agent RPC's Describe also carries).
func ConfigFromSettings(base Config, x map[string]string) (Config, error) {
	if x == nil {
		return base, fmt.Errorf("datacenter: policy has no data-centre settings (trained by another command?)")
	}
	var err error
	get := func(key string, set func(string) error) {
		if v, ok := x[key]; ok && err == nil {
			if e := set(v); e != nil {
				err = fmt.Errorf("datacenter: policy setting %s=%q: %w", key, v, e)
			}
		}
	}
	get("action", func(v string) error { k, e := ParseActionKind(v); base.Action = k; return e })
	get("history", func(v string) error { n, e := strconv.Atoi(v); base.History = n; return e })
	get("steps", func(v string) error { n, e := strconv.Atoi(v); base.Steps = n; return e })
	get("agents", func(v string) error { n, e := strconv.Atoi(v); base.Agents = n; return e })
	get("interval", func(v string) error { d, e := time.ParseDuration(v); base.Interval = d; return e })
	get("alpha", func(v string) error { a, e := strconv.ParseFloat(v, 64); base.Reward.Alpha = a; return e })
	get("tau", func(v string) error { d, e := time.ParseDuration(v); base.Reward.Tau = d; return e })
	get("fairness", func(v string) error { f, e := strconv.ParseFloat(v, 64); base.Reward.Fairness = f; return e })
	if _, ok := x["workload"]; !ok && cmp.Or(base.Workload, "datacenter") != "datacenter" {
		return base, fmt.Errorf("datacenter: the policy was trained on workload datacenter, this evaluation runs %s (use --workload datacenter)", base.Workload)
	}
	get("workload", func(v string) error {
		if want := cmp.Or(base.Workload, "datacenter"); v != want {
			return fmt.Errorf("the policy was trained on workload %s, this evaluation runs %s (use --workload %s)", v, want, v)
		}
		return nil
	})
	return base, err
}

// RunEpisode plays one episode of cfg with seed under ctl and returns its
// measurements.
func RunEpisode(cfg Config, seed uint64, ctl Controller) (*EpisodeStats, error) {
	s, err := NewSim(cfg)
	if err != nil {
		return nil, err
	}
	s.Reset(seed)
	for {
		for i := range s.Agents() {
			if err := s.Apply(i, ctl(i, s.Observation(i))); err != nil {
				return nil, err
			}
		}
		if s.Advance() {
			return s.Stats(), nil
		}
	}
}

// TracePoint is one interval of a traced episode (paper figure 3): the
// controlled flows' mean true propagation RTT, mean RTprop estimate and
// mean measured RTT, the link utilisation, and agent 0's parameters.
type TracePoint struct {
	T                             float64 // s, end of the interval
	BaseRTTMs, RTpropMs, RTTMs    float64
	Util, GoodputMbps, DelayTerm  float64
	MinRTTWindow, BwWindowRounds  float64
	BottleneckMbps, ActiveControl float64
}

// Trace plays one episode and records every interval.
func Trace(cfg Config, seed uint64, ctl Controller) ([]TracePoint, error) {
	s, err := NewSim(cfg)
	if err != nil {
		return nil, err
	}
	s.Reset(seed)
	var out []TracePoint
	for {
		for i := range s.Agents() {
			if err := s.Apply(i, ctl(i, s.Observation(i))); err != nil {
				return nil, err
			}
		}
		done := s.Advance()
		var base, rtprop, rtt, good float64
		var n, nr int
		for j, c := range s.flows {
			st := s.last[j]
			if !st.active {
				continue
			}
			n++
			base += ms(s.baseRTT(c))
			good += float64(st.goodput)
			if st.hasRTT {
				nr++
				rtprop += ms(st.rtprop)
				rtt += ms(st.rttMean)
			}
		}
		p := s.Params(0)
		tp := TracePoint{T: s.net.Now().Seconds(), Util: s.util, DelayTerm: s.sTeam,
			GoodputMbps:  good * 8 / s.cfg.Interval.Seconds() / 1e6,
			MinRTTWindow: p.MinRTTWindow, BwWindowRounds: float64(p.BwWindowRounds),
			BottleneckMbps: s.net.Bottleneck.Rate().Mbps(), ActiveControl: float64(n),
			BaseRTTMs: math.NaN(), RTpropMs: math.NaN(), RTTMs: math.NaN()}
		if n > 0 {
			tp.BaseRTTMs = base / float64(n)
		}
		if nr > 0 {
			tp.RTpropMs, tp.RTTMs = rtprop/float64(nr), rtt/float64(nr)
		}
		out = append(out, tp)
		if done {
			return out, nil
		}
	}
}

// Estimate is a mean with the half-width of its 95 % confidence interval
// (Student t over runs).
type Estimate struct {
	Mean float64 `json:"mean"`
	CI   float64 `json:"ci"`
	N    int     `json:"n"`
}

func estimate(x []float64) Estimate {
	s := metrics.Summarize(x) // ignores NaNs; Student-t interval
	return Estimate{Mean: s.Mean, CI: s.CI95, N: s.N}
}

// EvalConfig configures Evaluate.
type EvalConfig struct {
	// Env is the base configuration (training randomisation); each
	// condition changes a copy.
	Env Config
	// Conditions to evaluate on [all].
	Conditions []Condition
	// Schemes to compare.
	Schemes []Scheme
	// Runs is the number of episodes per scheme and condition [8]; run r
	// uses seed Seed + r for every scheme (common random numbers).
	Runs int
	Seed uint64
	// Jobs is the number of parallel episodes [1].
	Jobs int
	// Progress, if set, is called after each episode.
	Progress func(done, total int)
	// Online are schemes that keep learning while they are evaluated
	// (OnlineEvaluate): each plays the Runs episodes of a condition in
	// seed order. Their rows follow the other schemes'; their reward gain
	// is against Schemes[0], on the same seeds.
	Online []OnlineScheme
}

// OnlineScheme is a policy evaluated while it keeps learning.
type OnlineScheme struct {
	Name   string
	Policy *policy.Policy
	// LR is the learning rate [OnlineLR].
	LR float64
}

// Row is one scheme on one condition: the mean and CI of each metric.
type Row struct {
	Condition string              `json:"condition"`
	Scheme    string              `json:"scheme"`
	Metrics   map[string]Estimate `json:"metrics"`
	// RewardGain is the mean per-run reward difference to the first
	// scheme (paired over seeds).
	RewardGain Estimate `json:"reward_gain_vs_first"`
	// Rewards holds each run's mean reward per step (run r used seed
	// Seed + r), for paired comparisons between any two schemes.
	Rewards []float64 `json:"rewards"`
	// RTpropSqErrMs2 and FlowGoodputMbps pool every run's per-(flow,
	// step) squared RTprop errors against the true propagation RTT and
	// per-flow goodputs: the samples of the paper's Figure 3(b) and 3(d)
	// CDFs. Kept for the first condition only (the training one).
	RTpropSqErrMs2  []float64 `json:"rtprop_sq_err_ms2,omitempty"`
	FlowGoodputMbps []float64 `json:"flow_goodput_mbps,omitempty"`
}

// PairedGain returns the mean and CI of the per-run reward differences
// a − b of two rows of the same condition (same seeds).
func PairedGain(a, b Row) Estimate {
	n := min(len(a.Rewards), len(b.Rewards))
	d := make([]float64, n)
	for i := range n {
		d[i] = a.Rewards[i] - b.Rewards[i]
	}
	return estimate(d)
}

// Get returns a metric's estimate.
func (r Row) Get(name string) Estimate { return r.Metrics[name] }

// Evaluate runs every scheme on every condition.
func Evaluate(ctx context.Context, ec EvalConfig) ([]Row, error) {
	if ec.Runs == 0 {
		ec.Runs = 8
	}
	if ec.Jobs < 1 {
		ec.Jobs = 1
	}
	if len(ec.Conditions) == 0 {
		ec.Conditions = Conditions
	}
	if len(ec.Schemes) == 0 {
		return nil, fmt.Errorf("datacenter: nothing to evaluate")
	}
	cfgs := make([]Config, len(ec.Conditions))
	for i, c := range ec.Conditions {
		cc, err := ec.Env.WithCondition(c)
		if err != nil {
			return nil, err
		}
		if _, err := NewSim(cc); err != nil {
			return nil, fmt.Errorf("condition %s: %w", c.Name, err)
		}
		cfgs[i] = cc
	}
	type job struct{ c, s, r int }
	var jobs []job
	for c := range ec.Conditions {
		for s := range ec.Schemes {
			for r := range ec.Runs {
				jobs = append(jobs, job{c, s, r})
			}
		}
	}
	res := make([]Metrics, len(jobs))
	sqErr := make([][]float64, len(jobs))
	good := make([][]float64, len(jobs))
	errs := make([]error, len(jobs))
	err := par.Do(ctx, len(jobs), ec.Jobs, ec.Progress, func(_, i int) {
		j := jobs[i]
		st, err := RunEpisode(cfgs[j.c], ec.Seed+uint64(j.r), ec.Schemes[j.s].New())
		if err != nil {
			errs[i] = err
			return
		}
		res[i] = st.Metrics()
		if j.c == 0 {
			sqErr[i], good[i] = st.RTpropSqErr, st.FlowGoodput
		}
	})
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	var rows []Row
	at := func(c, s, r int) Metrics { return res[(c*len(ec.Schemes)+s)*ec.Runs+r] }
	for c, cond := range ec.Conditions {
		for s, sch := range ec.Schemes {
			row := Row{Condition: cond.Name, Scheme: sch.Name, Metrics: map[string]Estimate{}}
			for k, name := range MetricNames {
				v := make([]float64, ec.Runs)
				for r := range ec.Runs {
					v[r] = at(c, s, r).Values()[k]
				}
				row.Metrics[name] = estimate(v)
			}
			d := make([]float64, ec.Runs)
			for r := range ec.Runs {
				d[r] = at(c, s, r).Reward - at(c, 0, r).Reward
				row.Rewards = append(row.Rewards, at(c, s, r).Reward)
				k := (c*len(ec.Schemes)+s)*ec.Runs + r
				row.RTpropSqErrMs2 = append(row.RTpropSqErrMs2, sqErr[k]...)
				row.FlowGoodputMbps = append(row.FlowGoodputMbps, good[k]...)
			}
			row.RewardGain = estimate(d)
			rows = append(rows, row)
		}
	}
	for c, cond := range ec.Conditions {
		for _, o := range ec.Online {
			seeds := make([]uint64, ec.Runs)
			for r := range seeds {
				seeds[r] = ec.Seed + uint64(r)
			}
			ms, err := OnlineEvaluate(ctx, cfgs[c], o.Policy, cmp.Or(o.LR, OnlineLR), seeds)
			if err != nil {
				return nil, fmt.Errorf("%s on %s: %w", o.Name, cond.Name, err)
			}
			row := Row{Condition: cond.Name, Scheme: o.Name, Metrics: map[string]Estimate{}}
			for k, name := range MetricNames {
				v := make([]float64, ec.Runs)
				for r := range ec.Runs {
					v[r] = ms[r].Values()[k]
				}
				row.Metrics[name] = estimate(v)
			}
			d := make([]float64, ec.Runs)
			for r := range ec.Runs {
				d[r] = ms[r].Reward - at(c, 0, r).Reward
				row.Rewards = append(row.Rewards, ms[r].Reward)
			}
			row.RewardGain = estimate(d)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// GridRow is one static setting of the grid search.
type GridRow struct {
	Params Params   `json:"params"`
	Reward Estimate `json:"reward"`
}

// GridSearch evaluates every discrete-grid setting, statically, for runs
// episodes of cfg (seeds seed, seed+1, ...) and returns the rows and the
// setting with the highest mean reward: the "best static" baseline.
func GridSearch(ctx context.Context, cfg Config, runs int, seed uint64, jobs int, progress func(done, total int)) ([]GridRow, Params, error) {
	n := len(GridMinRTT) * len(GridBwRounds)
	est, best, err := searchStatic(ctx, cfg, n, func(a, _ int) Params { return GridParams(a) }, runs, seed, jobs, progress)
	if err != nil {
		return nil, Params{}, err
	}
	rows := make([]GridRow, n)
	for a := range n {
		rows[a] = GridRow{Params: GridParams(a), Reward: est[a]}
	}
	return rows, rows[best].Params, nil
}

// StaticPerAgentName names the baseline that keeps each agent's flows at
// their own static setting, the best combination of GridSearchPerAgent.
const StaticPerAgentName = "static best per agent"

// MaxAgentGrid bounds GridSearchPerAgent's product grid: 12^K settings is
// 144 for two agents and 1,728 for three; four would be 20,736.
const MaxAgentGrid = 1728

// AgentGridRow is one combination of the per-agent grid search: agent i
// keeps Params[i] all episode.
type AgentGridRow struct {
	Params []Params `json:"params"`
	Reward Estimate `json:"reward"`
}

// GridSearchPerAgent is GridSearch over every combination of one grid
// setting per agent, so a learned multi-agent scheme is also compared with
// the best it could do by setting each rack once, for good. Its episodes
// are GridSearch's (same seeds), so the combinations that give every agent
// the same setting reproduce GridSearch's rows exactly, and the best
// combination scores at least the best static setting on them.
func GridSearchPerAgent(ctx context.Context, cfg Config, runs int, seed uint64, jobs int, progress func(done, total int)) ([]AgentGridRow, []Params, error) {
	// Config's default is one agent; searchStatic validates the rest.
	k, g := max(cfg.Agents, 1), len(GridMinRTT)*len(GridBwRounds)
	n, err := PerAgentGrid(k)
	if err != nil {
		return nil, nil, err
	}
	// Combination a gives agent i grid setting (a / g^i) mod g.
	setting := func(a, agent int) Params {
		for range agent {
			a /= g
		}
		return GridParams(a % g)
	}
	est, best, err := searchStatic(ctx, cfg, n, setting, runs, seed, jobs, progress)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]AgentGridRow, n)
	for a := range n {
		ps := make([]Params, k)
		for i := range ps {
			ps[i] = setting(a, i)
		}
		rows[a] = AgentGridRow{Params: ps, Reward: est[a]}
	}
	return rows, rows[best].Params, nil
}

// PerAgentGrid returns how many combinations GridSearchPerAgent plays for
// the given number of agents, or an error saying how many it accepts.
func PerAgentGrid(agents int) (int, error) {
	if agents < 2 {
		return 0, fmt.Errorf("datacenter: a per-agent grid search needs two or more agents, the configuration has %d", agents)
	}
	g, n := len(GridMinRTT)*len(GridBwRounds), 1
	for i := 1; i <= agents; i++ {
		if n *= g; n > MaxAgentGrid {
			return 0, fmt.Errorf("datacenter: a per-agent grid search over %d agents has %d^%d settings, more than %d: at most %d agents", agents, g, agents, MaxAgentGrid, i-1)
		}
	}
	return n, nil
}

// searchStatic plays runs episodes (seeds seed, seed+1, ...) of each of n
// static settings, setting(a, agent) being agent's parameters under
// setting a, and returns each setting's reward and the index of the
// highest mean (the first on ties).
func searchStatic(ctx context.Context, cfg Config, n int, setting func(a, agent int) Params, runs int, seed uint64, jobs int, progress func(done, total int)) ([]Estimate, int, error) {
	if runs < 1 {
		return nil, 0, fmt.Errorf("datacenter: grid search needs at least one run per setting")
	}
	if _, err := NewSim(cfg); err != nil {
		return nil, 0, err
	}
	rew := make([]float64, n*runs)
	errs := make([]error, n*runs)
	err := par.Do(ctx, n*runs, jobs, progress, func(_, i int) {
		a := i / runs
		st, err := RunEpisode(cfg, seed+uint64(i%runs), func(agent int, _ []float32) Params { return setting(a, agent) })
		if err != nil {
			errs[i] = err
			return
		}
		rew[i] = st.Metrics().Reward
	})
	if err != nil {
		return nil, 0, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, 0, e
		}
	}
	est := make([]Estimate, n)
	best := 0
	for a := range n {
		est[a] = estimate(rew[a*runs : (a+1)*runs])
		if est[a].Mean > est[best].Mean {
			best = a
		}
	}
	return est, best, nil
}
