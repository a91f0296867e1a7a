package fixed

import (
	"testing"

	"github.com/cclab/cclab/cc"
)

// TestNeverShrinks drives the Mockets-style window through every loss
// signal: it must not move, and only an explicit set changes it.
func TestNeverShrinks(t *testing.T) {
	a, err := cc.New("fixed", 1448, map[string]float64{"window": 126_000})
	if err != nil {
		t.Fatal(err)
	}
	f := a.(*Fixed)
	f.OnAck(0, &cc.Ack{AckedBytes: 50_000, CwndLimited: true})
	f.OnCongestionEvent(0, &cc.LossEvent{LostBytes: 20_000, PriorInFlight: 126_000})
	f.OnRecoveryEnd(0)
	f.OnRetransmissionTimeout(0, 0)
	f.OnRetransmissionTimeout(0, 0)
	if w := f.CongestionWindow(); w != 126_000 {
		t.Errorf("window after losses and timeouts: %d, want 126000", w)
	}
	f.SetCongestionWindow(0, 9_500)
	if w := f.CongestionWindow(); w != 9_500 {
		t.Errorf("after SetCongestionWindow(9500): %d", w)
	}
	f.SetCongestionWindow(0, 10)
	if w := f.CongestionWindow(); w != 1448 {
		t.Errorf("a window below one segment: %d, want the 1448-byte floor", w)
	}
	if err := f.SetParam("window", 0); err == nil {
		t.Errorf("window 0 accepted")
	}
}
