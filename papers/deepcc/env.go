package deepcc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
)

// Control constants (our choices where the paper is silent; docs/deepcc.md
// discusses them).
const (
	// GainExponent maps the action a in [-1, 1] to the window gain
	// 2^(GainExponent·a) over the estimated BDP: from a quarter to four
	// times the BDP.
	GainExponent = 2.0
	// PacingGain paces the window over 1/PacingGain of the minimum RTT, so
	// a window increase enters the network smoothly rather than as a
	// line-rate burst.
	PacingGain = 1.25
	// BwWindow is the bottleneck-bandwidth max filter's length, steps
	// (BBR's 10 round trips).
	BwWindow = 10
	// MinStep and MaxStep bound the decision interval, which is one
	// minimum RTT (see Env).
	MinStep = 10 * time.Millisecond
	MaxStep = 200 * time.Millisecond
	// HandshakeTimeout bounds the wait for the connection's first RTT
	// sample at the start of an episode.
	HandshakeTimeout = 5 * time.Second
)

// Window bounds, in segments and bytes.
const (
	minWindowSegs = 2
	minBDPSegs    = 4
	// MaxWindow caps the window (16 MB, beyond any BDP of the links here).
	MaxWindow units.Bytes = 16_000_000
)

// EnvConfig configures an environment. Zero values take the defaults in
// brackets.
type EnvConfig struct {
	// Sampler draws each training episode's link; Reset needs it, Start
	// does not.
	Sampler *Sampler
	// Goal, if set, fixes every episode's goal; otherwise Reset draws one
	// uniformly from the simplex.
	Goal *Goal
	// Length is an episode's simulated duration, after which it is
	// truncated [the sampler's Length, or 20 s].
	Length time.Duration
	// DecisionRTTs is the decision interval in minimum RTTs [1]; the
	// paper's Figure 9 studies it and settles on 0.5. The interval stays
	// within [MinStep, MaxStep] scaled by DecisionRTTs when it is below
	// or above 1.
	DecisionRTTs float64
}

// StepInfo is the raw measurement of the latest step, for evaluation and
// the online tuner.
type StepInfo struct {
	// Interval is the step's simulated duration.
	Interval time.Duration
	// Delivered is the payload delivered (acknowledged or SACKed), bytes.
	Delivered units.Bytes
	// SegmentsSent and SegmentsLost count the step's segments sent and
	// newly marked lost.
	SegmentsSent, SegmentsLost int64
	// QDelay is the mean queueing delay (RTT minus minimum RTT) of the
	// step's RTT samples, or the previous step's when it had none.
	QDelay time.Duration
	// Gain and Window are the window gain applied and the resulting
	// window.
	Gain   float64
	Window units.Bytes
	// Measurement is the normalised m_t of the reward, Reward g_t · m_t.
	Measurement Measurement
	Reward      float64
}

// Env is the DeepCC environment: one bulk flow over one bottleneck, driven
// every decision interval by the agent through an external controller.
//
// Decision interval: one minimum RTT (bounded to [MinStep, MaxStep]). The
// paper acts "when receiving an ACK" and settles on half a minimum RTT; one
// RTT lets each step observe the effect of the previous action and halves
// the number of learner updates per simulated second (docs/deepcc.md).
//
// Action: a in [-1, 1] sets the congestion window to 2^(2a) times the
// estimated bandwidth-delay product (windowed-max delivery rate x minimum
// RTT), and the pacing rate to PacingGain x window / minimum RTT. The
// paper's action is "the sending rate"; a window relative to the BDP
// estimate keeps the flow ACK-clocked and makes an action mean the same on
// a 2 and a 40 Mbit/s link. Delivery samples that only reflect the agent's
// own choice to stay under the BDP do not lower the estimate (selfLimited),
// so operating points below full utilisation are stable.
//
// Observation: History steps of NumFeatures features (oldest first), the
// measurement vector m_t as the agent can observe it (delivery rate over
// the bandwidth estimate, -delay, -loss) and the goal g_t.
//
// Reward: g_t · m_t with m_t's throughput measured against the link's true
// reference capacity (Link.Capacity), which the simulator knows.
type Env struct {
	cfg  EnvConfig
	net  *network.Network
	flow *network.Flow
	ext  cc.WindowSetter
	pace cc.PacingSetter
	mss  units.Bytes
	link Link
	goal Goal
	end  clock.Time

	bw            *maxFilter
	bwEst, prevBw float64 // bits/s
	prevDelivery  float64 // bits/s
	prevAction    float64
	capPayloadBps float64 // reference capacity in payload bits/s
	recording     bool
	delays        []time.Duration
	stepCounters

	hist  []float32 // History x NumFeatures, oldest first
	obs   []float32
	last  StepInfo
	info  env.Info
	steps int
}

