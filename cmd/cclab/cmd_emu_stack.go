package main

import (
	"context"
	"strings"

	"github.com/cclab/cclab/emu/udpstack"
	"github.com/cclab/cclab/experiment/live"
)

// `stack: cclab` flows under `cclab emu` run transport/udp; their
// `agent:` (marlin, deepcc[:GOAL], or an agent's address) is wired like
// `cclab send`'s.
func init() {
	udpstack.Register(func(agent string, o *live.SendOptions) (func(*live.Result), error) {
		if agent == "marlin" || agent == "deepcc" || strings.HasPrefix(agent, "deepcc:") {
			o.CC = agent
			return attachAgent(context.Background(), o, "", "")
		}
		return attachAgent(context.Background(), o, agent, "")
	})
}
