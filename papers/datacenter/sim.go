package datacenter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cclab/cclab/cc/bbr"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/netsim/traffic"
)

// episodeStream is the PCG stream of an episode's random events ("dcrl").
const episodeStream uint64 = 0x6463726c

// Sim is one simulated data centre shared by K agents: the paper's RL-host
// interface. Each agent step it applies every agent's parameters to that
// agent's flows, runs the network for one interval, collects the flows'
// statistics and computes each agent's observation and reward. A Sim is
// used from one goroutine at a time.
type Sim struct {
	cfg      Config
	obsDim   int
	k        int
	numFlows int
	// ranges of each agent's flows (indices into flows)
	agentLo, agentHi []int

	net       *network.Network
	flows     []*ctlFlow
	racks     [][]*ctlFlow
	params    []Params
	mss       units.Bytes
	header    units.Bytes
	wireRatio float64 // payload bytes per wire byte
	lineRate  units.Bandwidth

	step                 int
	intervalStart        clock.Time
	lastCap, lastAllGood units.Bytes

	obs     [][]float32 // per agent, History frames
	frame   []float32
	partial []float64 // per-agent reward
	// agentGood and agentActive are each agent's goodput and active flows
	// in the last interval (the reward's fairness term).
	agentGood   []float64
	agentActive []int
	team        float64
	util        float64
	sTeam       float64

	measuring bool
	last      []flowStats // the last interval's per-flow statistics
	stats     EpisodeStats
	rttHist   metrics.Hist
}

// ctlFlow is a controlled flow and its interval accumulators.
type ctlFlow struct {
	f      *network.Flow
	bbr    *bbr.BBR
	agent  int
	params Params // the windows last applied to this flow
	flowMeter
}

// pathEvent changes one rack's extra path delay at a time.
type pathEvent struct {
	at    time.Duration
	rack  int
	delay time.Duration
}

// NewSim validates cfg and returns a simulation; call Reset before use.
func NewSim(cfg Config) (*Sim, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base, err := detach(cfg.Base)
	if err != nil {
		return nil, err
	}
	cfg.Base = base
	m := &Sim{cfg: cfg, k: cfg.Agents, obsDim: NumFeatures * cfg.History}
	for _, f := range cfg.Base.Flows {
		m.numFlows += max(f.Count, 1)
	}
	for i := range m.k {
		m.agentLo = append(m.agentLo, i*m.numFlows/m.k)
		m.agentHi = append(m.agentHi, (i+1)*m.numFlows/m.k)
	}
	m.obs = make([][]float32, m.k)
	for i := range m.obs {
		m.obs[i] = make([]float32, m.obsDim)
	}
	m.frame = make([]float32, NumFeatures)
	m.partial = make([]float64, m.k)
	m.agentGood, m.agentActive = make([]float64, m.k), make([]int, m.k)
	m.params = make([]Params, m.k)
	// Build one episode now so that a bad scenario (or flow-size file)
	// fails here, not in Reset.
	s, _, err := m.episode(1)
	if err != nil {
		return nil, err
	}
	if _, err := network.Build(s); err != nil {
		return nil, fmt.Errorf("datacenter: %w", err)
	}
	return m, nil
}

// detach returns a copy of s that no longer depends on the directory of
// its file: flow-size files are resolved now. network resolves every
// arrivals "sizes" value against the scenario's directory before looking
// up the built-in names, so a scenario loaded from another directory
// cannot use "websearch" or "datamining"; a detached copy can.
func detach(s *scenario.Scenario) (*scenario.Scenario, error) {
	c := s.Clone()
	for i := range c.Background {
		b := &c.Background[i]
		if b.Sizes != "" && !slices.Contains(traffic.NamedDistributions(), b.Sizes) {
			b.Sizes = s.Path(b.Sizes)
		}
	}
	data, err := c.Marshal()
	if err != nil {
		return nil, fmt.Errorf("datacenter: scenario %s: %w", s.Name, err)
	}
	d, err := scenario.Parse(data, "")
	if err != nil {
		return nil, fmt.Errorf("datacenter: scenario %s: %w", s.Name, err)
	}
	return d, nil
}

