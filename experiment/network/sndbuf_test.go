package network

import (
	"testing"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

// TestSendBufferOverrides: a flow's own send_buffer or pending_queue
// replaces the scenario's, whichever of the two the scenario set, so that
// the sender never gets both (which its configuration refuses).
func TestSendBufferOverrides(t *testing.T) {
	linux := scenario.Transport{SendBuffer: "linux"}
	queue := scenario.Transport{PendingQueue: scenario.Size{Raw: "64KB", V: 64000}}
	none := scenario.Transport{SendBuffer: "none"}
	for _, c := range []struct {
		name      string
		def       scenario.Transport
		over      *scenario.Transport
		wantLinux bool
		wantQueue units.Bytes
	}{
		{"scenario linux", linux, nil, true, 0},
		{"scenario queue", queue, nil, false, 64000},
		{"linux over a queue", queue, &linux, true, 0},
		{"queue over linux", linux, &queue, false, 64000},
		{"none over linux", linux, &none, false, 0},
		{"none over a queue", queue, &none, false, 64000},
	} {
		cfg := transportConfig(c.def, c.over)
		if cfg.SendBufferLinux != c.wantLinux || cfg.PendingQueue != c.wantQueue {
			t.Errorf("%s: send buffer linux %v, pending queue %d; want %v, %d", c.name, cfg.SendBufferLinux, cfg.PendingQueue, c.wantLinux, c.wantQueue)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