var _ env.Env = (*Env)(nil)

// NewEnv returns an environment. A sampler, if given, is validated (and
// its traces loaded) here so that Reset cannot fail later.
func NewEnv(cfg EnvConfig) (*Env, error) {
	if cfg.Sampler != nil {
		if err := cfg.Sampler.Validate(); err != nil {
			return nil, err
		}
		if cfg.Length == 0 {
			cfg.Length = cfg.Sampler.Length
		}
	}
	if cfg.Length == 0 {
		cfg.Length = 20 * time.Second
	}
	if cfg.Length <= 0 {
		return nil, fmt.Errorf("deepcc: episode length %v must be positive", cfg.Length)
	}
	if cfg.DecisionRTTs == 0 {
		cfg.DecisionRTTs = 1
	}
	if !(cfg.DecisionRTTs >= 0.05 && cfg.DecisionRTTs <= 20) {
		return nil, fmt.Errorf("deepcc: decision interval %g minimum RTTs must be in [0.05, 20]", cfg.DecisionRTTs)
	}
	if cfg.Goal != nil {
		if err := cfg.Goal.Validate(); err != nil {
			return nil, err
		}
	}
	return &Env{
		cfg:  cfg,
		bw:   newMaxFilter(BwWindow),
		hist: make([]float32, History*NumFeatures),
		obs:  make([]float32, ObservationSize),
		info: env.Info{},
	}, nil
}

// PolicySpaces returns the observation and action spaces of a DeepCC
// policy.
func PolicySpaces() (obs, act space.Space) {
	return space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), ObservationSize), space.Uniform(-1, 1, 1)
}

// ObservationSpace implements env.Env.
func (e *Env) ObservationSpace() space.Space { o, _ := PolicySpaces(); return o }

// ActionSpace implements env.Env: one value in [-1, 1], the log4 window
// gain over the estimated BDP.
func (e *Env) ActionSpace() space.Space { _, a := PolicySpaces(); return a }

// Reset implements env.Env: a new training episode whose link, goal and
// simulation randomness all derive from seed. It panics without a sampler
// (use Start) or if a validated trace can no longer be read.
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	if e.cfg.Sampler == nil {
		panic("deepcc: Reset needs EnvConfig.Sampler; use Start for a given link")
	}
	r := rand.New(rand.NewPCG(seed, 0x64656570636363)) // "deepccc"
	link := e.cfg.Sampler.Draw(r)
	goal := SampleGoal(r)
	if e.cfg.Goal != nil {
		goal = *e.cfg.Goal
	}
	if err := e.Start(link, goal, seed, e.cfg.Length); err != nil {
		panic(fmt.Sprintf("deepcc: starting a sampled episode: %v", err))
	}
	clear(e.info)
	return e.obs, e.info
}

// Start begins an episode on link with goal, simulation seed seed, lasting
// length, and returns the first observation (valid until the next call).
func (e *Env) Start(link Link, goal Goal, seed uint64, length time.Duration) error {
	if err := goal.Validate(); err != nil {
		return err
	}
	if length <= 0 {
		return fmt.Errorf("deepcc: episode length %v must be positive", length)
	}
	s, err := link.Scenario(seed, length+time.Second, scenario.CC{Name: "external", Params: map[string]float64{
		"iw": 10, "max_window": float64(MaxWindow),
	}})
	if err != nil {
		return err
	}
	n, err := network.Build(s)
	if err != nil {
		return fmt.Errorf("deepcc: link %s: %w", link.Name, err)
	}
	e.attach(n, n.Flows[0], link, goal, clock.Time(length))
	// Wait for the handshake's RTT sample: the first decision needs a
	// minimum RTT.
	for e.flow.Sender.RTT().Samples() == 0 && n.Now() < clock.Time(HandshakeTimeout) && n.Sched.Step() {
	}
	e.begin()
	return nil
}

