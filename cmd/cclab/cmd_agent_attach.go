package main

import (
	"context"

	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/rpc/agent"
	"github.com/cclab/cclab/transport/udp"
)

// attachAgent wires an agent into a live send: --agent ADDR (a policy
// served by `cclab agent serve`) or --cc marlin (the shipped MARLIN policy,
// or --policy FILE, in process). The returned function adds the agent's
// counters to the result and closes the session.
func attachAgent(ctx context.Context, o *live.SendOptions, agentAddr, policyFile string) (func(*live.Result), error) {
	if agentAddr == "" && o.CC != "marlin" {
		if policyFile != "" {
			return nil, usagef("--policy needs --cc marlin")
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
	alg, err := h.Controller(mss)
	if err != nil {
		h.Close()
		return nil, err
	}
	o.Alg, o.CCLabel = alg, label
	if o.TCP.AckInterval == 0 {
		o.TCP.AckInterval = agent.MarlinAckInterval
	}
	o.Attach = h.Attach
	return func(r *live.Result) {
		h.Close()
		if r != nil {
			r.Extra = h.Stats.Map()
		}
	}, nil
}