// Config returns the configuration with defaults filled in.
func (m *Sim) Config() Config { return m.cfg }

// Agents returns K.
func (m *Sim) Agents() int { return m.k }

// ObsDim returns the size of one agent's observation.
func (m *Sim) ObsDim() int { return m.obsDim }

// NumFlows returns the number of controlled flows.
func (m *Sim) NumFlows() int { return m.numFlows }

// AgentFlows returns the indices (into the controlled flows, scenario
// order) of agent i's flows: [lo, hi).
func (m *Sim) AgentFlows(i int) (lo, hi int) { return m.agentLo[i], m.agentHi[i] }

// episode derives an episode's scenario and path events from seed.
func (m *Sim) episode(seed uint64) (*scenario.Scenario, []pathEvent, error) {
	cfg := m.cfg
	r := cfg.Random
	rnd := rand.New(rand.NewPCG(seed, episodeStream))
	s := cfg.Base.Clone()
	s.Seed = seed
	s.Sample = scenario.Duration{}
	total := time.Duration(cfg.Steps+1) * cfg.Interval
	s.Duration = scenario.Dur(total + cfg.Interval)
	u := func(lo, hi time.Duration) time.Duration {
		return (lo + time.Duration(rnd.Float64()*float64(hi-lo))).Round(time.Microsecond)
	}
	pathDelay := func() time.Duration {
		return time.Duration(logUniform(rnd.Float64(), float64(r.PathDelay[0]), float64(r.PathDelay[1]))).Round(time.Microsecond)
	}
	// One flow entry per controlled flow, so each can join and leave on
	// its own; the rack is the original entry.
	var flows []scenario.Flow
	for _, f := range s.Flows {
		n := max(f.Count, 1)
		rackDelay := f.ExtraDelay
		if r.PathDelay[1] > 0 {
			rackDelay = scenario.Dur(pathDelay())
		}
		for k := range n {
			g := f
			g.Count = 1
			if n > 1 {
				g.Name = fmt.Sprintf("%s-%d", f.Name, k+1)
			}
			g.ExtraDelay = rackDelay
			// Always draw, so the stream does not depend on the branch.
			late, early := rnd.Float64() < r.Churn, rnd.Float64() < r.Churn
			// A flow that joins late and leaves early stays at least
			// one interval.
			start := u(0, total/2)
			stop := max(u(total/2, total), start+cfg.Interval)
			if k > 0 && late {
				g.Start = scenario.Dur(start)
			}
			if k > 0 && early {
				g.Stop = scenario.Dur(stop)
			}
			flows = append(flows, g)
		}
	}
	s.Flows = flows
	for i := range s.Background {
		b := &s.Background[i]
		if b.Type != "arrivals" {
			continue
		}
		if r.Load[1] > 0 {
			b.Load = r.Load[0] + rnd.Float64()*(r.Load[1]-r.Load[0])
			b.Interval = scenario.Duration{}
		}
		if r.Sizes != "" {
			b.Sizes, b.Size = r.Sizes, scenario.Size{}
		}
	}
	var events []pathEvent
	if r.EventGap[1] > 0 && (r.PathDelay[1] > 0 || r.Rate[1] > 0) {
		for t := u(r.EventGap[0], r.EventGap[1]); t < total; t += u(r.EventGap[0], r.EventGap[1]) {
			path := r.Rate[1] == 0 || (r.PathDelay[1] > 0 && rnd.Float64() < 0.5)
			if path {
				events = append(events, pathEvent{at: t, rack: rnd.IntN(len(cfg.Base.Flows)), delay: pathDelay()})
				continue
			}
			rate := units.Bandwidth(logUniform(rnd.Float64(), float64(r.Rate[0]), float64(r.Rate[1])))
			rate = rate / units.Mbps * units.Mbps
			s.Bottleneck.Schedule = append(s.Bottleneck.Schedule, scenario.Change{At: scenario.Dur(t), Rate: scenario.RateOf(rate)})
		}
	}
	if err := s.Validate(); err != nil {
		return nil, nil, fmt.Errorf("datacenter: episode scenario: %w", err)
	}
	return s, events, nil
}

