package bbr

import (
	"testing"
	"time"

	"github.com/cclab/cclab/cc/cctest"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// On a single bottleneck BBR's bandwidth estimate converges to the
// bottleneck rate, its pacing rate averages the rate (the gain cycle
// averages 1, with a 1% margin), its min RTT is the propagation delay plus
// one segment's serialisation, and the queue it keeps stays well under one
// BDP, with a PROBE_RTT every min_rtt_window.
func TestSteadyState(t *testing.T) {
	tests := []struct {
		rate  units.Bandwidth
		base  time.Duration
		queue int // segments
	}{
		{10 * units.Mbps, 40 * time.Millisecond, 100},
		{50 * units.Mbps, 10 * time.Millisecond, 200},
		{2 * units.Mbps, 100 * time.Millisecond, 50},
	}
	for _, tt := range tests {
		b := newTestBBR(t, map[string]float64{"seed": 3})
		const from, to = 5 * time.Second, 25 * time.Second
		var (
			paceArea   float64 // integral of pacing rate over time, bit
			last       clock.Time
			lastPace   units.Bandwidth
			maxQ, sumQ units.Bytes
			n          int
			probeRTTs  int
			mode       Mode
			delivered0 units.Bytes
		)
		p := cctest.NewPath(t, b, cctest.PathConfig{Rate: tt.rate, BaseRTT: tt.base, QueueLimit: units.Bytes(tt.queue) * mss}, func(o *cctest.Observation) {
			s := b.Snapshot()
			if s.Mode == ProbeRTT && mode != ProbeRTT {
				probeRTTs++
			}
			mode = s.Mode
			if o.Now.Duration() < from {
				delivered0 = o.Ack.TotalDelivered
				last, lastPace = o.Now, o.PacingRate
				return
			}
			paceArea += float64(lastPace) * o.Now.Sub(last).Seconds()
			last, lastPace = o.Now, o.PacingRate
			maxQ = max(maxQ, o.QueueBytes)
			sumQ += o.QueueBytes
			n++
		})
		p.Run(to)
		bdp := p.BDP()
		s := b.Snapshot()
		name := tt.rate.String() + "/" + tt.base.String()
		if d := float64(s.BtlBw-tt.rate) / float64(tt.rate); d < -0.01 || d > 0.01 {
			t.Errorf("%s: BtlBw %v, want the bottleneck rate within 1%%", name, s.BtlBw)
		}
		meanPace := units.Bandwidth(paceArea / last.Sub(clock.Time(from)).Seconds())
		if d := float64(meanPace)/float64(tt.rate) - 0.99; d < -0.03 || d > 0.03 {
			t.Errorf("%s: mean pacing rate %v, want 0.99 * %v within 3%%", name, meanPace, tt.rate)
		}
		ser := tt.rate.TxTime(mss)
		if s.MinRTT < tt.base || s.MinRTT > tt.base+2*ser {
			t.Errorf("%s: min_rtt %v, want in [%v, %v] (base + 1-2 serialisations)", name, s.MinRTT, tt.base, tt.base+2*ser)
		}
		if maxQ > bdp || sumQ/units.Bytes(n) > bdp/2 {
			t.Errorf("%s: queue max %d, mean %d bytes after STARTUP, want max <= BDP %d and mean <= BDP/2", name, maxQ, sumQ/units.Bytes(n), bdp)
		}
		goodput := units.BandwidthFromDelta(p.Stats().Delivered-delivered0, to-from)
		if goodput < tt.rate*95/100 {
			t.Errorf("%s: goodput %v, want at least 95%% of %v", name, goodput, tt.rate)
		}
		if probeRTTs != 2 {
			t.Errorf("%s: %d PROBE_RTT episodes in 25 s, want 2 (every 10 s)", name, probeRTTs)
		}
		if st := p.Stats(); st.Dropped != 0 {
			t.Errorf("%s: %d drops with a %d-segment buffer, want none", name, st.Dropped, tt.queue)
		}
		t.Logf("%s: BtlBw %v, mean pacing %v, min_rtt %v, queue max %.1f mean %.1f segments (BDP %.1f), goodput %v, PROBE_RTTs %d",
			name, s.BtlBw, meanPace, s.MinRTT, float64(maxQ)/float64(mss), float64(sumQ)/float64(n)/float64(mss), float64(bdp)/float64(mss), goodput, probeRTTs)
	}
}