// attach binds the environment to flow of network n (whose controller must
// be external) on link, with goal, until end. It does not run the
// simulation; begin starts the agent's first interval.
func (e *Env) attach(n *network.Network, flow *network.Flow, link Link, goal Goal, end clock.Time) {
	e.net, e.flow, e.link, e.goal = n, flow, link, goal
	e.end = end
	e.ext = e.flow.Sender.CC().(cc.WindowSetter)
	e.pace = e.flow.Sender.CC().(cc.PacingSetter)
	cfg := e.flow.Sender.Config()
	e.mss = cfg.MSS
	e.capPayloadBps = float64(link.Capacity) * float64(cfg.MSS) / float64(cfg.MSS+cfg.Header)
	prev := e.flow.Sender.OnRTT
	e.flow.Sender.OnRTT = func(now clock.Time, rtt time.Duration) {
		if prev != nil {
			prev(now, rtt)
		}
		e.addRTT(rtt)
		if e.recording {
			e.delays = append(e.delays, rtt-e.flow.Sender.RTT().Min())
		}
	}
}

// begin resets the agent's state and writes the first observation, at the
// network's current time (after the handshake).
func (e *Env) begin() {
	e.bw.reset()
	e.rttSum, e.rttN, e.rttLatest, e.lastQ = 0, 0, 0, 0
	e.delays = e.delays[:0]
	e.prevAction, e.steps = 0, 0
	st := e.flow.Sender.State()
	e.baseline(e.net.Now(), st)
	// Before any delivery sample the bandwidth estimate is the initial
	// window per minimum RTT.
	e.bwEst = float64(st.Cwnd) * 8 / e.minRTT().Seconds()
	e.prevBw, e.prevDelivery = e.bwEst, 0
	e.last = StepInfo{}
	clear(e.hist)
	raw := stepRaw{minRTT: e.minRTT(), cwnd: st.Cwnd, inflight: st.InFlight}
	e.writeObs(raw, featureInput{bw: e.bwEst, prevBw: e.bwEst, bdp: e.bdp()}, Measurement{})
}

// minRTT is the connection's minimum RTT, or twice the propagation delay
// before the first sample (an outage longer than HandshakeTimeout).
func (e *Env) minRTT() time.Duration {
	if m := e.flow.Sender.RTT().Min(); m > 0 {
		return m
	}
	return max(2*e.link.Delay, time.Millisecond)
}

// bdp is the estimated bandwidth-delay product, at least minBDPSegs.
func (e *Env) bdp() units.Bytes {
	b := units.Bytes(e.bwEst / 8 * e.minRTT().Seconds())
	return max(b, minBDPSegs*e.mss)
}

// Step implements env.Env: set the window from the action, simulate one
// decision interval, measure.
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	if e.net == nil {
		panic("deepcc: Step before Reset or Start")
	}
	a, gain, w, dt := e.act(action)
	stepEnd := e.net.Now().Add(dt)
	if stepEnd > e.end {
		stepEnd = e.end
	}
	e.net.Sched.RunUntil(stepEnd)
	terminated := e.net.Sched.Stopped()
	truncated := e.net.Now() >= e.end
	r := e.observe(a, gain, w)
	return e.obs, r, terminated, truncated, e.info
}

// interval is the decision interval at minimum RTT minRTT.
func (e *Env) interval(minRTT time.Duration) time.Duration {
	k := e.cfg.DecisionRTTs
	lo, hi := MinStep, MaxStep
	if k < 1 {
		lo = time.Duration(float64(lo) * k)
	} else {
		hi = time.Duration(float64(hi) * k)
	}
	return min(max(time.Duration(k*float64(minRTT)), lo), hi)
}

// act applies action (the window gain) at the network's current time and
// returns the clamped action, the gain, the window and the decision
// interval to run before observe.
func (e *Env) act(action []float32) (a, gain float64, w units.Bytes, dt time.Duration) {
	a = float64(action[0])
	if math.IsNaN(a) {
		a = 0
	}
	a = clamp(a, -1, 1)
	now := e.net.Now()
	minRTT := e.minRTT()
	gain = math.Exp2(GainExponent * a)
	w = units.Bytes(gain * float64(e.bdp()))
	w = min(max(w, minWindowSegs*e.mss), MaxWindow)
	e.ext.SetCongestionWindow(now, w)
	e.pace.SetPacingRate(now, units.Bandwidth(PacingGain*float64(w)*8/minRTT.Seconds()))
	return a, gain, w, e.interval(minRTT)
}

