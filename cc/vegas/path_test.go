package vegas

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/units"
)

// On a single bottleneck Vegas settles with its estimate of queued segments
// between alpha and beta, keeps the link busy and loses nothing.
func TestSteadyStateQueue(t *testing.T) {
	tests := []struct {
		alpha, beta float64
		rate        units.Bandwidth
		base        time.Duration
	}{
		{2, 4, 10 * units.Mbps, 50 * time.Millisecond},
		{8, 15, 10 * units.Mbps, 50 * time.Millisecond},
		{3, 4, 20 * units.Mbps, 20 * time.Millisecond},
		{1, 3, 5 * units.Mbps, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		v := newVegas(t, map[string]float64{"alpha": tt.alpha, "beta": tt.beta})
		// Vegas slow start overshoots (it tests diff once per round with
		// the round's minimum RTT, taken before the queue built up) and
		// drains one segment per RTT: up to 26 s at 5 Mbit/s, 100 ms.
		const from, to = 35 * time.Second, 45 * time.Second
		var qSum, qMin, n float64 = 0, 1e9, 0
		var deliveredAt units.Bytes
		p := cctest.NewPath(t, v, cctest.PathConfig{Rate: tt.rate, BaseRTT: tt.base, QueueLimit: 1000 * mss}, func(o *cctest.Observation) {
			if o.Now.Duration() < from {
				deliveredAt = o.Ack.TotalDelivered
				return
			}
			q := float64(o.QueueBytes) / float64(mss)
			qSum += q
			qMin = min(qMin, q)
			n++
		})
		p.Run(to)
		st := p.Stats()
		mean := qSum / n
		// Vegas acts on the round's minimum RTT, so it is the minimum
		// queue that it holds between alpha and beta. The queue is sampled
		// as each ACK arrives, before the sender refills, and the RTT
		// samples (base and round minimum) come from the newer segment of
		// a delayed-ACK pair, which may have waited behind its sibling:
		// together these put the observed queue up to about one segment
		// above diff (observed: 0.1 to 1.1). Allow half a segment below
		// alpha and two above beta.
		if qMin < tt.alpha-0.5 || mean > tt.beta+2 {
			t.Errorf("alpha %g, beta %g: queue min %.2f, mean %.2f segments; want min >= alpha-0.5 and mean <= beta+2", tt.alpha, tt.beta, qMin, mean)
		}
		if d := v.Snapshot().Diff; d < tt.alpha-1 || d > tt.beta+1 {
			t.Errorf("alpha %g, beta %g: last diff %.2f, want within one segment of [alpha, beta]", tt.alpha, tt.beta, d)
		}
		// A standing queue keeps the bottleneck busy all the time.
		goodput := units.BandwidthFromDelta(st.Delivered-deliveredAt, to-from)
		if goodput < tt.rate*99/100 {
			t.Errorf("alpha %g, beta %g: goodput %v over the last 10 s, want at least 99%% of %v", tt.alpha, tt.beta, goodput, tt.rate)
		}
		if st.Dropped != 0 || st.CongestionEvents != 0 {
			t.Errorf("alpha %g, beta %g: %d drops, %d congestion events with a 1000-segment buffer, want none", tt.alpha, tt.beta, st.Dropped, st.CongestionEvents)
		}
		t.Logf("alpha %g, beta %g, %v, %v: queue min %.2f mean %.2f, diff %.2f, goodput %v", tt.alpha, tt.beta, tt.rate, tt.base, qMin, mean, v.Snapshot().Diff, goodput)
	}
}
