package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/deepcc"
	"github.com/cclab/cclab/rpc/agent"
	"github.com/cclab/cclab/transport/udp"
)

// agentOptions are the agent flags of `cclab send` (and the keys of a
// `stack: cclab` flow under `cclab emu`).
type agentOptions struct {
	// addr is --agent: a policy served by `cclab agent serve`.
	addr string
	// policy is --policy: a policy file instead of the shipped one.
	policy string
	// tune is DeepCC's online goal tuner (--target, --mode), nil for a
	// fixed goal.
	tune *deepcc.LiveTuning
	// linkRate is the bottleneck's nominal rate (--link-rate), which the
	// data-centre tuner's observation needs.
	linkRate units.Bandwidth
}

// attachAgent wires an agent into a live send: --agent ADDR (a policy
// served by `cclab agent serve`), --cc marlin (the shipped MARLIN policy,
// or --policy FILE, in process), --cc deepcc[:GOAL] or --cc dc-bbr. The
// returned function adds the agent's counters to the result and closes
// the session.
func attachAgent(ctx context.Context, o *live.SendOptions, a agentOptions) (func(*live.Result), error) {
	agentAddr, policyFile := a.addr, a.policy
	if agentAddr == "" && strings.HasPrefix(o.CC, "deepcc") {
		return attachDeepCC(o, policyFile, a.tune)
	}
	if a.tune != nil {
		return nil, usagef("--target and --mode need --cc deepcc")
	}
	if agentAddr == "" && isDCBBR(o.CC) {
		return attachDCBBR(o, policyFile, a.linkRate)
	}
	if a.linkRate > 0 && agentAddr == "" {
		return nil, usagef("--link-rate needs --cc %s or --agent", dcBBR)
	}
	if agentAddr == "" && o.CC != "marlin" {
		if policyFile != "" {
			return nil, usagef("--policy needs --cc marlin, deepcc or %s", dcBBR)
		}
		return func(*live.Result) {}, nil
	}
	var h *agent.Host
	label := "marlin"
	if agentAddr != "" {
		if policyFile != "" {
			return nil, usagef("--policy is for --cc marlin in process; the agent at --agent serves its own")
		}
		var err error
		if h, err = agent.DialHost(ctx, agentAddr); err != nil {
			return nil, err
		}
		label = h.Kind() + "@" + agentAddr
	} else {
		spec := "marlin"
		if policyFile != "" {
			spec = policyFile
		}
		s, err := agent.LoadPolicy(spec, agent.KindMarlin)
		if err != nil {
			return nil, err
		}
		h = agent.NewLocalHost(s)
	}
	mss := o.TCP.MSS
	if mss == 0 {
		mss = udp.DefaultMSS
	}
	if h.Kind() == agent.KindDCBBR && a.linkRate <= 0 {
		h.Close()
		return nil, usagef("the agent at %s serves a %s policy: give --link-rate RATE, the bottleneck's nominal rate", agentAddr, dcBBR)
	}
	alg, err := h.Controller(mss, agent.FlowConfig{Params: o.Params, LinkRate: a.linkRate})
	if err != nil {
		h.Close()
		return nil, err
	}
	o.Alg, o.CCLabel = alg, label
	if o.TCP.AckInterval == 0 && h.Kind() == agent.KindMarlin {
		o.TCP.AckInterval = agent.MarlinAckInterval
	}
	o.Attach = h.Attach
	return func(r *live.Result) {
		h.Close()
		if r != nil {
			r.Extra = h.Summary()
		}
	}, nil
}

// attachDeepCC runs the DeepCC policy in process with a fixed goal: --cc
// deepcc (goal g2), deepcc:g1 .. deepcc:g5 (the evaluation's goals), or
// deepcc:T,D,L (weights).
func attachDeepCC(o *live.SendOptions, policyFile string, tune *deepcc.LiveTuning) (func(*live.Result), error) {
	name, g, _ := strings.Cut(o.CC, ":")
	if name != "deepcc" {
		return nil, usagef("--cc %s: want deepcc or deepcc:GOAL", o.CC)
	}
	goal, err := parseDeepCCGoal(g)
	if err != nil {
		return nil, err
	}
	file := policyFile
	if file == "" {
		file = deepcc.ShippedPolicyPath
	}
	p, err := deepcc.LoadPolicy(file)
	if err != nil {
		return nil, err
	}
	a, err := deepcc.NewLiveAgent(p, goal)
	if err != nil {
		return nil, err
	}
	if tune != nil {
		if err := a.SetTuning(*tune); err != nil {
			return nil, usagef("%v", err)
		}
	}
	mss := o.TCP.MSS
	if mss == 0 {
		mss = udp.DefaultMSS
	}
	if o.Alg, err = deepcc.Controller(mss); err != nil {
		return nil, err
	}
	o.CCLabel = "deepcc" + goal.String()
	o.Attach = a.Attach
	return func(r *live.Result) {
		if r != nil {
			r.Extra = map[string]float64{"agent_steps": float64(a.Steps)}
			if tune != nil {
				tunedExtra(a, r)
			}
		}
	}, nil
}

func parseDeepCCGoal(g string) (deepcc.Goal, error) {
	if g == "" {
		g = "g2"
	}
	for _, ng := range deepcc.DefaultGoals {
		if ng.Name == g {
			return ng.Goal, nil
		}
	}
	parts := strings.Split(g, ",")
	if len(parts) != 3 {
		return deepcc.Goal{}, usagef("deepcc goal %q: want g1..g5 or three weights T,D,L", g)
	}
	var w [3]float64
	for i, s := range parts {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return deepcc.Goal{}, usagef("deepcc goal %q: %q is not a number", g, s)
		}
		w[i] = x
	}
	goal, err := deepcc.NewGoal(w[0], w[1], w[2])
	if err != nil {
		return deepcc.Goal{}, usagef("%v", err)
	}
	return goal, nil
}
