package datacenter

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/metrics"
)

// SmallFlow is the size below which a background flow counts as short
// (query and RPC traffic) for the short-flow completion-time metric.
const SmallFlow units.Bytes = 100_000

// RTpropTolerance is the relative error within which an RTprop estimate
// counts as accurate (the paper's figure 3(b) reports the share of time
// BBR "can accurately estimate the current RTT").
const RTpropTolerance = 0.1

// EpisodeStats accumulates an episode's measurements over its agent steps
// (the warm-up interval excluded), for evaluation.
type EpisodeStats struct {
	// Steps is the number of agent steps; PathEvents and RateEvents the
	// episode's random events.
	Steps                  int
	PathEvents, RateEvents int
	// RewardSum, UtilSum and DelaySum sum the team reward, the
	// utilisation term and the team's delay term over the steps.
	RewardSum, UtilSum, DelaySum float64
	// Interval is the step length.
	Interval time.Duration
	// CtlGoodput is the payload the controlled flows delivered;
	// AgentGoodput splits it by agent.
	CtlGoodput   units.Bytes
	AgentGoodput []units.Bytes
	// CtlRetx and CtlSegs count the controlled flows' retransmitted and
	// sent segments.
	CtlRetx, CtlSegs int64
	// RTpropSamples counts (flow, step) pairs with an RTprop estimate,
	// RTpropAccurate those within RTpropTolerance of the flow's true
	// propagation RTT, and RTpropRelErr sums the relative errors.
	RTpropSamples, RTpropAccurate int
	RTpropRelErr                  float64
	// RTpropSqErr holds, per (flow, step) pair with an estimate, the
	// squared error of RTprop against the true propagation RTT, ms² (the
	// paper's Figure 3(b) CDF); FlowGoodput each active flow's goodput
	// per step, Mbit/s (Figure 3(d)'s throughput CDF).
	RTpropSqErr, FlowGoodput []float64
	// RTT holds the controlled flows' RTT samples.
	RTT metrics.Hist
	// BgFCT holds the completion times of the background flows that
	// finished, SmallFCT those of the short ones; BgUnfinished counts
	// background flows still running at the end.
	BgFCT, SmallFCT []time.Duration
	BgUnfinished    int
}

// add records the interval just observed.
func (e *EpisodeStats) add(m *Sim) {
	e.Steps++
	e.Interval = m.cfg.Interval
	e.RewardSum += m.team
	e.UtilSum += m.util
	e.DelaySum += m.sTeam
	for j, c := range m.flows {
		s := m.last[j]
		if !s.active {
			continue
		}
		e.CtlGoodput += s.goodput
		e.AgentGoodput[c.agent] += s.goodput
		e.FlowGoodput = append(e.FlowGoodput, float64(s.goodput)*8/m.cfg.Interval.Seconds()/1e6)
		e.CtlRetx += s.retx
		e.CtlSegs += s.segs
		if s.rtprop > 0 {
			base := m.baseRTT(c)
			rel := math.Abs(float64(s.rtprop-base)) / float64(base)
			e.RTpropSamples++
			e.RTpropRelErr += rel
			d := float64(s.rtprop-base) / 1e6
			e.RTpropSqErr = append(e.RTpropSqErr, d*d)
			if rel <= RTpropTolerance {
				e.RTpropAccurate++
			}
		}
	}
}

// baseRTT is the flow's true propagation RTT now: both directions'
// propagation and extra delay plus one data packet's serialisation at the
// bottleneck (network.Segment's BaseRTT definition).
func (m *Sim) baseRTT(c *ctlFlow) time.Duration {
	l := m.net.Bottleneck
	return 2*(l.Delay()+c.f.ExtraDelay) + l.Rate().TxTime(m.mss+m.header)
}

// finish collects the end-of-episode measurements.
func (m *Sim) finish() {
	e := &m.stats
	e.RTT = m.rttHist
	now := m.net.Now()
	for _, f := range m.net.Flows {
		if !f.Background || f.Start > now {
			continue
		}
		if !f.Done() {
			e.BgUnfinished++
			continue
		}
		fct := f.Receiver.DoneAt.Sub(f.Start)
		e.BgFCT = append(e.BgFCT, fct)
		if f.Bytes < SmallFlow {
			e.SmallFCT = append(e.SmallFCT, fct)
		}
	}
}

// Stats returns the episode's measurements so far (complete once the
// episode is over).
func (m *Sim) Stats() *EpisodeStats { return &m.stats }

