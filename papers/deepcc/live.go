package deepcc

import (
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/transport/tcp"
	"github.com/cclab/cclab/transport/udp"
)

// LiveAgent runs a DeepCC policy on a live flow (transport/udp on the
// real clock) with a fixed goal, deciding once per minimum RTT (clamped
// to [MinStep, MaxStep]) exactly as Env.Step does in the simulator: the
// same features, bandwidth filter, window gain and pacing. The first
// decision waits for the handshake's RTT sample, as Env.Start does. The
// reward's capacity reference is not observable live and is not used.
type LiveAgent struct {
	p    *policy.Policy
	goal Goal
	snd  *tcp.Sender
	ext  cc.WindowSetter
	pace cc.PacingSetter
	mss  units.Bytes

	bw               *maxFilter
	bwEst, prevBw    float64
	prevDelivery     float64
	prevAction, gain float64
	stepCounters
	hist, obs []float32
	started   bool
	tune      *liveTune // the online goal tuner (livetune.go), or nil

	// Steps counts decisions.
	Steps int
	// TuneErr is the error that stopped the tuner, if any (the flow goes
	// on with the last goal); read it after the flow ends.
	TuneErr error
}

// NewLiveAgent checks p against DeepCC's spaces and g.
func NewLiveAgent(p *policy.Policy, g Goal) (*LiveAgent, error) {
	if err := p.Check(PolicySpaces()); err != nil {
		return nil, err
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &LiveAgent{p: p.Clone(), goal: g, bw: newMaxFilter(BwWindow),
		hist: make([]float32, History*NumFeatures), obs: make([]float32, ObservationSize)}, nil
}

// Controller returns the controller the agent drives: external, with
// DeepCC's initial window and cap.
func Controller(mss units.Bytes) (cc.Algorithm, error) {
	spec, err := cc.Lookup("external")
	if err != nil {
		return nil, err
	}
	params, err := spec.Resolve(map[string]float64{"iw": 10, "max_window": float64(MaxWindow)})
	if err != nil {
		return nil, err
	}
	return spec.New(cc.Config{MSS: mss, Params: params})
}

// Attach hooks the agent into s before it runs; s must use Controller's
// controller.
func (a *LiveAgent) Attach(s *udp.Sender) error {
	t := s.Transport()
	var ok bool
	if a.ext, ok = t.CC().(cc.WindowSetter); !ok {
		return fmt.Errorf("deepcc: the flow's controller cannot take a window (use the external controller)")
	}
	if a.pace, ok = t.CC().(cc.PacingSetter); !ok {
		return fmt.Errorf("deepcc: the flow's controller cannot take a pacing rate (use the external controller)")
	}
	a.snd, a.mss = t, t.Config().MSS
	clk := s.Clock()
	var step clock.Timer
	step = clk.NewTimer(func(now clock.Time) {
		a.observe(now)
		step.Reset(now.Add(a.decide(now)))
	})
	prev := t.OnRTT
	t.OnRTT = func(now clock.Time, rtt time.Duration) {
		if prev != nil {
			prev(now, rtt)
		}
		if !a.started {
			a.start(now)
			step.Reset(now.Add(a.decide(now)))
			return
		}
		a.onRTT(rtt)
	}
	return nil
}

func (a *LiveAgent) onRTT(rtt time.Duration) {
	if a.tune != nil {
		a.tune.queueSample(rtt, a.minRTT())
	}
	a.addRTT(rtt)
}

func (a *LiveAgent) minRTT() time.Duration {
	return max(a.snd.RTT().Min(), time.Millisecond)
}

func (a *LiveAgent) bdp() units.Bytes {
	b := units.Bytes(a.bwEst / 8 * a.minRTT().Seconds())
	return max(b, minBDPSegs*a.mss)
}

// start initialises the state at the first RTT sample (Env.Start).
func (a *LiveAgent) start(now clock.Time) {
	a.started = true
	st := a.snd.State()
	a.baseline(now, st)
	a.bwEst = float64(st.Cwnd) * 8 / a.minRTT().Seconds()
	a.prevBw, a.prevDelivery = a.bwEst, 0
	raw := stepRaw{minRTT: a.minRTT(), cwnd: st.Cwnd, inflight: st.InFlight}
	a.writeObs(raw, featureInput{bw: a.bwEst, prevBw: a.bwEst, bdp: a.bdp()}, Measurement{})
}

// decide runs the policy on the current observation, sets the window and
// pacing rate, and returns the time to the next decision (Env.Step's
// first half).
func (a *LiveAgent) decide(now clock.Time) time.Duration {
	x := float64(a.p.ActInto(a.obs)[0])
	if math.IsNaN(x) {
		x = 0
	}
	x = clamp(x, -1, 1)
	minRTT := a.minRTT()
	a.gain = math.Exp2(GainExponent * x)
	w := units.Bytes(a.gain * float64(a.bdp()))
	w = min(max(w, minWindowSegs*a.mss), MaxWindow)
	a.ext.SetCongestionWindow(now, w)
	a.pace.SetPacingRate(now, units.Bandwidth(PacingGain*float64(w)*8/minRTT.Seconds()))
	a.prevAction = x
	a.Steps++
	return min(max(minRTT, MinStep), MaxStep)
}

// observe measures the step that ended at now (Env.Step's second half).
func (a *LiveAgent) observe(now clock.Time) {
	st := a.snd.State()
	raw := a.step(now, st, a.minRTT())
	delivery, sending := raw.rates()
	if !selfLimited(a.gain, delivery, a.bwEst, raw) {
		a.bw.add(delivery)
	}
	a.prevBw = a.bwEst
	a.bwEst = math.Max(a.bw.max(), 1)
	lossRate := raw.lossRate()
	in := featureInput{bw: a.bwEst, prevBw: a.prevBw, prevDelivery: a.prevDelivery, qdelay: a.lastQ,
		prevAction: a.prevAction, bdp: a.bdp(), delivery: delivery, sending: sending}
	a.writeObs(raw, in, Measure(delivery/a.bwEst, a.lastQ, lossRate))
	a.prevDelivery = delivery
	if a.tune != nil {
		// The next observation carries the new goal, as Env.SetGoal
		// between steps does in the simulator.
		if err := a.tune.step(a, now, raw); err != nil {
			a.TuneErr, a.tune = err, nil
		}
	}
}

func (a *LiveAgent) writeObs(raw stepRaw, in featureInput, m Measurement) {
	copy(a.hist, a.hist[NumFeatures:])
	features(raw, in, a.hist[(History-1)*NumFeatures:])
	copy(a.obs, a.hist)
	for i := range 3 {
		a.obs[measurementOffset+i] = float32(m[i])
		a.obs[goalOffset+i] = float32(a.goal[i])
	}
}
