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
	ApplyLossRecovery(&c, &scenario.Transport{PRR: "linux", SRTTSample: "oldest", LostRetransmissions: "rack", RACKTimer: "linux", Pacing: "linux", TLPTimer: "linux"})
	if !c.LinuxPRR || !c.OldestRTTSample || !c.RACKRetransmissions || !c.LinuxRACKTimer || !c.LinuxPacing || !c.LinuxTLPTimer {
		t.Fatalf("prr linux, srtt_sample oldest, lost_retransmissions rack, rack_timer linux, pacing linux, tlp_timer linux: got %+v", c)
	}
	ApplyLossRecovery(&c, &scenario.Transport{})
	if !c.LinuxPRR || !c.OldestRTTSample || !c.RACKRetransmissions || !c.LinuxRACKTimer || !c.LinuxPacing || !c.LinuxTLPTimer {
		t.Errorf("an empty section changed the configuration: %+v", c)
	}
	ApplyLossRecovery(&c, &scenario.Transport{PRR: "rfc6937", SRTTSample: "newest", LostRetransmissions: "gap", RACKTimer: "earliest", Pacing: "segment", TLPTimer: "rto_first"})
	if c.LinuxPRR || c.OldestRTTSample || c.RACKRetransmissions || c.LinuxRACKTimer || c.LinuxPacing || c.LinuxTLPTimer {
		t.Errorf("prr rfc6937, srtt_sample newest, lost_retransmissions gap, rack_timer earliest, pacing segment, tlp_timer rto_first: got %+v", c)
	}
}