// observe measures the interval since the previous observation (after act
// and the simulation of the interval), updates the observation and returns
// the reward.
func (e *Env) observe(a, gain float64, w units.Bytes) float64 {
	raw := e.collect()
	delivery, sending := raw.rates()
	if !selfLimited(gain, delivery, e.bwEst, raw) {
		e.bw.add(delivery)
	}
	e.prevBw = e.bwEst
	e.bwEst = math.Max(e.bw.max(), 1)
	lossRate := raw.lossRate()
	util := 0.0
	if e.capPayloadBps > 0 && raw.dt > 0 {
		util = delivery / e.capPayloadBps
	}
	m := Measure(util, e.lastQ, lossRate)
	r := Reward(e.goal, m)
	in := featureInput{bw: e.bwEst, prevBw: e.prevBw, prevDelivery: e.prevDelivery, qdelay: e.lastQ,
		prevAction: a, bdp: e.bdp(), delivery: delivery, sending: sending}
	// The agent observes utilisation against its own bandwidth estimate.
	mObs := Measure(delivery/e.bwEst, e.lastQ, lossRate)
	e.writeObs(raw, in, mObs)
	e.prevDelivery, e.prevAction = delivery, a
	e.steps++
	e.last = StepInfo{Interval: raw.dt, Delivered: raw.delivered, SegmentsSent: raw.segsSent, SegmentsLost: raw.segsLost,
		QDelay: e.lastQ, Gain: gain, Window: w, Measurement: m, Reward: r}
	e.info["throughput_mbps"] = delivery / 1e6
	e.info["qdelay_ms"] = float64(e.lastQ) / 1e6
	e.info["loss"] = lossRate
	e.info["gain"] = gain
	return r
}

// SelfLimitedRTT is the RTT ratio below which a step that held the window
// under the BDP estimate is taken to have seen no queue.
const SelfLimitedRTT = 1.1

// selfLimited reports whether a delivery-rate sample only reflects the
// agent's own choice to send less than the estimated bandwidth (a gain
// below 1 and no queue: RTT within SelfLimitedRTT of the minimum), in which
// case it says nothing about the link and must not lower the estimate. This
// is BBR's rule for application-limited samples (Cardwell et al. 2016:
// such samples update the filter only if they exceed it) applied to the
// agent's voluntary limit; without it a gain below 1 would shrink the
// estimate every step and any operating point under full utilisation would
// collapse to the minimum window. A queue (RTT above the bound) means the
// link, not the agent, limits delivery, so those samples count.
func selfLimited(gain, delivery, bwEst float64, raw stepRaw) bool {
	if gain >= 1 || delivery >= bwEst || raw.rttMean == 0 {
		return false
	}
	return float64(raw.rttMean) < SelfLimitedRTT*float64(raw.minRTT)
}

// collect reads the transport's counters for the step that just ended and
// updates the queueing-delay estimate.
func (e *Env) collect() stepRaw {
	return e.step(e.net.Now(), e.flow.Sender.State(), e.minRTT())
}

// writeObs shifts the history and writes the newest features, the
// measurement and the goal into the observation.
func (e *Env) writeObs(raw stepRaw, in featureInput, m Measurement) {
	copy(e.hist, e.hist[NumFeatures:])
	features(raw, in, e.hist[(History-1)*NumFeatures:])
	copy(e.obs, e.hist)
	for i := range 3 {
		e.obs[measurementOffset+i] = float32(m[i])
	}
	e.writeGoal()
}

func (e *Env) writeGoal() {
	for i := range 3 {
		e.obs[goalOffset+i] = float32(e.goal[i])
	}
}

// SetGoal changes the goal from the next step on (the online tuner's knob)
// and updates the goal part of the current observation.
func (e *Env) SetGoal(g Goal) error {
	if err := g.Validate(); err != nil {
		return err
	}
	e.goal = g
	e.writeGoal()
	return nil
}

// Goal returns the current goal.
func (e *Env) Goal() Goal { return e.goal }

// Observation returns the current observation (the environment's buffer).
func (e *Env) Observation() []float32 { return e.obs }

// Last returns the latest step's raw measurement.
func (e *Env) Last() StepInfo { return e.last }

// RecordDelays turns on recording of every RTT sample's queueing delay, to
// be collected with TakeDelays (the tuner's per-interval percentile).
func (e *Env) RecordDelays(on bool) { e.recording = on }

// TakeDelays appends the queueing delays recorded since the previous call
// to dst[:0], forgets them and returns the result.
func (e *Env) TakeDelays(dst []time.Duration) []time.Duration {
	dst = append(dst[:0], e.delays...)
	e.delays = e.delays[:0]
	return dst
}

// Done reports whether the episode reached its end.
func (e *Env) Done() bool { return e.net == nil || e.net.Now() >= e.end }

// Network returns the current episode's network.
func (e *Env) Network() *network.Network { return e.net }

// Link returns the current episode's link.
func (e *Env) Link() Link { return e.link }

// Steps returns the steps taken in the current episode.
func (e *Env) Steps() int { return e.steps }
