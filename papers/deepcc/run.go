package deepcc

import (
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
// or, given r.Target, with the online tuner adjusting the goal every
// TuneEvery decision intervals. p is used from this goroutine only (Clone
// it per goroutine).
func RunDeepCC(p *policy.Policy, r Run) (RunResult, error) {
	if err := p.Check(PolicySpaces()); err != nil {
		return RunResult{}, err
	}
	e, err := NewEnv(EnvConfig{})
	if err != nil {
		return RunResult{}, err
	}
	if err := e.Start(r.Link, r.Goal, r.Seed, r.Duration); err != nil {
		return RunResult{}, err
	}
	var tu *tuner.Tuner
	res := RunResult{}
	r.DelayWindow = max(r.DelayWindow, 1)
	if r.Target != nil {
		if !(r.Margin >= 0 && r.Margin < 1) {
			return RunResult{}, fmt.Errorf("deepcc: tuner margin %g must be in [0, 1)", r.Margin)
		}
		aim := *r.Target
		aim.MinThroughputMbps *= 1 + r.Margin
		aim.MaxDelayMs *= 1 - r.Margin
		aim.MaxLoss *= 1 - r.Margin
		if tu, err = tuner.New(aim, r.Goal, r.Tuner); err != nil {
			return RunResult{}, err
		}
		e.RecordDelays(true)
	}
	var (
		acc    StepInfo // the tuning interval's totals
		steps  int
		win    [][]time.Duration // the last DelayWindow intervals' samples
		pooled []time.Duration
		lastD  float64
	)
	for !e.Done() {
		_, _, term, _, _ := e.Step(p.ActInto(e.Observation()))
		if term {
			break
		}
		if tu == nil {
			continue
		}
		st := e.Last()
		acc.Interval += st.Interval
		acc.Delivered += st.Delivered
		acc.SegmentsSent += st.SegmentsSent
		acc.SegmentsLost += st.SegmentsLost
		if steps++; steps%TuneEvery != 0 {
			continue
		}
		// The interval's delay is the 95th percentile of the samples of
		// the last DelayWindow intervals pooled.
		win = append(win, e.TakeDelays(nil))
		if len(win) > r.DelayWindow {
			win = win[1:]
		}
		pooled = pooled[:0]
		for _, w := range win {
			pooled = append(pooled, w...)
		}
		if len(pooled) > 0 {
			// A window without RTT samples (an outage) keeps the
			// previous delay measurement.
			lastD = percentileMs(pooled, 0.95)
		}
		m := tuner.Metrics{DelayMs: lastD}
		if acc.Interval > 0 {
			m.ThroughputMbps = float64(acc.Delivered) * 8 / acc.Interval.Seconds() / 1e6
		}
		if acc.SegmentsSent > 0 {
			m.Loss = math.Min(1, float64(acc.SegmentsLost)/float64(acc.SegmentsSent))
		}
		g, err := tu.Observe(m)
		if err != nil {
			return RunResult{}, err
		}
		if err := e.SetGoal(Goal(g)); err != nil {
			return RunResult{}, err
		}
		if r.Trajectory {
			res.Trajectory = append(res.Trajectory, TunePoint{T: e.Network().Now().Seconds(), Measured: m, Goal: Goal(g)})
		}
		acc = StepInfo{}
	}
	res.Outcome = outcome(e.Network())
	res.FinalGoal = e.Goal()
	return res, nil
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
	return RunResult{Outcome: outcome(n)}, nil
}

// outcome summarises the network's only flow.
func outcome(n *network.Network) Outcome {
	f := experiment.Summarize(n, 0).Flows[0]
	fl := n.Flows[0]
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
