// Package scenarioenv turns any scenario into a learning environment
// (env.Env): the agent drives one flow of the scenario, every other flow and
// the background run as the file says. The action sets the flow's window,
// its pacing rate or one parameter of its own controller once per step; the
// observation is a chosen list of per-step features and the reward one of a
// few documented functions (docs/python.md lists both).
package scenarioenv

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cclab/cclab/cc"
	_ "github.com/cclab/cclab/cc/all" // every controller a scenario may name
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/netsim/queue"
)

// Action kinds.
const (
	// ActionWindow multiplies the window by 2^a for a in [-1, 1] (the flow
	// runs the external controller).
	ActionWindow = "window"
	// ActionPacing multiplies the pacing rate by 2^a for a in [-1, 1]; the
	// window is held at MaxWindow so pacing alone limits the flow.
	ActionPacing = "pacing"
	// ActionParamPrefix followed by a parameter name ("param:beta") maps
	// a in [-1, 1] linearly (logarithmically when the range spans more
	// than a factor 100 and is positive) onto the parameter's range and
	// sets it on the flow's own controller, which must be tunable.
	ActionParamPrefix = "param:"
	// ActionMarkThreshold sets the bottleneck's ECN marking threshold
	// (a DropTail's step marking, RFC 8257 §3.1) each step, mapping a in
	// [-1, 1] logarithmically onto one packet (or 1500 bytes) .. the
	// queue's limit, as ACC's agents tune their switches' thresholds;
	// the flow keeps its own controller and must be ECN-capable.
	ActionMarkThreshold = "mark_threshold"
)

// Features are the observation features, one float each per step.
var Features = []string{
	"throughput",      // acknowledged payload rate in the step, Mbit/s
	"send_rate",       // payload sent in the step (retransmissions included), Mbit/s
	"cwnd",            // congestion window at the end of the step, KB
	"inflight",        // bytes in flight at the end of the step, KB
	"pacing_rate",     // pacing rate, Mbit/s (0 = unpaced)
	"srtt",            // smoothed RTT, ms
	"min_rtt",         // minimum RTT seen by the flow, ms
	"latest_rtt",      // latest RTT sample, ms
	"rtt_var",         // RTT variation, ms
	"queue_delay",     // srtt - min_rtt, ms
	"retransmissions", // segments retransmitted in the step
	"loss_rate",       // retransmitted / sent segments in the step
	"capacity",        // bottleneck capacity in the step, Mbit/s
	"ece_fraction",    // delivered bytes acknowledged with ECE / delivered bytes in the step (DCTCP's F; ECN flows)
	"ecn_reductions",  // window reductions for ECN echoes in the step (ECN flows)
}

// DefaultFeatures are the features used when none are chosen.
var DefaultFeatures = []string{"throughput", "srtt", "min_rtt", "cwnd", "retransmissions", "loss_rate"}

// Rewards are the reward functions.
var Rewards = []string{
	"utilization",       // acknowledged payload / bottleneck capacity in the step
	"utilization-delay", // utilization - DelayWeight x queue_delay / min_rtt - LossWeight x loss_rate
	"power",             // log(throughput Mbit/s + 0.01) - log(srtt ms)
}

// Config configures an environment. Zero values take the defaults in
// brackets.
type Config struct {
	// Scenario is the network. Required.
	Scenario *scenario.Scenario
	// Flow names the scenario flow the agent drives (its first replica)
	// [the first flow].
	Flow string
	// Action is ActionWindow, ActionPacing or ActionParamPrefix+name
	// [ActionWindow].
	Action string
	// Step is the time between actions [100ms].
	Step time.Duration
	// EpisodeSteps truncates episodes [200].
	EpisodeSteps int
	// Features are the observation's features [DefaultFeatures].
	Features []string
	// Reward is one of Rewards ["utilization-delay"].
	Reward string
	// DelayWeight and LossWeight weigh utilization-delay's penalties
	// [0.5, 1].
	DelayWeight, LossWeight float64
	// InitialRate is the pacing action's first rate [1 Mbit/s].
	InitialRate units.Bandwidth
	// MaxWindow caps the window and action [16 MB].
	MaxWindow units.Bytes
}

// Env is the environment.
type Env struct {
	cfg      Config
	feat     []int
	reward   int
	flowIdx  int // index into the scenario's flows
	param    cc.ParamSpec
	paramLog bool
	obs      []float32
	info     env.Info

	net      *network.Network
	flow     *network.Flow
	steps    int
	rate     units.Bandwidth
	lastT    clock.Time
	lastAck  units.Bytes
	lastSent units.Bytes
	lastRetx int64
	lastSegs int64
	lastCap  units.Bytes
	// lastDeliv and lastECE are the delivered bytes and those acknowledged
	// with ECE, lastRed the ECN reductions, at the previous step.
	lastDeliv        units.Bytes
	lastECE, lastRed int64
}

