package udpstack

import (
	"testing"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/transport/tcp"
)

// TestApplyTransportCarriesSenderChoices: a cclab-stack flow's transport
// section reaches the UDP sender as it reaches the simulator's, the
// loss-recovery choices included, and an empty section changes nothing.
func TestApplyTransportCarriesSenderChoices(t *testing.T) {
	s, err := scenario.Parse([]byte(`
name: x
bottleneck: {rate: 1Mbps, delay: 10ms}
flows: [{name: a, cc: cubic, stack: cclab, bytes: 100KB, transport: {mss: 1200B, min_rto: 300ms, delayed_ack: false, rack: false, tlp: false, frto: false, rto: rfc6298, lost_retransmissions: rack}}]
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c tcp.Config
	applyTransport(&c, s.Flows[0].Transport)
	want := tcp.Config{MSS: 1200, MinRTO: 300 * time.Millisecond, NoDelayedAck: true, NoRACK: true, NoTLP: true, NoFRTO: true, RFC6298RTO: true, RACKRetransmissions: true}
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	var empty tcp.Config
	applyTransport(&empty, &scenario.Transport{})
	if empty != (tcp.Config{}) {
		t.Errorf("an empty transport section set %+v", empty)
	}
}
