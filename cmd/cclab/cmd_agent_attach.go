package main

import "github.com/cclab/cclab/experiment/live"

// attachAgent wires an agent into a live send: --agent ADDR (a remote
// policy over gRPC) or --cc marlin (the MARLIN policy in process).
func attachAgent(o *live.SendOptions, agentAddr, policy string) error {
	if agentAddr != "" || o.CC == "marlin" || policy != "" {
		return usagef("--agent, --policy and --cc marlin are not available yet")
	}
	return nil
}
