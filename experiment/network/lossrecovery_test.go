package network

import (
	"testing"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/transport/tcp"
)

// TestApplyLossRecovery: each loss-recovery choice a transport section
// sets reaches the sender's configuration both ways (a flow's setting
// undoes a scenario-wide one), and what it leaves unset keeps the value
// already there.
func TestApplyLossRecovery(t *testing.T) {
	var c tcp.Config
	ApplyLossRecovery(&c, &scenario.Transport{PRR: "linux", SRTTSample: "oldest", LostRetransmissions: "rack", RACKTimer: "linux", Pacing: "linux"})
	if !c.LinuxPRR || !c.OldestRTTSample || !c.RACKRetransmissions || !c.LinuxRACKTimer || !c.LinuxPacing {
		t.Fatalf("prr linux, srtt_sample oldest, lost_retransmissions rack, rack_timer linux, pacing linux: got %+v", c)
	}
	ApplyLossRecovery(&c, &scenario.Transport{})
	if !c.LinuxPRR || !c.OldestRTTSample || !c.RACKRetransmissions || !c.LinuxRACKTimer || !c.LinuxPacing {
		t.Errorf("an empty section changed the configuration: %+v", c)
	}
	ApplyLossRecovery(&c, &scenario.Transport{PRR: "rfc6937", SRTTSample: "newest", LostRetransmissions: "gap", RACKTimer: "earliest", Pacing: "segment"})
	if c.LinuxPRR || c.OldestRTTSample || c.RACKRetransmissions || c.LinuxRACKTimer || c.LinuxPacing {
		t.Errorf("prr rfc6937, srtt_sample newest, lost_retransmissions gap, rack_timer earliest, pacing segment: got %+v", c)
	}
}