var _ env.Env = (*Env)(nil)

// New checks cfg and returns an environment.
func New(cfg Config) (*Env, error) {
	if cfg.Scenario == nil {
		return nil, fmt.Errorf("scenarioenv: no scenario")
	}
	if len(cfg.Scenario.Flows) == 0 {
		return nil, fmt.Errorf("scenarioenv: scenario %s has no flow for the agent", cfg.Scenario.Name)
	}
	if cfg.Action == "" {
		cfg.Action = ActionWindow
	}
	if cfg.Step == 0 {
		cfg.Step = 100 * time.Millisecond
	}
	if cfg.EpisodeSteps == 0 {
		cfg.EpisodeSteps = 200
	}
	if len(cfg.Features) == 0 {
		cfg.Features = DefaultFeatures
	}
	if cfg.Reward == "" {
		cfg.Reward = "utilization-delay"
	}
	if cfg.DelayWeight == 0 {
		cfg.DelayWeight = 0.5
	}
	if cfg.LossWeight == 0 {
		cfg.LossWeight = 1
	}
	if cfg.InitialRate == 0 {
		cfg.InitialRate = units.Mbps
	}
	if cfg.MaxWindow == 0 {
		cfg.MaxWindow = 16_000_000
	}
	e := &Env{cfg: cfg, info: env.Info{}}
	switch {
	case cfg.Step < time.Millisecond || cfg.Step > time.Minute:
		return nil, fmt.Errorf("scenarioenv: step %v must be in [1ms, 1m]", cfg.Step)
	case cfg.EpisodeSteps < 1 || cfg.EpisodeSteps > 1_000_000:
		return nil, fmt.Errorf("scenarioenv: episode steps %d must be in [1, 1000000]", cfg.EpisodeSteps)
	case !(cfg.DelayWeight >= 0) || !(cfg.LossWeight >= 0):
		return nil, fmt.Errorf("scenarioenv: reward weights must be non-negative")
	case cfg.InitialRate < 0 || cfg.MaxWindow < 2000:
		return nil, fmt.Errorf("scenarioenv: initial rate must be positive and max window at least 2000 bytes")
	}
	e.flowIdx = -1
	for i, f := range cfg.Scenario.Flows {
		if cfg.Flow == "" || f.Name == cfg.Flow {
			e.flowIdx = i
			break
		}
	}
	if e.flowIdx < 0 {
		names := make([]string, len(cfg.Scenario.Flows))
		for i, f := range cfg.Scenario.Flows {
			names[i] = f.Name
		}
		return nil, fmt.Errorf("scenarioenv: scenario %s has no flow %q (flows: %s)", cfg.Scenario.Name, cfg.Flow, strings.Join(names, ", "))
	}
	for _, name := range cfg.Features {
		i := slices.Index(Features, name)
		if i < 0 {
			return nil, fmt.Errorf("scenarioenv: unknown feature %q (features: %s)", name, strings.Join(Features, ", "))
		}
		e.feat = append(e.feat, i)
	}
	e.reward = slices.Index(Rewards, cfg.Reward)
	if e.reward < 0 {
		return nil, fmt.Errorf("scenarioenv: unknown reward %q (rewards: %s)", cfg.Reward, strings.Join(Rewards, ", "))
	}
	switch {
	case cfg.Action == ActionWindow || cfg.Action == ActionPacing:
	case cfg.Action == ActionMarkThreshold:
		f := &cfg.Scenario.Flows[e.flowIdx]
		if !cfg.Scenario.FlowECN(f) && !cc.NeedsECN(f.CC.Name) {
			return nil, fmt.Errorf("scenarioenv: action %s: flow %s is not ECN-capable, so no threshold would change it: give it transport: {ecn: true} or a controller that needs ECN (dctcp)", ActionMarkThreshold, f.Name)
		}
	case strings.HasPrefix(cfg.Action, ActionParamPrefix):
		name := strings.TrimPrefix(cfg.Action, ActionParamPrefix)
		ccName := cfg.Scenario.Flows[e.flowIdx].CC.Name
		spec, err := cc.Lookup(ccName)
		if err != nil {
			return nil, fmt.Errorf("scenarioenv: flow %s: %w", cfg.Scenario.Flows[e.flowIdx].Name, err)
		}
		p, ok := spec.Param(name)
		if !ok {
			return nil, fmt.Errorf("scenarioenv: controller %s has no parameter %q (parameters: %s)", ccName, name, strings.Join(spec.ParamNames(), ", "))
		}
		e.param = p
		e.paramLog = p.Min > 0 && p.Max/p.Min > 100
	default:
		return nil, fmt.Errorf("scenarioenv: unknown action %q (want window, pacing, mark_threshold or param:NAME)", cfg.Action)
	}
	e.obs = make([]float32, len(e.feat))
	// Build once so that Reset cannot fail later.
	n, err := e.build(1)
	if err != nil {
		return nil, err
	}
	if cfg.Action == ActionMarkThreshold {
		if _, ok := n.Bottleneck.Queue().(*queue.DropTail); !ok {
			return nil, fmt.Errorf("scenarioenv: action %s needs a droptail bottleneck queue (scenario %s has %s, which marks by its own rule)", ActionMarkThreshold, cfg.Scenario.Name, cfg.Scenario.Bottleneck.Queue.Discipline)
		}
	}
	if strings.HasPrefix(cfg.Action, ActionParamPrefix) {
		if _, ok := n.Flows[0].Sender.CC().(cc.Tunable); !ok {
			return nil, fmt.Errorf("scenarioenv: controller %s cannot change parameters while it runs", cfg.Scenario.Flows[e.flowIdx].CC.Name)
		}
	}
	return e, nil
}

