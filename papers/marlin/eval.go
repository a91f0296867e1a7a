package marlin

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/policy"
)

// Scheme names a way of running the transfer.
type Scheme string

// The schemes of the paper's evaluation (section V-C).
const (
	// CUBIC is TCP CUBIC.
	CUBIC Scheme = "cubic"
	// NewReno and BBR are the other TCP baselines (not in the paper).
	NewReno Scheme = "newreno"
	BBR     Scheme = "bbr"
	// Hybla and Westwood are TCPs designed for satellite and lossy
	// wireless links (Linux's tcp_hybla.c and tcp_westwood.c; not in the
	// paper): the baselines a tactical network's engineer would try first.
	Hybla    Scheme = "hybla"
	Westwood Scheme = "westwood"
	// Marlin is the learned policy driving the Mockets-style protocol.
	Marlin Scheme = "marlin"
	// Mockets is the Mockets baseline: a window matched to each link's
	// bandwidth-delay product, never reduced on loss.
	Mockets Scheme = "mockets"
	// Random drives the protocol with uniformly random actions.
	Random Scheme = "random"
	// Ideal is a sender that knows, at every instant, the capacity the
	// non-adaptive (UDP) background leaves, takes all of it (adaptive
	// background flows yield), loses only to random loss and adds no
	// queueing delay: its transfer time is one handshake RTT, the time to
	// send the transfer's wire bytes in that capacity, and one RTT for the
	// last packet and its acknowledgement. It bounds every scheme that
	// does not displace the UDP background's packets from the queue.
	Ideal Scheme = "ideal"
)

// tcpSchemes are the baselines that run cclab's TCP with the scheme's
// controller.
var tcpSchemes = []Scheme{CUBIC, NewReno, BBR, Hybla, Westwood}

// Baselines are the schemes MARLIN is judged against (Goals.DominatedBy):
// the TCP baselines and Mockets.
var Baselines = append([]Scheme{Mockets}, tcpSchemes...)

// IsBaseline reports whether s is one of Baselines.
func IsBaseline(s Scheme) bool { return slices.Contains(Baselines, s) }

// EvalConfig configures an evaluation.
type EvalConfig struct {
	// Base is the scenario (satcom-uhf).
	Base *scenario.Scenario
	// Bytes is the transfer size [600KB].
	Bytes units.Bytes
	// Runs is the number of transfers per scheme and loss level [100].
	Runs int
	// Losses are the UHF loss levels [0, 1, 2, 3 %].
	Losses []float64
	// Policy drives the marlin scheme; without it (and without Policies)
	// the scheme is skipped.
	Policy *policy.Policy
	// Policies, if set, replaces Policy: independently trained policies of
	// one configuration (training seeds), each evaluated on the same runs.
	// The marlin rows then give the mean over policies of each policy's
	// mean and a 95% confidence interval over policies (Student's t), so
	// they measure the training procedure, not one lucky run.
	Policies []*policy.Policy
	// Schemes restricts the schemes [all]. Random and Mockets run at the
	// highest loss level only, as in the paper.
	Schemes []Scheme
	// Seed offsets the runs' seeds: run i of every scheme uses seed
	// Seed+i, so schemes face the same background and losses.
	Seed uint64
	// Jobs is the number of parallel runs [GOMAXPROCS].
	Jobs int
	// MaxTime bounds a transfer; unfinished transfers count at this
	// time [120s].
	MaxTime time.Duration
	// Progress, if set, is called after each finished run.
	Progress func(done, total int)
	// Timeline, if it draws anything, gives each run its own link-switch
	// time and background scale, drawn from a stream seeded by the run's
	// seed, so every scheme faces the same draw [the base's timeline].
	Timeline Timeline
	// HeldOut adds HeldOutVariants to EvaluateAll's conditions, after the
	// unseen ones [false].
	HeldOut bool
}

// Outcome is one transfer's measurements.
type Outcome struct {
	Scheme          Scheme  `json:"scheme"`
	Loss            float64 `json:"loss"`
	Seed            uint64  `json:"seed"`
	TransferTime    float64 `json:"transfer_time_s"`
	Finished        bool    `json:"finished"`
	Retransmissions float64 `json:"retransmissions"`
	RTI             float64 `json:"rti"`
	// Policy is the index of the policy in EvalConfig.Policies.
	Policy int `json:"policy,omitempty"`
}

