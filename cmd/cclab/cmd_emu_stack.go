//go:build linux

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/emu/udpstack"
	"github.com/cclab/cclab/experiment/live"
	"github.com/cclab/cclab/papers/deepcc"
)

// `stack: cclab` flows under `cclab emu` run transport/udp; their
// `agent:` (marlin, deepcc[:GOAL] with its target or mode, dc-bbr, or an
// agent's address) is wired like `cclab send`'s.
func init() { udpstack.Register(emuAgentHook) }

// emuAgentHook configures a `stack: cclab` flow's agent.
func emuAgentHook(spec emu.FlowSpec, o *live.SendOptions) (func(*live.Result), error) {
	f := spec.Flow
	tune, err := deepcc.ParseTuning(f.Target, f.Mode)
	if err != nil {
		return nil, err
	}
	a := agentOptions{tune: tune}
	if isDCBBR(f.Agent) {
		a.linkRate = spec.LinkRate
		if f.CC.Name != "bbr" {
			return nil, fmt.Errorf("agent %s sets BBR's windows: the flow needs cc: bbr, got %s", dcBBR, f.CC.Name)
		}
		if spec.LinkRate <= 0 {
			return nil, fmt.Errorf("agent %s needs a rate-based bottleneck: it observes rates as fractions of the link's nominal rate", dcBBR)
		}
	}
	if f.Agent == "marlin" || isDCBBR(f.Agent) || f.Agent == "deepcc" || strings.HasPrefix(f.Agent, "deepcc:") {
		o.CC = f.Agent
	} else {
		// An agent at an address may serve a data-centre policy, whose
		// observation needs the link's rate.
		a.addr, a.linkRate = f.Agent, spec.LinkRate
	}
	return attachAgent(context.Background(), o, a)
}
