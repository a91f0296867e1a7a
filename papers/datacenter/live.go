package datacenter

import (
	"fmt"
	"strings"
	"time"

	"github.com/cclab/cclab/cc/bbr"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

// LiveObserver builds the data-centre agent's observation of one live BBR
// flow (transport/udp on the real clock) with the simulator's code
// (flowMeter, aggregate, fillFrame): the flow is the agent's only flow,
// so its own aggregate is also the team's. What a host cannot see is
// taken as a host sees it: the in-order payload delivered is what the
// receiver has acknowledged (the simulator reads its receiver), the
// payload the link could carry is the link's nominal rate over the
// interval's real duration (the simulator integrates its bottleneck's
// rate), the link goodput counts this flow only and no background flow is
// visible. With one flow, no background and a constant rate both sides
// see the same values (TestLiveObservationMatchesSim).
type LiveObserver struct {
	history  int
	reward   RewardConfig
	lineRate units.Bandwidth

	snd       *tcp.Sender
	bbr       *bbr.BBR
	delivered func() units.Bytes // in-order payload delivered so far
	mss       units.Bytes
	wireRatio float64

	meter   flowMeter
	params  Params
	capBits float64
	lastCap units.Bytes
	last    clock.Time
	st      []flowStats
	obs     []float32
	frame   []float32
	first   bool

	// Measured counts the intervals after the first (the warm-up, which
	// the simulator's episode statistics also leave out); UtilSum,
	// DelaySum and RewardSum sum their reward terms (EpisodeStats'
	// sums: an interval without an RTT sample has a delay term of 0).
	Measured                     int
	UtilSum, DelaySum, RewardSum float64
}

// LiveStep is one interval's measurement on a live flow: the reward's
// terms as the simulator computes them for the agent.
type LiveStep struct {
	// Util is the throughput term (the flow's goodput over what the link
	// could carry), DelayTerm the delay term (0 without an RTT sample),
	// Reward the agent's reward.
	Util, DelayTerm, Reward float64
	// GoodputBytes is the payload delivered in the interval.
	GoodputBytes units.Bytes
	// HasRTT reports an RTT sample in the interval (DelayTerm is valid).
	HasRTT bool
}

// NewLiveObserver returns an observer stacking history frames, with the
// reward weights r, for a flow on a link of nominal rate lineRate whose
// BBR windows start at initial.
func NewLiveObserver(history int, r RewardConfig, lineRate units.Bandwidth, initial Params) (*LiveObserver, error) {
	r.defaults()
	if err := r.validate(); err != nil {
		return nil, err
	}
	if history < 1 || history > 16 {
		return nil, fmt.Errorf("datacenter: history %d, want 1 to 16", history)
	}
	if !(lineRate > 0) {
		return nil, fmt.Errorf("datacenter: the link's nominal rate must be positive (the observation's rates are fractions of it), got %v", lineRate)
	}
	if err := checkParams(initial); err != nil {
		return nil, err
	}
	return &LiveObserver{
		history: history, reward: r, lineRate: lineRate, params: initial,
		st:    make([]flowStats, 1),
		obs:   make([]float32, NumFeatures*history),
		frame: make([]float32, NumFeatures),
		first: true,
	}, nil
}

// checkParams checks p against BBR's ranges.
func checkParams(p Params) error {
	if _, err := bbr.Spec.Resolve(p.ParamMap()); err != nil {
		return fmt.Errorf("datacenter: BBR windows %v: %w", p, err)
	}
	return nil
}

// Start begins the first interval at now on sender t, whose controller
// must be b.
func (o *LiveObserver) Start(now clock.Time, t *tcp.Sender, b *bbr.BBR) {
	o.snd, o.bbr = t, b
	cfg := t.Config()
	o.mss = cfg.MSS
	o.wireRatio = float64(cfg.MSS) / float64(cfg.MSS+cfg.Header)
	if o.delivered == nil {
		o.delivered = func() units.Bytes { return t.Stats().BytesAcked }
	}
	o.meter.baseline(o.delivered(), t.Stats())
	o.last = now
}

// OnRTT records an RTT sample (hook it to the sender's OnRTT).
func (o *LiveObserver) OnRTT(rtt time.Duration) { o.meter.onRTT(rtt) }

// Params returns the windows the observation reports as the agent's.
func (o *LiveObserver) Params() Params { return o.params }

// SetParams records windows applied to the flow (the next frame reports
// them, as Sim.Apply's do).
func (o *LiveObserver) SetParams(p Params) { o.params = p }

// Observe closes the interval ending at now and returns the stacked
// observation (owned by o, valid until the next call) and the interval's
// reward terms. The first call fills the whole history with its frame, as
// Sim.Reset does after its warm-up interval.
func (o *LiveObserver) Observe(now clock.Time) ([]float32, LiveStep) {
	o.capBits += float64(o.lineRate) * now.Sub(o.last).Seconds()
	o.last = now
	capBytes := units.Bytes(o.capBits / 8)
	payloadCap := float64(capBytes-o.lastCap) * o.wireRatio
	o.lastCap = capBytes
	t := o.snd
	o.st[0] = o.meter.measure(now, flowSample{
		active: true, good: o.delivered(), sender: t.Stats(), inflight: t.InFlight(), snap: o.bbr.Snapshot(),
	}, o.mss, o.reward.Tau)
	a := aggregate(o.st, 0, 1)
	util := utilization(a.goodput, payloadCap)
	step := LiveStep{Util: util, DelayTerm: a.delayTerm, Reward: partialReward(o.reward, util, a, a.delayTerm),
		GoodputBytes: a.goodput, HasRTT: a.withRTT > 0}
	fillFrame(o.frame, a, a, o.params, linkSample{payloadCap: payloadCap, util: util, lineRate: o.lineRate})
	pushFrame(o.obs, o.frame)
	if o.first {
		fillHistory(o.obs)
		o.first = false
	} else {
		o.Measured++
		o.UtilSum += step.Util
		o.DelaySum += step.DelayTerm
		o.RewardSum += step.Reward
	}
	return o.obs, step
}

// Summary returns the windows in force and the mean reward terms over
// the measured intervals, by name (dc_*), for a live result.
func (o *LiveObserver) Summary() map[string]float64 {
	m := map[string]float64{"dc_min_rtt_window": o.params.MinRTTWindow, "dc_bw_window_rounds": float64(o.params.BwWindowRounds)}
	if o.Measured > 0 {
		n := float64(o.Measured)
		m["dc_intervals"] = n
		m["dc_util_mean"], m["dc_delay_term_mean"], m["dc_reward_mean"] = o.UtilSum/n, o.DelaySum/n, o.RewardSum/n
	}
	return m
}

// LiveSettings are the settings a live tuner takes from its policy (those
// Train records): action space, history, interval and reward weights.
func LiveSettings(p *policy.Policy) (Config, error) {
	if !strings.HasPrefix(p.Meta.Env, "dcrl-") {
		return Config{}, fmt.Errorf("datacenter: not a data-centre policy: trained on %q (cclab dc train writes dcrl-SCENARIO)", p.Meta.Env)
	}
	cfg, err := LiveSettingsFrom(p.Meta.Extra)
	if err != nil {
		return cfg, err
	}
	if err := p.Check(observationSpace(NumFeatures*cfg.History), cfg.Action.Space()); err != nil {
		return cfg, fmt.Errorf("datacenter: not a data-centre policy: %w", err)
	}
	return cfg, nil
}

// LiveSettingsFrom reads a policy's recorded settings (Meta.Extra) with
// the defaults filled in, for a host whose policy runs elsewhere.
func LiveSettingsFrom(x map[string]string) (Config, error) {
	cfg, err := ConfigFromSettings(Config{}, x)
	if err != nil {
		return cfg, err
	}
	cfg.defaults()
	if err := cfg.Reward.validate(); err != nil {
		return cfg, err
	}
	if cfg.History < 1 || cfg.History > 16 || cfg.Interval < time.Millisecond {
		return cfg, fmt.Errorf("datacenter: policy settings: history %d (want 1 to 16), interval %v (want at least 1ms)", cfg.History, cfg.Interval)
	}
	return cfg, nil
}

// ParamMap returns p as controller parameters (cc.Tunable names).
func (p Params) ParamMap() map[string]float64 {
	return map[string]float64{"min_rtt_window": p.MinRTTWindow, "bw_window_rounds": float64(p.BwWindowRounds)}
}

// LiveTuner runs a data-centre policy in process on a live BBR flow: every
// interval of the policy (T2, 100 ms for the shipped ones) on the real
// clock it observes the flow (LiveObserver), runs the policy and sets
// BBR's two windows, as an evaluation episode does in the simulator
// (RunEpisode: observe, act, run one interval).
type LiveTuner struct {
	p        *policy.Policy
	cfg      Config
	o        *LiveObserver
	initial  Params
	interval time.Duration

	// Steps counts the intervals observed, one decision of the policy
	// each (none for a static tuner); Changes the decisions that changed
	// the windows.
	Steps, Changes int
	// Err is the error that stopped the tuner, if any (the flow goes on
	// with the last windows).
	Err error
}

// NewLiveTuner checks p (a policy trained by `cclab dc train`) and returns
// a tuner for a flow on a link of nominal rate lineRate whose BBR windows
// start at initial.
func NewLiveTuner(p *policy.Policy, lineRate units.Bandwidth, initial Params) (*LiveTuner, error) {
	cfg, err := LiveSettings(p)
	if err != nil {
		return nil, err
	}
	o, err := NewLiveObserver(cfg.History, cfg.Reward, lineRate, initial)
	if err != nil {
		return nil, err
	}
	return &LiveTuner{p: p.Clone(), cfg: cfg, o: o, initial: initial, interval: cfg.Interval}, nil
}

// NewStaticTuner returns a tuner that keeps the windows at initial and
// only measures the reward's terms every DefaultInterval, with the
// default reward weights: the static baseline of a live comparison.
func NewStaticTuner(lineRate units.Bandwidth, initial Params) (*LiveTuner, error) {
	cfg := Config{}
	cfg.defaults()
	o, err := NewLiveObserver(cfg.History, cfg.Reward, lineRate, initial)
	if err != nil {
		return nil, err
	}
	return &LiveTuner{cfg: cfg, o: o, initial: initial, interval: cfg.Interval}, nil
}

// Attach hooks the observer into s before it runs: it sees every RTT
// sample and starts metering when the flow starts. s's controller must be
// BBR, whose windows the observer's owner sets; Attach returns it.
func (o *LiveObserver) Attach(s *udp.Sender) (*bbr.BBR, error) {
	t := s.Transport()
	b, ok := t.CC().(*bbr.BBR)
	if !ok {
		return nil, fmt.Errorf("datacenter: a dc-bbr tuner sets BBR's windows; the flow runs %T", t.CC())
	}
	prev := t.OnRTT
	t.OnRTT = func(now clock.Time, rtt time.Duration) {
		if prev != nil {
			prev(now, rtt)
		}
		o.OnRTT(rtt)
	}
	s.Post(func(now clock.Time) { o.Start(now, t, b) })
	return b, nil
}

// Interval returns the tuner's step T2.
func (l *LiveTuner) Interval() time.Duration { return l.interval }

// Params returns the windows in force.
func (l *LiveTuner) Params() Params { return l.o.Params() }

// Initial returns the windows the flow started with.
func (l *LiveTuner) Initial() Params { return l.initial }

// Attach hooks the tuner into s before it runs; s's controller must be
// BBR.
func (l *LiveTuner) Attach(s *udp.Sender) error {
	b, err := l.o.Attach(s)
	if err != nil {
		return err
	}
	if err := applyParams(b, l.initial); err != nil {
		return err
	}
	s.Every(l.interval, func(now clock.Time, _ *tcp.Sender) { l.step(now) })
	return nil
}

// step observes the interval that ended at now and applies the policy's
// windows for the next one.
func (l *LiveTuner) step(now clock.Time) {
	if l.Err != nil {
		return
	}
	obs, _ := l.o.Observe(now)
	l.Steps++
	if l.p == nil {
		return // static
	}
	p := l.cfg.Action.Decode(l.p.ActInto(obs))
	if p == l.o.Params() {
		return
	}
	if err := applyParams(l.o.bbr, p); err != nil {
		l.Err = err
		return
	}
	l.o.SetParams(p)
	l.Changes++
}

// Summary returns the tuner's counters by name, for a live result.
func (l *LiveTuner) Summary() map[string]float64 {
	m := l.o.Summary()
	m["dc_steps"], m["dc_changes"] = float64(l.Steps), float64(l.Changes)
	if l.Err != nil {
		m["dc_stopped"] = 1
	}
	return m
}
