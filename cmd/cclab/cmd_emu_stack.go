package main

import (
	"context"

	"github.com/cclab/cclab/emu/udpstack"
	"github.com/cclab/cclab/experiment/live"
)

// `stack: cclab` flows under `cclab emu` run transport/udp; their
// `agent:` (marlin, or an agent's address) is wired like `cclab send`'s.
func init() {
	udpstack.Register(func(agent string, o *live.SendOptions) (func(*live.Result), error) {
		if agent == "marlin" {
			o.CC = "marlin"
			return attachAgent(context.Background(), o, "", "")
		}
		return attachAgent(context.Background(), o, agent, "")
	})
}