// Row aggregates the outcomes of one scheme at one loss level.
type Row struct {
	Scheme          Scheme  `json:"scheme"`
	Loss            float64 `json:"loss"`
	Runs            int     `json:"runs"`
	Unfinished      int     `json:"unfinished"`
	TransferTime    float64 `json:"transfer_time_s"`
	TransferTimeStd float64 `json:"transfer_time_s_std"`
	TransferTimeCI  float64 `json:"transfer_time_s_ci95"`
	Retrans         float64 `json:"retransmissions"`
	RetransStd      float64 `json:"retransmissions_std"`
	RetransCI       float64 `json:"retransmissions_ci95"`
	RTI             float64 `json:"rti"`
	RTIStd          float64 `json:"rti_std"`
	RTICI           float64 `json:"rti_ci95"`
	// Policies, if above 1, is the number of independently trained
	// policies: the means are over policies of each one's mean, and Std
	// and CI95 are across policies.
	Policies int `json:"policies,omitempty"`
}

func (c *EvalConfig) defaults() {
	if c.Bytes == 0 {
		c.Bytes = 600_000
	}
	if c.Runs == 0 {
		c.Runs = 100
	}
	if c.Losses == nil {
		c.Losses = []float64{0, 0.01, 0.02, 0.03}
	}
	if c.Jobs <= 0 {
		c.Jobs = runtime.GOMAXPROCS(0)
	}
	if c.MaxTime == 0 {
		c.MaxTime = 120 * time.Second
	}
	if c.Schemes == nil {
		c.Schemes = []Scheme{CUBIC, Marlin, Mockets, NewReno, BBR, Hybla, Westwood, Random, Ideal}
	}
	if c.Policies == nil && c.Policy != nil {
		c.Policies = []*policy.Policy{c.Policy}
	}
}

type job struct {
	scheme Scheme
	loss   float64
	seed   uint64
	pol    int // index in EvalConfig.Policies (marlin runs)
}