// Metrics are an episode's figures of merit.
type Metrics struct {
	// Reward is the mean team reward per step; Util and DelayTerm its
	// two terms.
	Reward, Util, DelayTerm float64
	// GoodputMbps is the controlled flows' total goodput.
	GoodputMbps float64
	// RTTP50Ms and RTTP95Ms are quantiles of the controlled flows' RTT
	// samples.
	RTTP50Ms, RTTP95Ms float64
	// RetxPct is the controlled flows' retransmitted share of segments.
	RetxPct float64
	// RTpropAccuracy is the share of (flow, step) pairs whose RTprop is
	// within 10 % of the true propagation RTT; RTpropErr the mean
	// relative error.
	RTpropAccuracy, RTpropErr float64
	// BgFCTMeanMs and BgFCTP99Ms summarise background completion times;
	// SmallFCTP95Ms is the 95th percentile of short (< 100 KB) ones.
	BgFCTMeanMs, BgFCTP99Ms, SmallFCTP95Ms float64
	// BgDone and BgUnfinished count background flows.
	BgDone, BgUnfinished float64
	// AgentJain is Jain's fairness index of the agents' goodputs over the
	// episode (1: equal; 1/K: one agent's flows delivered everything, or
	// the others' never ran), NaN with one agent. The paper's reward has
	// no fairness term, so this shows what a scheme's reward may cost the
	// agents' flows.
	AgentJain float64
}

// MetricNames lists Metrics' fields in the order of Values.
var MetricNames = []string{"reward", "util", "delay_term", "goodput_mbps", "rtt_p50_ms", "rtt_p95_ms", "retx_pct",
	"rtprop_accuracy", "rtprop_err", "bg_fct_mean_ms", "bg_fct_p99_ms", "small_fct_p95_ms", "bg_done", "bg_unfinished", "agent_jain"}

// Values returns the metrics in MetricNames order.
func (x Metrics) Values() []float64 {
	return []float64{x.Reward, x.Util, x.DelayTerm, x.GoodputMbps, x.RTTP50Ms, x.RTTP95Ms, x.RetxPct,
		x.RTpropAccuracy, x.RTpropErr, x.BgFCTMeanMs, x.BgFCTP99Ms, x.SmallFCTP95Ms, x.BgDone, x.BgUnfinished, x.AgentJain}
}

// MetricsFromValues is the inverse of Values.
func MetricsFromValues(v []float64) Metrics {
	return Metrics{Reward: v[0], Util: v[1], DelayTerm: v[2], GoodputMbps: v[3], RTTP50Ms: v[4], RTTP95Ms: v[5], RetxPct: v[6],
		RTpropAccuracy: v[7], RTpropErr: v[8], BgFCTMeanMs: v[9], BgFCTP99Ms: v[10], SmallFCTP95Ms: v[11], BgDone: v[12], BgUnfinished: v[13], AgentJain: v[14]}
}

// Metrics computes the episode's figures of merit. Undefined values (no
// finished background flow, no RTT sample) are NaN.
func (e *EpisodeStats) Metrics() Metrics {
	nan := math.NaN()
	x := Metrics{Reward: nan, Util: nan, DelayTerm: nan, GoodputMbps: nan, RTTP50Ms: nan, RTTP95Ms: nan, RetxPct: nan,
		RTpropAccuracy: nan, RTpropErr: nan, BgFCTMeanMs: nan, BgFCTP99Ms: nan, SmallFCTP95Ms: nan,
		BgDone: float64(len(e.BgFCT)), BgUnfinished: float64(e.BgUnfinished), AgentJain: nan}
	if e.Steps > 0 {
		k := float64(e.Steps)
		x.Reward, x.Util, x.DelayTerm = e.RewardSum/k, e.UtilSum/k, e.DelaySum/k
		x.GoodputMbps = float64(e.CtlGoodput) * 8 / (k * e.Interval.Seconds()) / 1e6
	}
	if e.RTT.Count() > 0 {
		x.RTTP50Ms = ms(e.RTT.Quantile(0.5))
		x.RTTP95Ms = ms(e.RTT.Quantile(0.95))
	}
	if e.CtlSegs > 0 {
		x.RetxPct = 100 * float64(e.CtlRetx) / float64(e.CtlSegs)
	}
	var sum, sq float64
	for _, g := range e.AgentGoodput {
		sum, sq = sum+float64(g), sq+float64(g)*float64(g)
	}
	if j, ok := jain(sum, sq, len(e.AgentGoodput)); ok {
		x.AgentJain = j
	}
	if e.RTpropSamples > 0 {
		x.RTpropAccuracy = float64(e.RTpropAccurate) / float64(e.RTpropSamples)
		x.RTpropErr = e.RTpropRelErr / float64(e.RTpropSamples)
	}
	if len(e.BgFCT) > 0 {
		var sum float64
		v := make([]float64, len(e.BgFCT))
		for i, d := range e.BgFCT {
			v[i] = ms(d)
			sum += v[i]
		}
		x.BgFCTMeanMs = sum / float64(len(v))
		x.BgFCTP99Ms = metrics.Percentile(sortedCopy(v), 0.99)
	}
	if len(e.SmallFCT) > 0 {
		v := make([]float64, len(e.SmallFCT))
		for i, d := range e.SmallFCT {
			v[i] = ms(d)
		}
		x.SmallFCTP95Ms = metrics.Percentile(sortedCopy(v), 0.95)
	}
	return x
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