// setMarkThreshold sets the bottleneck's marking threshold for action a
// and returns it (packets, or bytes for a queue limited in bytes); 0 if a
// schedule has put another discipline in the DropTail's place.
func (e *Env) setMarkThreshold(a float64) float64 {
	d, ok := e.net.Bottleneck.Queue().(*queue.DropTail)
	if !ok {
		return 0
	}
	lim := d.Limit()
	lo, hi := 1.0, float64(lim.Packets)
	if lim.Packets == 0 {
		lo, hi = 1500, float64(lim.Bytes)
	}
	hi = max(hi, lo)
	v := math.Round(math.Exp(math.Log(lo) + (a+1)/2*(math.Log(hi)-math.Log(lo))))
	v = math.Max(lo, math.Min(hi, v))
	t := queue.Limit{Packets: int(v)}
	if lim.Packets == 0 {
		t = queue.Limit{Bytes: units.Bytes(v)}
	}
	if err := d.SetMarkThreshold(t); err != nil {
		panic(fmt.Sprintf("scenarioenv: mark threshold %v within the queue's limit %v: %v", t, lim, err))
	}
	return v
}

// build returns the episode's network; the agent's flow is Flows[0].
func (e *Env) build(seed uint64) (*network.Network, error) {
	s := e.cfg.Scenario.Clone()
	s.Seed = seed
	// Move the agent's flow first, as one replica, so that it is Flows[0].
	f := s.Flows[e.flowIdx]
	f.Count = 1
	f.StartSpread = scenario.Duration{}
	switch e.cfg.Action {
	case ActionWindow:
		f.CC = scenario.CC{Name: "external", Params: map[string]float64{"max_window": float64(e.cfg.MaxWindow)}}
	case ActionPacing:
		f.CC = scenario.CC{Name: "external", Params: map[string]float64{"max_window": float64(e.cfg.MaxWindow), "rate": float64(e.cfg.InitialRate)}}
	}
	rest := slices.Delete(slices.Clone(s.Flows), e.flowIdx, e.flowIdx+1)
	if orig := e.cfg.Scenario.Flows[e.flowIdx]; orig.Count > 1 {
		o := orig
		o.Count--
		rest = append(rest, o)
	}
	s.Flows = append([]scenario.Flow{f}, rest...)
	// The simulation must outlast the longest episode.
	s.Duration = scenario.Dur(max(s.Duration.V, time.Duration(e.cfg.EpisodeSteps)*e.cfg.Step+time.Second))
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scenarioenv: derived scenario: %w", err)
	}
	n, err := network.Build(s)
	if err != nil {
		return nil, fmt.Errorf("scenarioenv: %w", err)
	}
	return n, nil
}

// Config returns the configuration with its defaults filled in.
func (e *Env) Config() Config { return e.cfg }

// ObservationSpace implements env.Env: unbounded features.
func (e *Env) ObservationSpace() space.Space {
	return space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), len(e.feat))
}

// ActionSpace implements env.Env: one value in [-1, 1].
func (e *Env) ActionSpace() space.Space { return space.Uniform(-1, 1, 1) }

// Reset implements env.Env.
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	n, err := e.build(seed)
	if err != nil {
		panic(err) // built once in New
	}
	e.net, e.flow = n, n.Flows[0]
	e.steps = 0
	e.rate = e.cfg.InitialRate
	e.lastT, e.lastAck, e.lastSent, e.lastRetx, e.lastSegs, e.lastCap = 0, 0, 0, 0, 0, 0
	e.lastDeliv, e.lastECE, e.lastRed = 0, 0, 0
	clear(e.obs)
	clear(e.info)
	return e.obs, e.info
}

