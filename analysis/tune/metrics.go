package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cclab/cclab/experiment"
)

// The metric namespace: what --objective and metric constraints may name.
//
// Flow metrics exist once per measured flow (experiment.FlowResult). A bare
// flow metric name is its mean over the measured flows; the prefixes sum_,
// min_ and max_ aggregate differently, and flowN. (N counting measured flows
// from 0, as `cclab run` lists them) picks one flow. Run metrics describe the
// run as a whole. Every value is one simulation's; a candidate's score is the
// mean over the cases (scenarios, traces, pieces, seeds) it is run on.

// flowMetric reads one number from a flow's summary. ok is false when the
// value does not exist for this run (a flow that never finished has no
// completion time).
type flowMetric struct {
	name, doc string
	get       func(f *experiment.FlowResult) (v float64, ok bool)
}

var flowMetrics = []flowMetric{
	{"goodput_mbps", "bytes delivered in order x 8 / active time, Mbit/s", func(f *experiment.FlowResult) (float64, bool) { return f.GoodputMbps, true }},
	{"bytes_delivered", "bytes delivered in order", func(f *experiment.FlowResult) (float64, bool) { return float64(f.BytesDelivered), true }},
	{"fct_s", "flow completion time, s (undefined while a flow is unfinished)", func(f *experiment.FlowResult) (float64, bool) {
		if f.FCT == nil {
			return math.NaN(), false
		}
		return *f.FCT, true
	}},
	{"retransmissions", "segments retransmitted", func(f *experiment.FlowResult) (float64, bool) { return float64(f.Retransmissions), true }},
	{"rtos", "retransmission timeouts", func(f *experiment.FlowResult) (float64, bool) { return float64(f.RTOs), true }},
	{"drops", "packets dropped by the bottleneck queue", func(f *experiment.FlowResult) (float64, bool) { return float64(f.Drops), true }},
	{"losses", "packets erased by loss models", func(f *experiment.FlowResult) (float64, bool) { return float64(f.Losses), true }},
	{"rtt_min_ms", "smallest RTT sample, ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTMinMs, true }},
	{"rtt_mean_ms", "mean RTT, ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTMeanMs, true }},
	{"rtt_p50_ms", "median RTT, ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTP50Ms, true }},
	{"rtt_p95_ms", "95th-percentile RTT, ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTP95Ms, true }},
	{"rtt_max_ms", "largest RTT sample, ms", func(f *experiment.FlowResult) (float64, bool) { return f.RTTMaxMs, true }},
	{"qdelay_mean_ms", "mean queueing delay (RTT minus the flow's minimum RTT), ms", func(f *experiment.FlowResult) (float64, bool) { return f.QdelayMeanMs, true }},
	{"qdelay_p95_ms", "95th-percentile queueing delay, ms", func(f *experiment.FlowResult) (float64, bool) { return f.QdelayP95Ms, true }},
	{"rti", "the flow's RTT Transition Impact (needs a bottleneck schedule)", func(f *experiment.FlowResult) (float64, bool) {
		if f.RTI == nil {
			return math.NaN(), false
		}
		return *f.RTI, true
	}},
}

// runMetric reads one number from a run's summary.
type runMetric struct {
	name, doc string
	get       func(r *experiment.Result) (v float64, ok bool)
}

var runMetrics = []runMetric{
	{"jain", "Jain's fairness index over the measured flows' goodputs", func(r *experiment.Result) (float64, bool) {
		if r.Jain == nil {
			return 0, false
		}
		return *r.Jain, true
	}},
	{"total_goodput_mbps", "the measured flows' delivered bytes over the whole run, Mbit/s (at most the link's rate; sum_goodput_mbps adds each flow's goodput over its own active time)", func(r *experiment.Result) (float64, bool) {
		return r.TotalGoodputMbps(), true
	}},
	{"utilization", "bottleneck bytes sent / bytes it could have sent", func(r *experiment.Result) (float64, bool) {
		return link0(r, func(l experiment.LinkResult) float64 { return l.Utilization })
	}},
	{"link_drops", "packets the bottleneck queue dropped (all traffic)", func(r *experiment.Result) (float64, bool) {
		return link0(r, func(l experiment.LinkResult) float64 { return float64(l.Drops) })
	}},
	{"link_losses", "packets the bottleneck's loss model erased (all traffic)", func(r *experiment.Result) (float64, bool) {
		return link0(r, func(l experiment.LinkResult) float64 { return float64(l.Losses) })
	}},
	{"background_share", "fraction of the bottleneck's capacity background traffic took", func(r *experiment.Result) (float64, bool) {
		return link0(r, func(l experiment.LinkResult) float64 { return l.BackgroundShare })
	}},
}

func link0(r *experiment.Result, f func(experiment.LinkResult) float64) (float64, bool) {
	if len(r.Links) == 0 {
		return math.NaN(), false
	}
	return f(r.Links[0]), true
}

// aggregations of a flow metric over the measured flows; "" is the mean.
var aggregations = []string{"", "sum_", "min_", "max_"}

// Metric is one number extracted from a run's summary (experiment.Result),
// resolved from a name of the metric namespace by LookupMetric.
type Metric struct {
	// Name is the name as given, e.g. "goodput_mbps" or "flow0.rtt_p95_ms".
	Name string
	// Doc says what the value is.
	Doc string
	// MayBeUndefined is true for metrics that some runs lack (a completion
	// time while a flow is unfinished, RTT Transition Impact without a
	// schedule, a flow index beyond the measured flows).
	MayBeUndefined bool

	get func(r *experiment.Result) (float64, error)
}

// Value returns the metric of one run. The error says why the value is
// undefined for this run.
func (m Metric) Value(r *experiment.Result) (float64, error) { return m.get(r) }

// LookupMetric resolves a metric name, or returns an error listing the
// accepted names.
func LookupMetric(name string) (Metric, error) {
	for _, rm := range runMetrics {
		if rm.name == name {
			return Metric{Name: name, Doc: rm.doc, get: func(r *experiment.Result) (float64, error) {
				v, ok := rm.get(r)
				if !ok {
					return v, fmt.Errorf("%s is undefined: the run has no bottleneck link", rm.name)
				}
				return v, nil
			}}, nil
		}
	}
	if name == "rti" {
		// The run-level RTI is the mean of the flows'; one definition.
		return Metric{Name: name, Doc: "mean RTT Transition Impact of the measured flows (needs a bottleneck schedule)", MayBeUndefined: true,
			get: func(r *experiment.Result) (float64, error) {
				if r.RTI == nil {
					return math.NaN(), fmt.Errorf("rti is undefined: the bottleneck has no schedule")
				}
				return *r.RTI, nil
			}}, nil
	}
	// flowN.METRIC: one flow.
	if head, rest, ok := strings.Cut(name, "."); ok && strings.HasPrefix(head, "flow") {
		idx, err := strconv.Atoi(head[len("flow"):])
		fm, found := findFlowMetric(rest)
		if err == nil && idx >= 0 && found && head == "flow"+strconv.Itoa(idx) {
			return Metric{Name: name, Doc: fm.doc + fmt.Sprintf(" (measured flow %d)", idx), MayBeUndefined: true,
				get: func(r *experiment.Result) (float64, error) {
					if idx >= len(r.Flows) {
						return math.NaN(), fmt.Errorf("%s is undefined: the run has %d measured flows", name, len(r.Flows))
					}
					v, ok := fm.get(&r.Flows[idx])
					if !ok {
						return v, fmt.Errorf("%s is undefined for flow %s in this run", rest, r.Flows[idx].Name)
					}
					return v, nil
				}}, nil
		}
		return Metric{}, unknownMetric(name)
	}
	for _, agg := range aggregations[1:] {
		if base, ok := strings.CutPrefix(name, agg); ok {
			if fm, found := findFlowMetric(base); found {
				return flowAggregate(name, agg, fm), nil
			}
		}
	}
	if fm, found := findFlowMetric(name); found {
		return flowAggregate(name, "", fm), nil
	}
	return Metric{}, unknownMetric(name)
}

func findFlowMetric(name string) (flowMetric, bool) {
	for _, fm := range flowMetrics {
		if fm.name == name {
			return fm, true
		}
	}
	return flowMetric{}, false
}

func flowAggregate(name, agg string, fm flowMetric) Metric {
	doc := map[string]string{"": "mean over measured flows of ", "sum_": "sum over measured flows of ", "min_": "smallest over measured flows of ", "max_": "largest over measured flows of "}[agg] + fm.doc
	undefined := fm.name == "fct_s" || fm.name == "rti"
	return Metric{Name: name, Doc: doc, MayBeUndefined: undefined, get: func(r *experiment.Result) (float64, error) {
		if len(r.Flows) == 0 {
			return math.NaN(), fmt.Errorf("%s is undefined: the run has no measured flows", name)
		}
		var acc float64
		switch agg {
		case "min_":
			acc = math.Inf(1)
		case "max_":
			acc = math.Inf(-1)
		}
		for i := range r.Flows {
			v, ok := fm.get(&r.Flows[i])
			if !ok {
				return math.NaN(), fmt.Errorf("%s is undefined for flow %s in this run", fm.name, r.Flows[i].Name)
			}
			switch agg {
			case "min_":
				acc = min(acc, v)
			case "max_":
				acc = max(acc, v)
			default:
				acc += v
			}
		}
		if agg == "" {
			acc /= float64(len(r.Flows))
		}
		return acc, nil
	}}
}

// MetricNames returns every name of the namespace except the per-flow
// flowN. forms: the flow metrics (means), their sum_, min_ and max_ forms,
// then the run metrics.
func MetricNames() []string {
	var names []string
	for _, agg := range aggregations {
		for _, fm := range flowMetrics {
			names = append(names, agg+fm.name)
		}
	}
	for _, rm := range runMetrics {
		names = append(names, rm.name)
	}
	return names
}

// MetricHelp describes the namespace compactly, for error messages.
func MetricHelp() string {
	fl := make([]string, len(flowMetrics))
	for i, fm := range flowMetrics {
		fl[i] = fm.name
	}
	rl := make([]string, len(runMetrics))
	for i, rm := range runMetrics {
		rl[i] = rm.name
	}
	return "flow metrics (mean over the measured flows; prefix sum_, min_ or max_ to aggregate otherwise, or flowN. for flow N alone): " +
		strings.Join(fl, ", ") + "; run metrics: " + strings.Join(rl, ", ")
}

func unknownMetric(name string) error {
	return fmt.Errorf("unknown metric %q; accepted: %s", name, MetricHelp())
}