// Evaluate runs every transfer and aggregates them per scheme and loss, in
// the order of cfg.Schemes then cfg.Losses. Results do not depend on Jobs.
func Evaluate(ctx context.Context, cfg EvalConfig) ([]Row, []Outcome, error) {
	cfg.defaults()
	if cfg.Base == nil {
		return nil, nil, fmt.Errorf("marlin: no scenario to evaluate")
	}
	maxLoss := 0.0
	for _, l := range cfg.Losses {
		if l < 0 || l >= 1 {
			return nil, nil, fmt.Errorf("marlin: loss %g is outside [0, 1)", l)
		}
		maxLoss = max(maxLoss, l)
	}
	// A policy whose recorded options build an environment of another
	// shape would otherwise fail inside a run (ActInto panics on a
	// mismatched observation).
	for i, p := range cfg.Policies {
		if err := CheckPolicy(p); err != nil {
			return nil, nil, fmt.Errorf("marlin: policy %d of %d: %w", i+1, len(cfg.Policies), err)
		}
	}
	var jobs []job
	for _, sc := range cfg.Schemes {
		npol := 1
		if sc == Marlin {
			npol = len(cfg.Policies)
		}
		for p := range npol {
			for _, l := range cfg.Losses {
				if (sc == Random || sc == Mockets) && l != maxLoss {
					continue
				}
				for i := range cfg.Runs {
					jobs = append(jobs, job{sc, l, cfg.Seed + uint64(i) + 1, p})
				}
			}
		}
	}
	out := make([]Outcome, len(jobs))
	errs := make([]error, len(jobs))
	pols := make([][]*policy.Policy, par.Workers(len(jobs), cfg.Jobs))
	for w := range pols {
		for _, p := range cfg.Policies {
			pols[w] = append(pols[w], p.Clone()) // ActInto owns buffers
		}
	}
	if err := par.Do(ctx, len(jobs), cfg.Jobs, cfg.Progress, func(w, i int) {
		var p *policy.Policy
		if jobs[i].scheme == Marlin {
			p = pols[w][jobs[i].pol]
		}
		out[i], errs[i] = runOne(cfg, jobs[i], p)
		out[i].Policy = jobs[i].pol
	}); err != nil {
		return nil, nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return aggregate(out), out, nil
}

func aggregate(out []Outcome) []Row {
	var rows []Row
	idx := map[[2]any]int{}
	var groups [][]Outcome
	for _, o := range out {
		k := [2]any{o.Scheme, o.Loss}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	for _, g := range groups {
		if r, ok := acrossPolicies(g); ok {
			rows = append(rows, r)
			continue
		}
		tt := make([]float64, len(g))
		rx := make([]float64, len(g))
		ri := make([]float64, len(g))
		un := 0
		for i, o := range g {
			tt[i], rx[i], ri[i] = o.TransferTime, o.Retransmissions, o.RTI
			if !o.Finished {
				un++
			}
		}
		st, sr, sx := metrics.Summarize(tt), metrics.Summarize(rx), metrics.Summarize(ri)
		rows = append(rows, Row{
			Scheme: g[0].Scheme, Loss: g[0].Loss, Runs: len(g), Unfinished: un,
			TransferTime: st.Mean, TransferTimeStd: st.Std, TransferTimeCI: st.CI95,
			Retrans: sr.Mean, RetransStd: sr.Std, RetransCI: sr.CI95,
			RTI: sx.Mean, RTIStd: sx.Std, RTICI: sx.CI95,
		})
	}
	return rows
}

// acrossPolicies summarises a group holding runs of several policies: each
// policy's mean, then the mean and confidence interval over policies.
func acrossPolicies(g []Outcome) (Row, bool) {
	per := map[int][]Outcome{}
	var order []int
	for _, o := range g {
		if _, ok := per[o.Policy]; !ok {
			order = append(order, o.Policy)
		}
		per[o.Policy] = append(per[o.Policy], o)
	}
	if len(order) < 2 {
		return Row{}, false
	}
	var tt, rx, ri []float64
	un := 0
	for _, p := range order {
		r := aggregate(per[p])[0]
		tt, rx, ri = append(tt, r.TransferTime), append(rx, r.Retrans), append(ri, r.RTI)
		un += r.Unfinished
	}
	st, sr, sx := rl.OverSeeds(tt), rl.OverSeeds(rx), rl.OverSeeds(ri)
	return Row{
		Scheme: g[0].Scheme, Loss: g[0].Loss, Runs: len(g), Unfinished: un, Policies: len(order),
		TransferTime: st.Mean, TransferTimeStd: st.Std, TransferTimeCI: st.CI95,
		Retrans: sr.Mean, RetransStd: sr.Std, RetransCI: sr.CI95,
		RTI: sx.Mean, RTIStd: sx.Std, RTICI: sx.CI95,
	}, true
}

// PerPolicy aggregates the marlin outcomes of each policy separately, in
// policy order: one slice of rows (one per loss level) per policy.
func PerPolicy(out []Outcome) [][]Row {
	var res [][]Row
	for _, o := range out {
		if o.Scheme != Marlin {
			continue
		}
		for len(res) <= o.Policy {
			res = append(res, nil)
		}
	}
	for p := range res {
		var g []Outcome
		for _, o := range out {
			if o.Scheme == Marlin && o.Policy == p {
				g = append(g, o)
			}
		}
		res[p] = aggregate(g)
	}
	return res
}

// ValidationSeed is the seed offset of validation runs, far from the
// evaluation runs' seeds (1 to Runs): choosing a policy on them does not
// choose it on the evaluation.
const ValidationSeed = 1_000_000

// ValidationScore is what SelectPolicy scores a policy by.
const ValidationScore = "mean transfer time, s (lower is better)"

// SelectPolicy applies rl.MedianSeed to policies: each is scored by its
// mean transfer time over runs validation transfers at the highest loss
// level of cfg, seeds disjoint from the evaluation's, as the DeepCC and
// data-centre packages' SelectPolicy do with their own scores.
func SelectPolicy(ctx context.Context, cfg EvalConfig, pols []*policy.Policy, runs int) (rl.Selection, error) {
	cfg.defaults()
	maxLoss := 0.0
	for _, l := range cfg.Losses {
		maxLoss = max(maxLoss, l)
	}
	// Run i uses seed Seed+i+1 (Evaluate).
	if err := rl.CheckDisjoint("seed", rl.SeedRange(ValidationSeed+1, runs), rl.SeedRange(cfg.Seed+1, cfg.Runs)); err != nil {
		return rl.Selection{}, fmt.Errorf("marlin: %w", err)
	}
	c := cfg
	c.Policy, c.Policies = nil, pols
	c.Schemes, c.Losses, c.Runs, c.Seed = []Scheme{Marlin}, []float64{maxLoss}, runs, ValidationSeed
	_, out, err := Evaluate(ctx, c)
	if err != nil {
		return rl.Selection{}, err
	}
	scores := make([]float64, len(pols))
	for i, rows := range PerPolicy(out) {
		scores[i] = rows[0].TransferTime
	}
	return rl.SelectMedian(scores, ValidationScore, fmt.Sprintf("%d transfers at UHF loss %g, seeds %d-%d (disjoint from the evaluation's)",
		runs, maxLoss, ValidationSeed+1, ValidationSeed+runs))
}

// BaselineScenario returns the scenario of one transfer of the given size
// by a non-learning scheme: TCP CUBIC, or the Mockets baseline (the
// Mockets-style protocol with a fixed window matched to each link's
// bandwidth-delay product, re-set at every link switch, never reduced on
// loss).
func BaselineScenario(base *scenario.Scenario, scheme Scheme, bytes units.Bytes, seed uint64, maxTime time.Duration) (*scenario.Scenario, error) {
	s := base.Clone()
	s.Seed = seed
	f := &s.Flows[0]
	f.Count, f.Bytes, f.Start = 1, scenario.SizeOf(bytes), scenario.Duration{}
	switch {
	case slices.Contains(tcpSchemes, scheme):
		f.Protocol, f.CC = "tcp", scenario.CC{Name: string(scheme)}
	case scheme == Mockets:
		w0, ws := bdpWindows(s)
		f.Protocol, f.CC = "mockets", scenario.CC{Name: "fixed", Params: map[string]float64{"window": float64(w0)}}
		for i := range s.Bottleneck.Schedule {
			s.Bottleneck.Schedule[i].Window = scenario.SizeOf(ws[i])
		}
	default:
		return nil, fmt.Errorf("marlin: %q is not a baseline scheme", scheme)
	}
	s.Duration = scenario.Dur(maxTime)
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// WithLoss returns the scenario with the loss after the first link switch
// set to p.
func WithLoss(s *scenario.Scenario, p float64) *scenario.Scenario {
	c := s.Clone()
	if len(c.Bottleneck.Schedule) > 0 {
		c.Bottleneck.Schedule[0].Loss = &scenario.Loss{Model: "bernoulli", P: p}
	}
	return c
}

// bdpWindows returns the Mockets baseline's window for each schedule
// segment: the link's rate times its nominal RTT, at least one segment.
func bdpWindows(s *scenario.Scenario) (initial units.Bytes, after []units.Bytes) {
	const mss = 1448
	rtt := func(rate units.Bandwidth, delay time.Duration) units.Bytes {
		base := 2*delay + rate.TxTime(1500)
		return max(units.Bytes(float64(rate)/8*base.Seconds()), mss)
	}
	rate, delay := s.Bottleneck.Rate.V, s.Bottleneck.Delay.V
	initial = rtt(rate, delay)
	for _, c := range s.Bottleneck.Schedule {
		if c.Rate.IsSet() {
			rate = c.Rate.V
		}
		if c.Delay.IsSet() {
			delay = c.Delay.V
		}
		after = append(after, rtt(rate, delay))
	}
	return initial, after
}

// timelineStream is the second PCG seed of a run's timeline draw
// (EvalConfig.Timeline).
const timelineStream = 0x74696d656c696e65 // "timeline"

func runOne(cfg EvalConfig, j job, pol *policy.Policy) (Outcome, error) {
	o := Outcome{Scheme: j.scheme, Loss: j.loss, Seed: j.seed}
	base := WithLoss(cfg.Base, j.loss)
	if cfg.Timeline.Draws() {
		// Its own stream: the run's other random streams derive from
		// the seed as they do without a drawn timeline.
		cfg.Timeline.apply(base, rand.New(rand.NewPCG(j.seed, timelineStream)))
	}
	switch {
	case IsBaseline(j.scheme):
		s, err := BaselineScenario(base, j.scheme, cfg.Bytes, j.seed, cfg.MaxTime)
		if err != nil {
			return o, err
		}
		r, _, err := experiment.Run(context.Background(), s)
		if err != nil {
			return o, err
		}
		fillFromResult(&o, r, cfg.MaxTime)
		return o, nil
	case j.scheme == Marlin || j.scheme == Random:
		ec, err := policyEnvConfig(pol)
		if err != nil {
			return o, err
		}
		ec.Base, ec.Loss, ec.Bytes = base, -1, cfg.Bytes
		skip := 1
		if pol != nil {
			skip = PolicyFrameSkip(pol)
		}
		core, err := NewEnv(ec)
		if err != nil {
			return o, err
		}
		var e env.Env = core
		if e, err = env.NewStack(core, historyFor(ec.Variant), true); err != nil {
			return o, err
		}
		obs, _ := e.Reset(j.seed)
		rnd := rand.New(rand.NewPCG(j.seed, 0x72616e64))
		a := make([]float32, 1)
		maxSteps := int(cfg.MaxTime / StepInterval)
		for k := 0; k < maxSteps; k++ {
			if j.scheme == Marlin {
				// A policy trained with action repeat acts every skip
				// steps, on the observation after the last of them, as in
				// training (ActionRepeat).
				if k%skip == 0 {
					copy(a, pol.ActInto(obs))
				}
			} else {
				a[0] = float32(2*rnd.Float64() - 1)
			}
			var term bool
			obs, _, term, _, _ = e.Step(a)
			if term {
				break
			}
		}
		r := experiment.Summarize(core.Network(), 0)
		fillFromResult(&o, r, cfg.MaxTime)
		return o, nil
	case j.scheme == Ideal:
		return ideal(cfg, base, j)
	}
	return o, fmt.Errorf("marlin: unknown scheme %q", j.scheme)
}

func fillFromResult(o *Outcome, r *experiment.Result, maxTime time.Duration) {
	f := r.Flows[0]
	o.Retransmissions = float64(f.Retransmissions)
	if f.FCT != nil {
		o.TransferTime, o.Finished = *f.FCT, true
	} else {
		o.TransferTime = maxTime.Seconds()
	}
	o.RTI = math.NaN()
	if f.RTI != nil {
		o.RTI = *f.RTI
	}
}

// ideal integrates the capacity the UDP background leaves (see Ideal and
// Env.leftover) from the end of the handshake until the transfer's bytes
// are covered, interpolating within the last step, and adds the RTT of
// the link then in use. Its RTI is 0 (no RTT increase) and its
// retransmissions are the unavoidable ones: p/(1-p) per packet delivered
// on a link with random loss p.
func ideal(cfg EvalConfig, base *scenario.Scenario, j job) (Outcome, error) {
	o := Outcome{Scheme: Ideal, Loss: j.loss, Seed: j.seed, RTI: 0}
	core, err := NewEnv(EnvConfig{Base: base, Loss: -1})
	if err != nil {
		return o, err
	}
	core.Reset(j.seed)
	// The leftover capacity does not depend on the agent's own traffic;
	// keep it minimal so it does not disturb the background.
	core.ext.SetCongestionWindow(0, core.mss)
	need := float64(cfg.Bytes)
	got := 0.0
	n := core.Network()
	start := clock.Time(2 * base.Bottleneck.Delay.V) // the handshake
	for k := 0; k < int(cfg.MaxTime/StepInterval); k++ {
		from := n.Now()
		end := from.Add(StepInterval)
		loss := n.Bottleneck.LossRate()
		n.Sched.RunUntil(end)
		share := core.leftover(end)
		if end <= start {
			continue
		}
		if from < start {
			share *= float64(end-start) / float64(end-from)
		}
		if got+share >= need {
			frac := (need - got) / share
			done := from.Seconds() + frac*StepInterval.Seconds()
			o.TransferTime = done + 2*linkDelay(base, done).Seconds()
			o.Finished = true
			o.Retransmissions += (need - got) / 1448 * loss / (1 - loss)
			return o, nil
		}
		got += share
		o.Retransmissions += share / 1448 * loss / (1 - loss)
	}
	o.TransferTime = cfg.MaxTime.Seconds()
	return o, nil
}

// PolicyAction returns the action parametrisation a policy was trained
// with (policies trained before the option used ActionLinear).
func PolicyAction(p *policy.Policy) string {
	if a := p.Meta.Extra["action"]; a != "" {
		return a
	}
	if PolicyVariant(p) == VariantCompact {
		return ActionBDP
	}
	return ActionLinear
}

// PolicyFrameSkip returns the number of 100-ms steps a policy holds each
// action for (TrainConfig.FrameSkip; 1 for policies trained without it,
// and for an unreadable value, which CheckPolicy refuses).
func PolicyFrameSkip(p *policy.Policy) int {
	if k, err := strconv.Atoi(p.Meta.Extra["frame_skip"]); err == nil && k >= 1 {
		return k
	}
	return 1
}

// PolicyFilterWindows returns the compact variant's filter windows a
// policy was trained with (TrainConfig.CapacityWindow and MinRTTWindow;
// 0, the default, when not recorded), or an error naming an unreadable
// or out-of-range one.
func PolicyFilterWindows(p *policy.Policy) (capacity, minRTT time.Duration, err error) {
	for _, f := range []struct {
		key string
		d   *time.Duration
	}{{"capacity_window", &capacity}, {"min_rtt_window", &minRTT}} {
		v, ok := p.Meta.Extra[f.key]
		if !ok {
			continue
		}
		d, perr := time.ParseDuration(v)
		if perr != nil || !ValidFilterWindow(d) {
			return 0, 0, fmt.Errorf("marlin: policy %s %q: want a multiple of %v from %v to %v", f.key, v, StepInterval, StepInterval, MaxFilterWindow)
		}
		*f.d = d
	}
	return capacity, minRTT, nil
}

// PolicyBDPSpan returns the ActionBDP span a policy was trained with
// (TrainConfig.BDPSpan; 0, the default, when not recorded), or an error
// naming an unreadable or out-of-range one.
func PolicyBDPSpan(p *policy.Policy) (float64, error) {
	v, ok := p.Meta.Extra["bdp_span"]
	if !ok {
		return 0, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !ValidBDPSpan(x) {
		return 0, fmt.Errorf("marlin: policy bdp_span %q: want a number from %g to %g", v, 1.0, MaxBDPSpan)
	}
	return x, nil
}

// PolicyRTTFeature reports whether a policy was trained with the
// minimum-RTT feature (TrainConfig.RTTFeature; false when not recorded),
// or an error naming an unreadable value.
func PolicyRTTFeature(p *policy.Policy) (bool, error) {
	v, ok := p.Meta.Extra["rtt_feature"]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("marlin: policy rtt_feature %q: want true or false", v)
	}
	return b, nil
}

// PolicyWindowCap returns the window cap a policy was trained with
// (TrainConfig.WindowCap; 0 for the paper's WindowCap, which every
// policy file records, and for files without the entry), or an error
// naming an unreadable or out-of-range one.
func PolicyWindowCap(p *policy.Policy) (units.Bytes, error) {
	v, ok := p.Meta.Extra["window_cap"]
	if !ok {
		return 0, nil
	}
	b, err := ParseWindowCap(v)
	if err != nil {
		return 0, fmt.Errorf("marlin: policy window_cap %w", err)
	}
	return b, nil
}

// policyEnvConfig is the environment configuration Evaluate runs policy p
// in (p nil: the paper's variant), before the scenario and transfer.
func policyEnvConfig(p *policy.Policy) (EnvConfig, error) {
	if p == nil {
		return EnvConfig{}, nil
	}
	c := EnvConfig{Action: PolicyAction(p), Variant: PolicyVariant(p)}
	var err error
	if c.CapacityWindow, c.MinRTTWindow, err = PolicyFilterWindows(p); err != nil {
		return c, err
	}
	if c.BDPSpan, err = PolicyBDPSpan(p); err != nil {
		return c, err
	}
	if c.RTTFeature, err = PolicyRTTFeature(p); err != nil {
		return c, err
	}
	c.WindowCap, err = PolicyWindowCap(p)
	return c, err
}

// linkDelay is the bottleneck's one-way delay at t seconds.
func linkDelay(s *scenario.Scenario, t float64) time.Duration {
	d := s.Bottleneck.Delay.V
	for _, c := range s.Bottleneck.Schedule {
		if c.At.V.Seconds() <= t && c.Delay.IsSet() {
			d = c.Delay.V
		}
	}
	return d
}