// Step implements env.Env.
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	if e.net == nil {
		panic("scenarioenv: Step before Reset")
	}
	a := float64(action[0])
	if math.IsNaN(a) {
		a = 0
	}
	a = math.Max(-1, math.Min(1, a))
	now := e.net.Now()
	snd := e.flow.Sender
	switch {
	case e.cfg.Action == ActionWindow:
		mss := snd.Config().MSS
		w := units.Bytes(math.Ceil(float64(snd.CC().CongestionWindow()) * math.Exp2(a)))
		snd.CC().(cc.WindowSetter).SetCongestionWindow(now, min(max(w, mss), e.cfg.MaxWindow))
	case e.cfg.Action == ActionPacing:
		e.rate = units.Bandwidth(math.Max(8000, math.Min(1e12, float64(e.rate)*math.Exp2(a))))
		snd.CC().(cc.PacingSetter).SetPacingRate(now, e.rate)
	case e.cfg.Action == ActionMarkThreshold:
		e.info["mark_threshold"] = e.setMarkThreshold(a)
	default:
		p := e.param
		u := (a + 1) / 2
		v := p.Min + u*(p.Max-p.Min)
		if e.paramLog {
			v = math.Exp(math.Log(p.Min) + u*(math.Log(p.Max)-math.Log(p.Min)))
		}
		if p.Integer {
			v = math.Round(v)
		}
		v = math.Max(p.Min, math.Min(p.Max, v))
		if err := snd.CC().(cc.Tunable).SetParam(p.Name, v); err != nil {
			panic(fmt.Sprintf("scenarioenv: setting %s = %g within its range: %v", p.Name, v, err))
		}
		e.info["param"] = v
	}
	end := now.Add(e.cfg.Step)
	e.net.Sched.RunUntil(end)
	terminated := e.net.Sched.Stopped() || e.flow.Done()
	r := e.observe(end)
	e.steps++
	return e.obs, r, terminated, !terminated && e.steps >= e.cfg.EpisodeSteps, e.info
}

func (e *Env) observe(now clock.Time) float64 {
	st := e.flow.Sender.State()
	dt := now.Sub(e.lastT).Seconds()
	acked := st.Stats.BytesAcked - e.lastAck
	sent := st.Stats.BytesSent - e.lastSent
	retx := st.Stats.Retransmissions - e.lastRetx
	segs := st.Stats.SegmentsSent - e.lastSegs
	capNow := e.net.Bottleneck.Capacity(now)
	capStep := capNow - e.lastCap
	e.lastT, e.lastAck, e.lastSent, e.lastRetx, e.lastSegs, e.lastCap = now, st.Stats.BytesAcked, st.Stats.BytesSent, st.Stats.Retransmissions, st.Stats.SegmentsSent, capNow
	deliv, eceBytes, reductions := st.Delivered-e.lastDeliv, st.ECEDelivered-e.lastECE, st.ECNReductions-e.lastRed
	e.lastDeliv, e.lastECE, e.lastRed = st.Delivered, st.ECEDelivered, st.ECNReductions
	eceFrac := 0.0
	if deliv > 0 {
		// Without SACK, duplicate ACKs' credit can make the echoed
		// bytes exceed the delivered ones.
		eceFrac = min(float64(eceBytes)/float64(deliv), 1)
	}

	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	mbps := func(b units.Bytes) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(b) * 8 / dt / 1e6
	}
	lossRate := 0.0
	if segs > 0 {
		lossRate = float64(retx) / float64(segs)
	}
	qdelay := ms(max(st.SRTT-st.MinRTT, 0))
	v := [...]float64{
		mbps(acked), mbps(sent), float64(st.Cwnd) / 1000, float64(st.InFlight) / 1000,
		float64(st.PacingRate) / 1e6, ms(st.SRTT), ms(st.MinRTT), ms(st.LatestRTT), ms(st.RTTVar),
		qdelay, float64(retx), lossRate, mbps(capStep), eceFrac, float64(reductions),
	}
	for i, f := range e.feat {
		e.obs[i] = float32(v[f])
	}
	util := 0.0
	if capStep > 0 {
		util = float64(acked) / float64(capStep)
	}
	var r float64
	switch Rewards[e.reward] {
	case "utilization":
		r = util
	case "utilization-delay":
		r = util
		if st.MinRTT > 0 {
			r -= e.cfg.DelayWeight * qdelay / ms(st.MinRTT)
		}
		r -= e.cfg.LossWeight * lossRate
	case "power":
		r = math.Log(mbps(acked) + 0.01)
		if st.SRTT > 0 {
			r -= math.Log(ms(st.SRTT))
		}
	}
	e.info["utilization"] = util
	e.info["throughput_mbps"] = mbps(acked)
	e.info["srtt_ms"] = ms(st.SRTT)
	e.info["retransmissions"] = float64(retx)
	e.info["cwnd_kb"] = float64(st.Cwnd) / 1000
	return r
}
