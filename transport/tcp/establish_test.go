package tcp

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// establishRecorder is a controller that records cc.Establisher calls and
// what it had seen when called.
type establishRecorder struct {
	cc.Algorithm
	calls      int
	at         clock.Time
	srtt, min  time.Duration
	sentBefore int
	sent       int
}

func (r *establishRecorder) OnEstablished(now clock.Time, srtt, minRTT time.Duration) {
	r.calls++
	r.at, r.srtt, r.min, r.sentBefore = now, srtt, minRTT, r.sent
}

func (r *establishRecorder) OnPacketSent(now clock.Time, b, inFlight units.Bytes, retx bool) {
	r.sent++
	r.Algorithm.OnPacketSent(now, b, inFlight, retx)
}

// TestEstablishedWithHandshakeRTT: a controller that implements
// cc.Establisher is told once, when the SYN-ACK arrives and before the
// first data segment, the RTT the handshake measured (as Linux initialises
// its controller in tcp_init_transfer after the SYN-ACK's RTT sample).
func TestEstablishedWithHandshakeRTT(t *testing.T) {
	rec := &establishRecorder{Algorithm: reno(1448)}
	h := newHarness(t, Config{Bytes: 50 * 1448}, rec, 10*units.Mbps, 50*time.Millisecond)
	h.run(t, 5*time.Second)
	if h.rcv.DeliveredBytes != 50*1448 {
		t.Fatalf("delivered %d", h.rcv.DeliveredBytes)
	}
	if rec.calls != 1 {
		t.Fatalf("OnEstablished called %d times, want once", rec.calls)
	}
	// 100 ms of propagation plus the SYN and SYN-ACK's serialisation.
	if rec.min < 100*time.Millisecond || rec.min > 101*time.Millisecond || rec.srtt != rec.min {
		t.Errorf("handshake RTT: srtt %v, min %v; want both the path's 100-101 ms", rec.srtt, rec.min)
	}
	if rec.at != clock.Time(rec.min) || rec.sentBefore != 0 {
		t.Errorf("called at %v after %d data sends, want at the SYN-ACK (%v) before any", rec.at, rec.sentBefore, rec.min)
	}
}