// pathChange applies a pathEvent inside the simulation.
type pathChange struct{}

func (pathChange) Handle(now clock.Time, arg any) {
	a := arg.(*pathArg)
	for _, c := range a.m.racks[a.ev.rack] {
		// network has no per-flow path schedule; a flow's extra delay is
		// read per packet, so changing it re-routes the flow from now on
		// (packets already in flight keep their delay).
		c.f.ExtraDelay = a.ev.delay
	}
}

type pathArg struct {
	m  *Sim
	ev pathEvent
}

// Reset starts the episode of seed: it builds the network, runs one
// interval with the scenario's parameters (warm-up, so the first
// observation has statistics) and computes the first observations.
func (m *Sim) Reset(seed uint64) {
	s, events, err := m.episode(seed)
	if err != nil {
		panic(err) // the same derivation succeeded in NewSim
	}
	n, err := network.Build(s)
	if err != nil {
		panic(fmt.Sprintf("datacenter: building a validated scenario: %v", err))
	}
	m.net = n
	m.flows = m.flows[:0]
	m.racks = make([][]*ctlFlow, len(m.cfg.Base.Flows))
	idx := 0
	for ri, f := range m.cfg.Base.Flows {
		for range max(f.Count, 1) {
			nf := n.Flows[idx]
			b, ok := nf.Sender.CC().(*bbr.BBR)
			if !ok || nf.Background {
				panic(fmt.Sprintf("datacenter: flow %s is not a controlled BBR flow", nf.Name))
			}
			c := &ctlFlow{f: nf, bbr: b, params: flowParams(m.cfg.Base, idx)}
			for a := range m.k {
				if idx >= m.agentLo[a] && idx < m.agentHi[a] {
					c.agent = a
				}
			}
			prev := nf.Sender.OnRTT
			nf.Sender.OnRTT = func(now clock.Time, rtt time.Duration) {
				prev(now, rtt)
				c.onRTT(rtt)
				if m.measuring {
					m.rttHist.Add(rtt)
				}
			}
			m.flows = append(m.flows, c)
			m.racks[ri] = append(m.racks[ri], c)
			idx++
		}
	}
	for _, ev := range events {
		n.Sched.At(clock.Time(ev.at), pathChange{}, &pathArg{m: m, ev: ev})
	}
	tc := m.flows[0].f.Sender.Config()
	m.mss, m.header = tc.MSS, tc.Header
	m.wireRatio = float64(tc.MSS) / float64(tc.MSS+tc.Header)
	m.lineRate = s.Bottleneck.Rate.V
	for i := range m.params {
		m.params[i] = flowParams(m.cfg.Base, m.agentLo[i])
	}
	m.step, m.intervalStart, m.lastCap, m.lastAllGood = 0, 0, 0, 0
	m.measuring = false
	m.stats = EpisodeStats{PathEvents: len(events), RateEvents: len(s.Bottleneck.Schedule), AgentGoodput: make([]units.Bytes, m.k)}
	m.rttHist = metrics.Hist{}
	end := clock.Time(m.cfg.Interval)
	n.Sched.RunUntil(end)
	m.observe(end)
	for i := range m.obs {
		fillHistory(m.obs[i])
	}
	m.measuring = true
}

