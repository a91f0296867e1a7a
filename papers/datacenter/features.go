package datacenter

// The observation of one agent, per stacked frame. The paper's RL-host
// interface stores flow statistics "in a 2D array with rows representing
// flows and columns representing flow stat features" (section III) and adds
// BBR's BtlBw, RTprop, pacing gain and cwnd gain (section V). Here the rows
// of the agent's own flows are reduced to order-free summaries (sums, means
// and a maximum over the flows active in the interval), so one policy
// serves any number of flows and any subset of them (parameter sharing,
// the "flows" condition). The shared features are the paper's "shared
// sensation": statistics of all controlled flows, which the interface
// collects from every host anyway. Everything is host-side (what `ss`
// reports plus BBR's state); no switch counters.
//
// Units: times are log10 of microseconds, rates are fractions of the
// link's nominal rate (the uplink speed, known to the operator), "queue"
// ratios are ln(1 + x) of a delay expressed in RTprops.
const (
	// FeatActive: fraction of the agent's flows active in the interval.
	FeatActive = iota
	// FeatGoodput: the agent's flows' in-order delivered payload over the
	// payload the bottleneck could carry in the interval.
	FeatGoodput
	// FeatQueue: mean over the agent's flows of ln(1 + (RTT − RTprop)/
	// RTprop), RTT the mean sample in the interval (a queueing estimate).
	FeatQueue
	// FeatQueueMax: the largest of the same.
	FeatQueueMax
	// FeatStale: mean of ln(1 + (minRTT − RTprop)/RTprop) with minRTT the
	// smallest sample of the interval: positive when no packet of the
	// interval saw RTprop (a stale estimate after a path change, or a
	// standing queue).
	FeatStale
	// FeatRTprop: mean log10(RTprop / 1 us).
	FeatRTprop
	// FeatRTT: mean log10(mean RTT / 1 us).
	FeatRTT
	// FeatRetx: retransmitted over sent segments, the agent's flows.
	FeatRetx
	// FeatRTO: ln(1 + retransmission timeouts) of the agent's flows.
	FeatRTO
	// FeatBDP: mean log2(1 + BtlBw·RTprop in segments).
	FeatBDP
	// FeatBtlBw: sum of the flows' BtlBw over the nominal link rate.
	FeatBtlBw
	// FeatInflight: mean ln(1 + inflight/(BtlBw·RTprop)).
	FeatInflight
	// FeatPacingGain and FeatCwndGain: BBR's gains at the end of the
	// interval, mean over the flows.
	FeatPacingGain
	FeatCwndGain
	// FeatProbeRTT: fraction of the flows in PROBE_RTT at the end.
	FeatProbeRTT
	// FeatRTpropAge: mean age of the RTprop sample, seconds (at most 10).
	FeatRTpropAge
	// FeatParamMinRTT: the agent's RTprop window, (ln w − ln 0.1)/ln 100.
	FeatParamMinRTT
	// FeatParamBw: the agent's BtlBw window, ln(rounds)/ln 100.
	FeatParamBw
	// FeatTeamActive: fraction of all controlled flows active.
	FeatTeamActive
	// FeatTeamGoodput: all controlled flows' goodput over capacity.
	FeatTeamGoodput
	// FeatLinkGoodput: every TCP flow's goodput over capacity (the
	// reward's throughput term).
	FeatLinkGoodput
	// FeatTeamQueue: FeatQueue over all controlled flows.
	FeatTeamQueue
	// FeatTeamRetx: FeatRetx over all controlled flows.
	FeatTeamRetx
	// FeatTeamDelayTerm: the reward's delay term over all controlled
	// flows.
	FeatTeamDelayTerm
	// FeatBackground: ln(1 + active background flows).
	FeatBackground

	// NumFeatures is the size of one observation frame.
	NumFeatures
)

// FeatureNames names the features for logs and documentation.
var FeatureNames = [NumFeatures]string{
	"active", "goodput", "queue", "queue_max", "stale", "rtprop_log10us", "rtt_log10us",
	"retx", "rto", "bdp_log2seg", "btlbw", "inflight", "pacing_gain", "cwnd_gain",
	"probe_rtt", "rtprop_age_s", "param_min_rtt", "param_bw",
	"team_active", "team_goodput", "link_goodput", "team_queue", "team_retx", "team_delay_term", "background",
}
