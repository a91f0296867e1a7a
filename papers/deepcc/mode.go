package deepcc

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// Mode is an application's preference when it has no concrete target (the
// paper, section III-C: "if the application can not provide the concrete
// performance target but have a performance preference, e.g., the high
// throughput or low delay, the target T could be presented as an
// (n-1)-dimensional vector with the default value").
type Mode string

// The two preference modes.
const (
	// ModeLowDelay: "the target T is set as the minimum RTT and zero
	// packet loss": no throughput bound, a queueing-delay bound of
	// LowDelayShare of the flow's minimum RTT (an RTT at the minimum
	// itself is a queueing delay of 0, a bound no run meets and the
	// tuner's relative error cannot divide by), and a loss bound of
	// ZeroLoss.
	ModeLowDelay Mode = "low-delay"
	// ModeHighThroughput: "the target T can be defined as the observed
	// maximum bandwidth and zero packet loss": a throughput bound equal to
	// the highest bandwidth estimate the flow has seen (its BtlBw max
	// filter) and a loss bound of ZeroLoss; no delay bound.
	ModeHighThroughput Mode = "high-throughput"
)

// Mode constants (ours: the paper gives none).
const (
	// LowDelayShare is the low-delay mode's queueing-delay bound as a
	// share of the minimum RTT.
	LowDelayShare = 0.05
	// ZeroLoss stands for "zero packet loss" (the tuner reads a bound of
	// 0 as "no bound"). Missing only the loss bound never moves the goal
	// (the paper's loss rule), so its value matters only to Target.Met.
	ZeroLoss = 1e-6
)

// ParseMode returns the mode named s ("" is no mode).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "", ModeLowDelay, ModeHighThroughput:
		return m, nil
	}
	return "", fmt.Errorf("deepcc: unknown preference mode %q (want %s or %s)", s, ModeLowDelay, ModeHighThroughput)
}

// modeTarget is the target of the run's mode given what the flow has
// observed so far.
func (ag *agentRun) modeTarget() (tuner.Target, error) {
	if ag.r.Mode != ModeLowDelay && ag.r.Mode != ModeHighThroughput {
		return tuner.Target{}, fmt.Errorf("deepcc: unknown preference mode %q (want %s or %s)", ag.r.Mode, ModeLowDelay, ModeHighThroughput)
	}
	return modeTargetFor(ag.r.Mode, ag.e.minRTT(), math.Max(ag.maxBw, ag.e.bwEst/1e6)), nil
}
