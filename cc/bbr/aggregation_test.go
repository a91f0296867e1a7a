package bbr

import (
	"testing"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// TestAckAggregationAllowance: ACKs arriving exactly at the estimated
// bandwidth earn no allowance; ACKs bunched into bursts (a cellular link's
// scheduler) earn about one burst, capped at 100 ms of data, and the
// cwnd target grows by it, as in Linux bbr_ack_aggregation_cwnd.
func TestAckAggregationAllowance(t *testing.T) {
	const bw = 10 * units.Mbps
	gap := bw.TxTime(2 * mss) // the time two segments take at bw
	var g ackAggregation
	now := clock.Time(0)
	for range 200 {
		now = now.Add(gap)
		g.update(now, 2*mss, false, bw, 1000*mss)
	}
	if e := max(g.extra[0], g.extra[1]); e > 2*mss {
		t.Errorf("paced ACKs earned an allowance of %d bytes, want at most one ACK's 2 segments", e)
	}
	// Bursts: 20 ACKs at once every 20 gaps (the same average rate).
	var h ackAggregation
	now = clock.Time(0)
	for k := range 400 {
		if k%20 == 0 {
			now = now.Add(20 * gap)
		}
		h.update(now, 2*mss, false, bw, 1000*mss)
	}
	e := max(h.extra[0], h.extra[1])
	if e < 30*mss || e > 42*mss {
		t.Errorf("bursts of 40 segments earned %d segments of allowance, want about 38-40", e/mss)
	}
	// The allowance is capped by cwnd.
	var c ackAggregation
	now = clock.Time(0)
	for k := range 400 {
		if k%20 == 0 {
			now = now.Add(20 * gap)
		}
		c.update(now, 2*mss, false, bw, 10*mss)
	}
	if e := max(c.extra[0], c.extra[1]); e != 10*mss {
		t.Errorf("allowance %d bytes not capped at cwnd %d", e, 10*mss)
	}
	// Rounds rotate the two windows: after enough rounds of ACKs slower
	// than the estimate (each resets the epoch) the burst is forgotten.
	for range 60 {
		now = now.Add(2 * gap)
		h.update(now, 2*mss, true, bw, 1000*mss)
	}
	if e := max(h.extra[0], h.extra[1]); e > 2*mss {
		t.Errorf("allowance %d bytes survived 60 rounds of slow ACKs", e)
	}
	// In the controller: the target is capped at 100 ms of data.
	b := newTestBBR(t, nil)
	b.fullBwReached = true
	b.agg.extra[0] = 1 << 30
	if got, want := b.aggregationCwnd(bw), units.Bytes(float64(bw)/8*(100*time.Millisecond).Seconds()); got != want {
		t.Errorf("aggregation cwnd %d, want the 100 ms cap %d", got, want)
	}
	b.cfg.ExtraAckedGain = 0
	if got := b.aggregationCwnd(bw); got != 0 {
		t.Errorf("gain 0 gives %d", got)
	}
}
