package marlin

import "math"

// The 14 features of the MARLIN state, in the order of the authors'
// `State` enumeration (RaffaeleGalliera/marlin-rlcc, envs/utils/constants.py),
// each measured over one step's timeframe (100 ms) or read at its end.
// Bytes are in KB (1000 bytes), times in ms, rates in KB/s.
const (
	// FeatCwnd is the congestion window at the end of the step, KB.
	FeatCwnd = iota
	// FeatSent is the payload sent during the step, retransmissions
	// included, KB.
	FeatSent
	// FeatSentGood is the new (never sent before) payload sent during the
	// step, KB.
	FeatSentGood
	// FeatUnacked is the payload sent and not yet acknowledged at the end
	// of the step, KB.
	FeatUnacked
	// FeatRetransmissions is the number of segments retransmitted during
	// the step.
	FeatRetransmissions
	// FeatLastRTT is the latest RTT sample, ms.
	FeatLastRTT
	// FeatMinRTT is the smallest RTT sample of the step (the connection's
	// minimum if the step had none), ms.
	FeatMinRTT
	// FeatMaxRTT is the largest RTT sample of the step (the latest sample
	// if none), ms.
	FeatMaxRTT
	// FeatSRTT is the smoothed RTT (RFC 6298), ms.
	FeatSRTT
	// FeatRTTVar is the RTT variation (RFC 6298), ms.
	FeatRTTVar
	// FeatAcked is the payload newly acknowledged during the step, KB.
	FeatAcked
	// FeatThroughput is FeatSent over the step, KB/s.
	FeatThroughput
	// FeatGoodput is FeatAcked over the step, KB/s.
	FeatGoodput
	// FeatPackets is the number of segments sent during the step.
	FeatPackets

	// NumFeatures is the number of features.
	NumFeatures
)

// FeatureNames names the features for logs and documentation.
var FeatureNames = [NumFeatures]string{
	"cwnd_kb", "sent_kb", "sent_good_kb", "unacked_kb", "retransmissions",
	"rtt_last_ms", "rtt_min_ms", "rtt_max_ms", "srtt_ms", "rttvar_ms",
	"acked_kb", "throughput_kbps", "goodput_kbps", "packets",
}

// The seven statistics computed for each feature (the authors' `Statistic`
// enumeration), over the feature's values at every step of the episode so
// far, as the authors' environment does.
const (
	StatLast = iota
	StatMean
	StatStd
	StatMin
	StatMax
	StatEMA
	StatDiff

	// NumStats is the number of statistics per feature.
	NumStats
)

// StatNames names the statistics.
var StatNames = [NumStats]string{"last", "mean", "std", "min", "max", "ema", "diff"}

// EMAAlpha is the weight of the newest value in the exponential moving
// average (the authors' ALPHA = 1/8, like TCP's SRTT gain).
const EMAAlpha = 1.0 / 8

// stats accumulates the statistics of one feature over an episode.
type stats struct {
	n        int
	mean, m2 float64 // Welford's running mean and sum of squared deviations
	min, max float64
	ema      float64
	last     float64
	prev     float64
}

func (s *stats) add(x float64) {
	s.n++
	s.prev, s.last = s.last, x
	if s.n == 1 {
		s.min, s.max, s.ema, s.prev = x, x, x, 0
	} else {
		s.min = math.Min(s.min, x)
		s.max = math.Max(s.max, x)
		s.ema = (1-EMAAlpha)*s.ema + EMAAlpha*x
	}
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
}

// write stores the seven statistics in dst (NumStats values). The standard
// deviation is the sample standard deviation, 0 before the second step;
// the difference is from the previous step's value (from 0 at the first
// step, as the authors' history starts with a 0).
func (s *stats) write(dst []float32) {
	std := 0.0
	if s.n > 1 {
		std = math.Sqrt(s.m2 / float64(s.n-1))
	}
	dst[StatLast] = float32(s.last)
	dst[StatMean] = float32(s.mean)
	dst[StatStd] = float32(std)
	dst[StatMin] = float32(s.min)
	dst[StatMax] = float32(s.max)
	dst[StatEMA] = float32(s.ema)
	dst[StatDiff] = float32(s.last - s.prev)
}
