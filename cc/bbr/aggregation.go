package bbr

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Linux tcp_bbr.c constants of the ACK-aggregation estimator (since 4.20).
const (
	extraAckedWinRTTs     = 5                      // bbr_extra_acked_win_rtts
	extraAckedMax         = 100 * time.Millisecond // bbr_extra_acked_max_us
	ackEpochResetThreshBy = 1 << 20                // bbr_ack_epoch_acked_reset_thresh, segments
)

// ackAggregation is Linux bbr_update_ack_aggregation: it measures how much
// more data the ACKs of an "epoch" acknowledge than the bandwidth estimate
// predicts (ACKs bunched by a wireless link's scheduler, a trace's delivery
// opportunities, receiver offloads), keeps the largest excess over the last
// 5-10 rounds in two windows, and lets the cwnd target grow by it so that
// the sender keeps sending while ACKs are held back. Without it BBR keeps
// less in flight than Linux on bursty (cellular) links.
type ackAggregation struct {
	epochStart clock.Time
	epochAcked units.Bytes
	started    bool
	winRTTs    int
	idx        int
	extra      [2]units.Bytes
}

func (g *ackAggregation) update(now clock.Time, acked units.Bytes, roundStart bool, bw units.Bandwidth, cwnd units.Bytes) {
	if acked <= 0 {
		return
	}
	if roundStart {
		g.winRTTs = min(0x1f, g.winRTTs+1)
		if g.winRTTs >= extraAckedWinRTTs {
			g.winRTTs = 0
			g.idx ^= 1
			g.extra[g.idx] = 0
		}
	}
	// Data the bandwidth estimate expects over the epoch.
	expected := units.Bytes(0)
	if g.started {
		expected = units.Bytes(float64(bw) / 8 * now.Sub(g.epochStart).Seconds())
	}
	// A new epoch when the ACK rate fell to the estimate, or after a very
	// large amount acknowledged (a stale epoch).
	if !g.started || g.epochAcked <= expected || g.epochAcked+acked >= ackEpochResetThreshBy*1448 {
		g.epochAcked = 0
		g.epochStart = now
		g.started = true
		expected = 0
	}
	g.epochAcked += acked
	extra := min(g.epochAcked-expected, cwnd)
	if extra > g.extra[g.idx] {
		g.extra[g.idx] = extra
	}
}

// aggregationCwnd is bbr_ack_aggregation_cwnd: once the pipe has been
// filled, the largest recent excess times the gain, at most 100 ms at the
// estimated bandwidth.
func (b *BBR) aggregationCwnd(bw units.Bandwidth) units.Bytes {
	if b.cfg.ExtraAckedGain <= 0 || !b.fullBwReached {
		return 0
	}
	maxAggr := units.Bytes(float64(bw) / 8 * extraAckedMax.Seconds())
	aggr := units.Bytes(b.cfg.ExtraAckedGain * float64(max(b.agg.extra[0], b.agg.extra[1])))
	return min(aggr, maxAggr)
}
