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
// the smoothed RTT starts at the handshake's, Vegas is fed it after each
// sample (so the base RTT is its first value after the first data ACK),
// and diff = cwnd - trunc(cwnd*base/min).
func TestNS3Decision(t *testing.T) {
	v := newNS3(t, map[string]float64{"iw": 20, "oldest": 0, "ms_timestamps": 0})
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
	// srtt: 50 (the handshake), then 50 + 8/8 = 51 after the 58 ms
	// sample, and Vegas's first (and base) RTT is 51.
	if s := v.Snapshot(); s.BaseRTT != 51*time.Millisecond || s.SRTT != 51*time.Millisecond {
		t.Fatalf("after the first ACK: base %v, srtt %v; want 51ms, 51ms", s.BaseRTT, s.SRTT)
	}
	// The next cycle ends once the 20 segments outstanding at its start
	// are acknowledged. Its minimum is the smoothed RTT after its first
	// sample, 51 + 7/8 = 51.875 ms; target = trunc(20 x 51/51.875) = 19,
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

// TestNS3Timestamps replays the start of ns-3's trace of bench/ns3's
// single-flow run (NS_LOG=TcpVegas): the SYN-ACK arrives at 50.0928 ms, the
// first data segment, sent then, is acknowledged alone at 101.381 ms, the
// next two together at 103.784 ms. ns-3's millisecond timestamps give a
// 50 ms handshake sample and 51 and 53 ms data samples (103 - 50: the
// echo is the older segment's), so TcpVegas::PktsAcked logs 50.125 ms then
// 50.4844 ms, and its base RTT is 50.125 ms.
func TestNS3Timestamps(t *testing.T) {
	v := newNS3(t, nil)
	at := func(us float64) clock.Time { return clock.Time(time.Duration(us * float64(time.Microsecond))) }
	for range 3 {
		v.OnPacketSent(at(50092.8), mss, 0, false)
	}
	v.OnAck(at(101381), &cc.Ack{AckedBytes: mss, RTT: 51288200 * time.Nanosecond, MinRTT: 50092800 * time.Nanosecond})
	if s := v.Snapshot(); s.SRTT != 50125*time.Microsecond || s.BaseRTT != s.SRTT {
		t.Fatalf("after the first ACK: srtt %v, base %v; want 50.125ms for both (ns-3's log)", s.SRTT, s.BaseRTT)
	}
	// The transport times the newest segment (53.69 ms); ns-3 echoes the
	// oldest: 103 - 50 = 53 ms, srtt 50.125 + 2.875/8 = 50.484375 ms.
	v.OnAck(at(103784), &cc.Ack{AckedBytes: 2 * mss, RTT: 53691200 * time.Nanosecond, MinRTT: 50092800 * time.Nanosecond})
	if s := v.Snapshot(); s.SRTT != 50484375*time.Nanosecond || s.BaseRTT != 50125*time.Microsecond {
		t.Errorf("after the second ACK: srtt %v, base %v; want 50.484375ms (ns-3: 50.4844), 50.125ms", s.SRTT, s.BaseRTT)
	}
}
