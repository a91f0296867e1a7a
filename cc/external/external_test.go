package external

import (
	"testing"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/units"
)

func TestExternal(t *testing.T) {
	a, err := cc.New("external", 1000, map[string]float64{"iw": 4, "min_window": 2, "max_window": 50_000})
	if err != nil {
		t.Fatal(err)
	}
	e := a.(*External)
	if e.CongestionWindow() != 4000 {
		t.Errorf("initial window %d, want 4000", e.CongestionWindow())
	}
	// The controller itself reacts to nothing.
	e.OnAck(0, &cc.Ack{AckedBytes: 4000, CwndLimited: true})
	e.OnCongestionEvent(0, &cc.LossEvent{LostBytes: 1000})
	e.OnRetransmissionTimeout(0, 0)
	if e.CongestionWindow() != 4000 {
		t.Errorf("window moved on its own to %d", e.CongestionWindow())
	}
	for _, tc := range []struct{ set, want units.Bytes }{
		{30_000, 30_000},
		{1, 2000},         // min_window: 2 segments
		{1 << 30, 50_000}, // max_window
		{-5, 2000},        // nonsense from an agent is clamped, not trusted
	} {
		e.SetCongestionWindow(0, tc.set)
		if got := e.CongestionWindow(); got != tc.want {
			t.Errorf("SetCongestionWindow(%d) gave %d, want %d", tc.set, got, tc.want)
		}
	}
	e.SetPacingRate(0, 5*units.Mbps)
	if e.PacingRate() != 5*units.Mbps {
		t.Errorf("pacing rate %v", e.PacingRate())
	}
	e.SetPacingRate(0, -1)
	if e.PacingRate() != 0 {
		t.Errorf("negative pacing rate kept: %v", e.PacingRate())
	}
}
