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
func init() {
	udpstack.Register(func(spec emu.FlowSpec, o *live.SendOptions) (func(*live.Result), error) {
		f := spec.Flow
		tune, err := deepcc.ParseTuning(f.Target, f.Mode)
		if err != nil {
			return nil, err
		}
		a := agentOptions{tune: tune, linkRate: spec.LinkRate}
		if f.Agent == dcBBR {
			if f.CC.Name != "bbr" {
				return nil, fmt.Errorf("agent %s sets BBR's windows: the flow needs cc: bbr, got %s", dcBBR, f.CC.Name)
			}
			if spec.LinkRate <= 0 {
				return nil, fmt.Errorf("agent %s needs a rate-based bottleneck: it observes rates as fractions of the link's nominal rate", dcBBR)
			}
		}
		if f.Agent == "marlin" || f.Agent == dcBBR || f.Agent == "deepcc" || strings.HasPrefix(f.Agent, "deepcc:") {
			o.CC = f.Agent
		} else {
			a.addr = f.Agent
		}
		return attachAgent(context.Background(), o, a)
	})
}
