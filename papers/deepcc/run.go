package deepcc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// TuneEvery is the online tuning interval in decision intervals: four RTTs,
// the paper's choice (section V, "we use 4 RTT as online tuning interval").
const TuneEvery = 4

// Outcome is one run's performance, the quantities of the Pantheon plot and
// of the targets.
type Outcome struct {
	// ThroughputMbps is the flow's goodput over the run, Mbit/s.
	ThroughputMbps float64 `json:"throughput_mbps"`
	// DelayP95Ms and DelayMeanMs are the 95th percentile and mean of the
	// queueing delay (RTT minus the flow's minimum RTT), ms.
	DelayP95Ms  float64 `json:"delay_p95_ms"`
	DelayMeanMs float64 `json:"delay_mean_ms"`
	// Loss is the fraction of the flow's packets dropped by the queue or
	// lost on the link.
	Loss float64 `json:"loss"`
}

// Metrics returns the outcome in the tuner's terms (the delay is the 95th
// percentile).
func (o Outcome) Metrics() tuner.Metrics {
	return tuner.Metrics{ThroughputMbps: o.ThroughputMbps, DelayMs: o.DelayP95Ms, Loss: o.Loss}
}

// TunePoint is one tuning interval of a tuned run.
type TunePoint struct {
	// T is the interval's end, seconds.
	T float64 `json:"t_s"`
	// Measured is the interval's measurement.
	Measured tuner.Metrics `json:"measured"`
	// Goal is the goal chosen for the next interval.
	Goal Goal `json:"goal"`
}

// Run describes one evaluation run on one link.
type Run struct {
	// Link is the bottleneck; Duration the run's length; Seed its seed.
	Link     Link
	Duration time.Duration
	Seed     uint64
	// Goal is DeepCC's fixed goal, or the tuner's starting goal.
	Goal Goal
	// Target, if set, turns the online tuner on.
	Target *tuner.Target
	// Tuner configures the tuner.
	Tuner tuner.Config
	// Margin tightens the target the tuner pursues: throughput bound x
	// (1+Margin), delay and loss bounds x (1-Margin), in [0, 1) [0]. The
	// run is still judged against Target.
	Margin float64
	// DelayWindow is the number of tuning intervals whose queueing-delay
	// samples are pooled into each interval's 95th percentile [1].
	DelayWindow int
	// Trajectory records the tuner's intervals in the result.
	Trajectory bool
	// Mode, if set, turns the tuner on with a preference instead of a
	// Target (ModeLowDelay or ModeHighThroughput, the paper's section
	// III-C); Target must then be nil.
	Mode Mode
	// DecisionRTTs is the decision interval in minimum RTTs [1];
	// TuneRTTs the tuning interval [4, the paper's], rounded to a whole
	// number (at least one) of decision intervals.
	DecisionRTTs, TuneRTTs float64
}

// tuneSteps is the tuning interval in decision intervals.
func (r Run) tuneSteps() int {
	d := cmp.Or(r.DecisionRTTs, 1)
	t := cmp.Or(r.TuneRTTs, TuneEvery)
	return max(1, int(math.Round(t/d)))
}

// RunResult is a run's outcome and, for tuned runs, the tuner's path.
type RunResult struct {
	Outcome
	// FinalGoal is the goal in force at the end.
	FinalGoal Goal `json:"final_goal"`
	// Trajectory is the tuner's path when requested.
	Trajectory []TunePoint `json:"trajectory,omitempty"`
}

// RunDeepCC runs the agent p (a DeepCC policy) on r.Link, with a fixed goal
// or, given r.Target or r.Mode, with the online tuner adjusting the goal
// every r.TuneRTTs. p is used from this goroutine only (Clone it per
// goroutine).
func RunDeepCC(p *policy.Policy, r Run) (RunResult, error) {
	if err := p.Check(PolicySpaces()); err != nil {
		return RunResult{}, err
	}
	e, err := NewEnv(EnvConfig{DecisionRTTs: r.DecisionRTTs})
	if err != nil {
		return RunResult{}, err
	}
	if err := e.Start(r.Link, r.Goal, r.Seed, r.Duration); err != nil {
		return RunResult{}, err
	}
	ag, err := newAgentRun(e, r)
	if err != nil {
		return RunResult{}, err
	}
	for !e.Done() {
		_, _, term, _, _ := e.Step(p.ActInto(e.Observation()))
		if term {
			break
		}
		if err := ag.afterStep(); err != nil {
			return RunResult{}, err
		}
	}
	return RunResult{Outcome: outcome(e.Network(), 0), FinalGoal: e.Goal(), Trajectory: ag.traj}, nil
}

// agentRun is one DeepCC flow's goal handling during a run: a fixed goal,
// or the online tuner pursuing a target or a preference mode.
type agentRun struct {
	e     *Env
	r     Run
	tu    *tuner.Tuner
	every int

	acc    StepInfo // the tuning interval's totals
	steps  int
	win    [][]time.Duration // the last DelayWindow intervals' samples
	pooled []time.Duration
	lastD  float64
	maxBw  float64 // the highest bandwidth estimate seen, Mbit/s
	traj   []TunePoint
}

