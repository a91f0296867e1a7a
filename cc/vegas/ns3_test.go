package vegas

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
)

func newNS3(t testing.TB, given map[string]float64) *NS3 {
	t.Helper()
	p, err := NS3Spec.Resolve(given)
	if err != nil {
		t.Fatalf("NS3Spec.Resolve(%v): %v", given, err)
	}
	return NewNS3(mss, p)
}

// TestNS3Decision checks TcpVegas's integer arithmetic on hand-made ACKs:
// the base RTT is the handshake's, the RTT fed is the smoothed one, and
// diff = cwnd - trunc(cwnd*base/min).
func TestNS3Decision(t *testing.T) {
	v := newNS3(t, map[string]float64{"iw": 20, "oldest": 0, "first_ack": 0})
	v.SetParam("alpha", 2)
	v.ssthresh = 10 * mss // congestion avoidance
	now := clock.Time(0)
	send := func(n int) {
		for range n {
			v.OnPacketSent(now, mss, 0, false)
		}
	}
	send(20)
	ack := func(rtt time.Duration) {
		now = now.Add(time.Millisecond)
		v.OnAck(now, &cc.Ack{AckedBytes: mss, RTT: rtt, MinRTT: 50 * time.Millisecond})
	}
	// The first ACK ends the first cycle (Reno growth with one sample).
	ack(58 * time.Millisecond)
	// srtt: 50 (the handshake), then 50 + 8/8 = 51 after the 58 ms sample.
	if s := v.Snapshot(); s.BaseRTT != 50*time.Millisecond || s.SRTT != 51*time.Millisecond {
		t.Fatalf("after the first ACK: base %v, srtt %v; want 50ms (handshake), 51ms", s.BaseRTT, s.SRTT)
	}
	// The next cycle ends once the 20 segments outstanding at its start
	// are acknowledged. Its minimum is the smoothed RTT after its first
	// sample, 51 + 7/8 = 51.875 ms; target = trunc(20 x 50/51.875) = 19,
	// diff = 1 < alpha: one more segment.
	for range 19 {
		ack(58 * time.Millisecond)
	}
	if s := v.Snapshot(); s.Diff != 1 || s.MinRTT != 0 || v.cwnd/mss != 21 {
		t.Errorf("diff %d, cwnd %d segments; want 1 and 21", s.Diff, v.cwnd/mss)
	}
	// 150 ms samples: the next full cycle's minimum is far above the base,
	// diff > beta, and the window shrinks by one segment.
	send(21)
	for range 21 {
		ack(150 * time.Millisecond)
	}
	if s := v.Snapshot(); s.Diff <= 4 || v.cwnd/mss != 20 {
		t.Errorf("diff %d, cwnd %d segments after 150 ms samples; want > 4 and 20", s.Diff, v.cwnd/mss)
	}
	if err := v.SetParam("srtt", 2); err == nil {
		t.Errorf("srtt=2 accepted")
	}
}
