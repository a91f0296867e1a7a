package dctcp

import (
	"testing"

	"github.com/cclab/cclab/cc"
)

const mss = 1448

func newDCTCP(t *testing.T) *DCTCP {
	t.Helper()
	p, err := Spec.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(mss, p)
}

// TestAlphaUpdate follows dctcp_update_alpha by hand: alpha starts at
// 1024/1024; each window's update is alpha = alpha - alpha>>4 + (marked
// bytes << 6) / acknowledged bytes, once SND.UNA reaches the SND.NXT of
// the previous update.
func TestAlphaUpdate(t *testing.T) {
	d := newDCTCP(t)
	// The first ACK ends the first window (dctcp_init's next_seq is
	// SND.NXT before any data): no marks, alpha decays once.
	d.OnAckECN(0, 2*mss, 20*mss, false)
	if got := d.alpha; got != 1024-64 {
		t.Fatalf("alpha %d after an unmarked first ACK, want 960", got)
	}
	// A window of 18 segments, a third of them echoed: no update until
	// SND.UNA reaches 20 segments.
	for una := int64(4); una <= 20; una += 2 {
		d.OnAckECN(0, una*mss, 40*mss, una%6 == 0)
		if una < 20 && d.alpha != 960 {
			t.Fatalf("alpha moved to %d before the window ended (una %d)", d.alpha, una)
		}
	}
	// Marked: the ACKs to 6, 12, 18 (2 segments each) = 6 of 18 segments.
	want := uint32(960 - 60 + (6*mss<<6)/(18*mss))
	if d.alpha != want {
		t.Fatalf("alpha %d, want %d", d.alpha, want)
	}
	// A duplicate ACK counts one segment.
	d.OnAckECN(0, 20*mss, 40*mss, true)
	if d.ackedTotal != mss || d.ackedE != mss {
		t.Fatalf("a duplicate ACK counted %d bytes (%d marked), want one segment", d.ackedTotal, d.ackedE)
	}
	// Unmarked windows decay alpha to zero (min_not_zero: the last step
	// takes what is left).
	una := int64(20)
	for range 200 {
		una += 20
		d.OnAckECN(0, una*mss, (una+20)*mss, false)
	}
	if d.alpha != 0 {
		t.Fatalf("alpha %d after 200 unmarked windows, want 0", d.alpha)
	}
}

// TestReductions: an echo cuts the window by alpha/2 in whole segments
// (dctcp_ssthresh), a loss by half (dctcp_react_to_loss), also when it
// comes during the echo's reduction.
func TestReductions(t *testing.T) {
	d := newDCTCP(t)
	d.SetCwnd(100 * mss)
	d.alpha = 512 // a half
	d.OnCongestionEvent(0, &cc.LossEvent{ECN: true})
	if got := d.CongestionWindow(); got != 75*mss {
		t.Fatalf("window %d segments after an echo with alpha 1/2, want 100 - 100*512/2048 = 75", got/mss)
	}
	d.OnRecoveryEnd(0)
	d.alpha = 0
	d.OnCongestionEvent(0, &cc.LossEvent{ECN: true})
	if got := d.CongestionWindow(); got != 75*mss {
		t.Fatalf("window %d segments after an echo with alpha 0, want 75 (no cut)", got/mss)
	}
	d.OnCongestionEvent(0, &cc.LossEvent{InCWR: true, LostBytes: mss})
	if got := d.CongestionWindow(); got != 37*mss {
		t.Fatalf("window %d segments after a loss in the reduction, want 75>>1 = 37", got/mss)
	}
	d.OnRecoveryEnd(0)
	d.SetCwnd(3 * mss)
	d.alpha = 1024
	d.OnCongestionEvent(0, &cc.LossEvent{ECN: true})
	if got := d.CongestionWindow(); got != 2*mss {
		t.Fatalf("window %d segments after an echo from 3, want the floor of 2", got/mss)
	}
}