// flowParams returns the BBR windows the scenario gives controlled flow
// idx (BBR's defaults where it gives none).
func flowParams(s *scenario.Scenario, idx int) Params {
	for _, f := range s.Flows {
		n := max(f.Count, 1)
		if idx < n {
			return ParamsFrom(f.CC.Params)
		}
		idx -= n
	}
	return DefaultParams
}

// Flow returns controlled flow j (scenario order), the agent that controls
// it and the BBR windows last applied to it.
func (m *Sim) Flow(j int) (f *network.Flow, agent int, p Params) {
	c := m.flows[j]
	return c.f, c.agent, c.params
}

// FlowBBR returns controlled flow j's BBR controller.
func (m *Sim) FlowBBR(j int) *bbr.BBR { return m.flows[j].bbr }

// Params returns agent i's current parameters.
func (m *Sim) Params(i int) Params { return m.params[i] }

// Apply sets agent i's parameters on all its flows (from the next event
// on). It returns an error if BBR rejects a value.
func (m *Sim) Apply(i int, p Params) error {
	for _, c := range m.flows[m.agentLo[i]:m.agentHi[i]] {
		if c.params == p {
			continue
		}
		if err := applyParams(c.bbr, p); err != nil {
			return fmt.Errorf("datacenter: agent %d: %w", i, err)
		}
		c.params = p
	}
	m.params[i] = p
	return nil
}

// Advance runs the network for one interval with the parameters applied
// and computes observations and rewards. It reports whether the episode
// is over (truncated: the data centre goes on).
func (m *Sim) Advance() bool {
	if m.net == nil {
		panic("datacenter: Advance before Reset")
	}
	end := m.intervalStart.Add(m.cfg.Interval)
	m.net.Sched.RunUntil(end)
	m.observe(end)
	m.step++
	m.stats.add(m)
	if m.step >= m.cfg.Steps {
		m.finish()
		return true
	}
	return false
}

// Done reports whether the episode is over.
func (m *Sim) Done() bool { return m.step >= m.cfg.Steps }

// Step returns the number of agent steps taken in the episode.
func (m *Sim) Step() int { return m.step }

// Observation returns agent i's observation; it belongs to the Sim and is
// valid until the next Advance or Reset.
func (m *Sim) Observation(i int) []float32 { return m.obs[i] }

// PartialReward returns agent i's own reward for the last interval:
// α·utilisation + (1 − α)·(mean delay term of its flows).
func (m *Sim) PartialReward(i int) float64 { return m.partial[i] }

// TeamReward returns the team-average reward of the last interval, which
// every agent receives (the paper's fully cooperative setting).
func (m *Sim) TeamReward() float64 { return m.team }

// Utilization returns the reward's throughput term of the last interval.
func (m *Sim) Utilization() float64 { return m.util }

// Network returns the current episode's network (for tests and probes).
func (m *Sim) Network() *network.Network { return m.net }

// Events returns the number of path and capacity events of the episode.
func (m *Sim) Events() (path, rate int) { return m.stats.PathEvents, m.stats.RateEvents }

// flowStats are one controlled flow's statistics over an interval.
type flowStats struct {
	active, hasRTT  bool
	goodput         units.Bytes
	retx, segs, rto int64
	rtprop, rttMean time.Duration
	queue, stale    float64
	delayTerm       float64
	bdpSeg          float64
	btlbw           units.Bandwidth
	inflight        float64
	pacingGain      float64
	cwndGain        float64
	probeRTT        bool
	age             float64
}

