package bbr

import (
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// Long-term ("LT") bandwidth estimation constants, Linux tcp_bbr.c.
const (
	ltIntvlMinRounds = 4                // bbr_lt_intvl_min_rtts
	ltLossThresh     = 50.0 / 256       // bbr_lt_loss_thresh: lost/delivered about 20%
	ltBwRatio        = 1.0 / 8          // bbr_lt_bw_ratio
	ltBwDiff         = 4 * units.Kbps   // bbr_lt_bw_diff: 4 kbit/s
	ltBwMaxRounds    = 48               // bbr_lt_bw_max_rtts
	ltMinInterval    = time.Millisecond // Linux waits for at least 1 ms
)

// ltBw detects a token-bucket policer (Linux bbr_lt_bw_sampling): two
// consecutive sampling intervals, each at least 4 rounds long and ended by a
// loss with a loss rate of at least 20%, whose delivery rates agree within
// 1/8 or 4 kbit/s. BBR then paces at their average for 48 rounds instead of
// its max-filtered estimate ("Internet-Wide Analysis of Traffic Policing",
// SIGCOMM 2016).
type ltBw struct {
	bw            units.Bandwidth // average of the two intervals, or the previous interval's
	useBw         bool
	isSampling    bool
	rounds        int
	lastStamp     clock.Time
	lastDelivered units.Bytes
	lastLost      units.Bytes
}

// resetInterval starts a new sampling interval (bbr_reset_lt_bw_sampling_interval).
func (l *ltBw) resetInterval(now clock.Time, delivered, lost units.Bytes) {
	l.lastStamp = now
	l.lastDelivered = delivered
	l.lastLost = lost
	l.rounds = 0
}

// reset forgets everything (bbr_reset_lt_bw_sampling).
func (l *ltBw) reset(now clock.Time, delivered, lost units.Bytes) {
	l.bw = 0
	l.useBw = false
	l.isSampling = false
	l.resetInterval(now, delivered, lost)
}

// ltSample is what one ACK tells the LT estimator.
type ltSample struct {
	now                    clock.Time
	delivered, lost        units.Bytes // connection totals
	losses                 bool        // this ACK marked data lost
	appLimited, roundStart bool
}

// sample feeds one ACK. It reports whether the estimator stopped using
// lt_bw after its 48 rounds, in which case Linux restarts gain cycling.
func (l *ltBw) sample(s ltSample, probeBW bool) (expired bool) {
	if l.useBw {
		if probeBW && s.roundStart {
			l.rounds++
			if l.rounds >= ltBwMaxRounds {
				l.reset(s.now, s.delivered, s.lost)
				return true
			}
		}
		return false
	}
	// "Wait for the first loss before sampling, to let the policer exhaust
	// its tokens and estimate the steady-state rate allowed by the policer."
	if !l.isSampling {
		if !s.losses {
			return false
		}
		l.resetInterval(s.now, s.delivered, s.lost)
		l.isSampling = true
	}
	// "To avoid underestimates, reset sampling if we run out of data."
	if s.appLimited {
		l.reset(s.now, s.delivered, s.lost)
		return false
	}
	if s.roundStart {
		l.rounds++
	}
	if l.rounds < ltIntvlMinRounds {
		return false
	}
	if l.rounds > 4*ltIntvlMinRounds {
		l.reset(s.now, s.delivered, s.lost) // interval too long
		return false
	}
	// "End sampling interval when a packet is lost, so we estimate the
	// policer tokens were exhausted."
	if !s.losses {
		return false
	}
	lost := s.lost - l.lastLost
	delivered := s.delivered - l.lastDelivered
	if delivered <= 0 || float64(lost) < ltLossThresh*float64(delivered) {
		return false
	}
	t := s.now.Sub(l.lastStamp)
	if t < ltMinInterval {
		return false
	}
	l.intervalDone(units.BandwidthFromDelta(delivered, t), s)
	return false
}

// intervalDone is bbr_lt_bw_interval_done.
func (l *ltBw) intervalDone(bw units.Bandwidth, s ltSample) {
	if l.bw > 0 {
		diff := bw - l.bw
		if diff < 0 {
			diff = -diff
		}
		if float64(diff) <= ltBwRatio*float64(l.bw) || diff <= ltBwDiff {
			// "All criteria are met; estimate we're policed."
			l.bw = (bw + l.bw) / 2
			l.useBw = true
			l.rounds = 0
			return
		}
	}
	l.bw = bw
	l.resetInterval(s.now, s.delivered, s.lost)
}