func newAgentRun(e *Env, r Run) (*agentRun, error) {
	r.DelayWindow = max(r.DelayWindow, 1)
	ag := &agentRun{e: e, r: r, every: r.tuneSteps()}
	if r.Target != nil && r.Mode != "" {
		return nil, fmt.Errorf("deepcc: a run takes a target or a preference mode, not both")
	}
	if !(r.TuneRTTs >= 0 && r.TuneRTTs <= 1000) {
		return nil, fmt.Errorf("deepcc: tuning interval %g RTTs must be in (0, 1000]", r.TuneRTTs)
	}
	var aim tuner.Target
	switch {
	case r.Target != nil:
		if !(r.Margin >= 0 && r.Margin < 1) {
			return nil, fmt.Errorf("deepcc: tuner margin %g must be in [0, 1)", r.Margin)
		}
		aim = *r.Target
		aim.MinThroughputMbps *= 1 + r.Margin
		aim.MaxDelayMs *= 1 - r.Margin
		aim.MaxLoss *= 1 - r.Margin
	case r.Mode != "":
		var err error
		if aim, err = ag.modeTarget(); err != nil {
			return nil, err
		}
	default:
		return ag, nil
	}
	var err error
	if ag.tu, err = tuner.New(aim, r.Goal, r.Tuner); err != nil {
		return nil, err
	}
	e.RecordDelays(true)
	return ag, nil
}

// afterStep accounts the step just taken and, every tuning interval, lets
// the tuner choose the next goal.
func (ag *agentRun) afterStep() error {
	if ag.tu == nil {
		return nil
	}
	e := ag.e
	ag.maxBw = math.Max(ag.maxBw, e.bwEst/1e6)
	st := e.Last()
	ag.acc.Interval += st.Interval
	ag.acc.Delivered += st.Delivered
	ag.acc.SegmentsSent += st.SegmentsSent
	ag.acc.SegmentsLost += st.SegmentsLost
	if ag.steps++; ag.steps%ag.every != 0 {
		return nil
	}
	// The interval's delay is the 95th percentile of the samples of the
	// last DelayWindow intervals pooled.
	ag.win = append(ag.win, e.TakeDelays(nil))
	if len(ag.win) > ag.r.DelayWindow {
		ag.win = ag.win[1:]
	}
	ag.pooled = ag.pooled[:0]
	for _, w := range ag.win {
		ag.pooled = append(ag.pooled, w...)
	}
	if len(ag.pooled) > 0 {
		// A window without RTT samples (an outage) keeps the previous
		// delay measurement.
		ag.lastD = percentileMs(ag.pooled, 0.95)
	}
	m := tuner.Metrics{DelayMs: ag.lastD}
	if ag.acc.Interval > 0 {
		m.ThroughputMbps = float64(ag.acc.Delivered) * 8 / ag.acc.Interval.Seconds() / 1e6
	}
	if ag.acc.SegmentsSent > 0 {
		m.Loss = math.Min(1, float64(ag.acc.SegmentsLost)/float64(ag.acc.SegmentsSent))
	}
	if ag.r.Mode != "" {
		t, err := ag.modeTarget()
		if err != nil {
			return err
		}
		if err := ag.tu.SetTarget(t); err != nil {
			return err
		}
	}
	g, err := ag.tu.Observe(m)
	if err != nil {
		return err
	}
	if err := e.SetGoal(Goal(g)); err != nil {
		return err
	}
	if ag.r.Trajectory {
		ag.traj = append(ag.traj, TunePoint{T: e.Network().Now().Seconds(), Measured: m, Goal: Goal(g)})
	}
	ag.acc = StepInfo{}
	return nil
}

// RunClassic runs controller c (e.g. cubic, bbr, vegas, newreno) on
// r.Link for r.Duration.
func RunClassic(c scenario.CC, r Run) (RunResult, error) {
	s, err := r.Link.Scenario(r.Seed, r.Duration, c)
	if err != nil {
		return RunResult{}, err
	}
	_, n, err := experiment.Run(context.Background(), s)
	if err != nil {
		return RunResult{}, fmt.Errorf("deepcc: %s on %s: %w", c, r.Link.Name, err)
	}
	return RunResult{Outcome: outcome(n, 0)}, nil
}

// outcome summarises the network's flow i.
func outcome(n *network.Network, i int) Outcome {
	return outcomeOf(experiment.Summarize(n, 0), n, i)
}

// outcomeOf is outcome given the network's summary.
func outcomeOf(sum *experiment.Result, n *network.Network, i int) Outcome {
	f := sum.Flows[i]
	fl := n.Flows[i]
	o := Outcome{ThroughputMbps: f.GoodputMbps, DelayP95Ms: f.QdelayP95Ms, DelayMeanMs: f.QdelayMeanMs}
	if sent := fl.Sender.Stats().SegmentsSent; sent > 0 {
		o.Loss = float64(fl.Drops+fl.Losses+fl.LastHopLosses) / float64(sent)
	}
	return o
}

// percentileMs returns the q-quantile (nearest rank) of d in ms; d is
// sorted in place.
func percentileMs(d []time.Duration, q float64) float64 {
	slices.Sort(d)
	i := int(math.Ceil(q*float64(len(d)))) - 1
	i = min(max(i, 0), len(d)-1)
	return float64(d[i]) / 1e6
}