// observe computes the interval [intervalStart, now]'s statistics,
// observations and rewards, and resets the accumulators.
func (m *Sim) observe(now clock.Time) {
	n := m.net
	capBytes := n.Bottleneck.Capacity(now)
	payloadCap := float64(capBytes-m.lastCap) * m.wireRatio
	m.lastCap = capBytes
	var allGood units.Bytes
	activeBg := 0
	for _, f := range n.Flows {
		allGood += f.Receiver.DeliveredBytes
		if f.Background && f.Start <= now && !f.Done() && !f.Sender.Done() {
			activeBg++
		}
	}
	m.util = utilization(allGood-m.lastAllGood, payloadCap)
	m.lastAllGood = allGood

	if cap(m.last) < len(m.flows) {
		m.last = make([]flowStats, len(m.flows))
	}
	st := m.last[:len(m.flows)]
	for j, c := range m.flows {
		st[j] = m.flowStats(c, now)
	}
	m.last = st
	// Team aggregates (shared sensation).
	team := aggregate(st, 0, len(st))
	sTeam := team.delayTerm
	m.sTeam = sTeam
	m.team = 0
	link := linkSample{payloadCap: payloadCap, util: m.util, activeBg: activeBg, lineRate: m.lineRate}
	for i := range m.k {
		a := aggregate(st, m.agentLo[i], m.agentHi[i])
		m.partial[i] = partialReward(m.cfg.Reward, m.util, a, sTeam)
		m.agentGood[i], m.agentActive[i] = float64(a.goodput), a.active
		fillFrame(m.frame, a, team, m.params[i], link)
		pushFrame(m.obs[i], m.frame)
	}
	var pen float64
	if lam := m.cfg.Reward.Fairness; lam > 0 {
		pen = lam * (1 - FairnessIndex(m.agentGood, m.agentActive))
	}
	for i := range m.k {
		m.partial[i] -= pen
		m.team += m.partial[i] / float64(m.k)
	}
	m.intervalStart = now
}

func (m *Sim) flowStats(c *ctlFlow, now clock.Time) flowStats {
	f := c.f
	return c.measure(now, flowSample{
		active:   f.Start < now && f.Stop > m.intervalStart,
		good:     f.Receiver.DeliveredBytes,
		sender:   f.Sender.Stats(),
		inflight: f.Sender.InFlight(),
		snap:     c.bbr.Snapshot(),
	}, m.mss, m.cfg.Reward.Tau)
}

// agg summarises the flows [lo, hi).
type agg struct {
	n, active, withRTT     int
	goodput                units.Bytes
	retx, segs, rto        int64
	queue, queueMax, stale float64
	rtprop, rtt            float64 // mean log10 us
	bdp, inflight          float64
	btlbw                  units.Bandwidth
	pacingGain, cwndGain   float64
	probeRTT, age          float64
	delayTerm              float64
}

func aggregate(st []flowStats, lo, hi int) agg {
	var a agg
	a.n = hi - lo
	for _, s := range st[lo:hi] {
		if !s.active {
			continue
		}
		a.active++
		a.goodput += s.goodput
		a.retx += s.retx
		a.segs += s.segs
		a.rto += s.rto
		a.btlbw += s.btlbw
		a.bdp += math.Log2(1 + s.bdpSeg)
		a.inflight += s.inflight
		a.pacingGain += s.pacingGain
		a.cwndGain += s.cwndGain
		a.age += s.age
		if s.probeRTT {
			a.probeRTT++
		}
		if s.hasRTT {
			a.withRTT++
			a.queue += s.queue
			a.queueMax = math.Max(a.queueMax, s.queue)
			a.stale += s.stale
			a.rtprop += math.Log10(float64(s.rtprop) / 1e3)
			a.rtt += math.Log10(float64(s.rttMean) / 1e3)
			a.delayTerm += s.delayTerm
		}
	}
	if a.active > 0 {
		k := float64(a.active)
		a.bdp /= k
		a.inflight /= k
		a.pacingGain /= k
		a.cwndGain /= k
		a.age /= k
		a.probeRTT /= k
	}
	if a.withRTT > 0 {
		k := float64(a.withRTT)
		a.queue /= k
		a.stale /= k
		a.rtprop /= k
		a.rtt /= k
		a.delayTerm /= k
	}
	return a
}

func frac(x, y int64) float64 {
	if y <= 0 {
		return 0
	}
	return float64(x) / float64(y)
}
