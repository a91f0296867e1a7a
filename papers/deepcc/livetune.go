package deepcc

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// LiveTuning turns the online goal tuner on for a LiveAgent: the agent
// pursues Target (or the preference Mode) by letting the tuner choose its
// goal every TuneRTTs decision intervals, as RunDeepCC does in the
// simulator, but measured on the live flow and timed by the real clock.
type LiveTuning struct {
	// Target is the application's requirement; Mode a preference instead
	// (exactly one of them).
	Target *tuner.Target
	Mode   Mode
	// Tuner configures the tuner.
	Tuner tuner.Config
	// TuneRTTs is the tuning interval in decision intervals (one minimum
	// RTT each) [TuneEvery: four RTTs, the paper's].
	TuneRTTs int
}

// liveTune is the tuner's state on a live flow; the agent's step timer
// calls step after each observation, on the sender's event goroutine.
type liveTune struct {
	mode  Mode
	tu    *tuner.Tuner
	every int

	t0              clock.Time
	steps           int
	dt              time.Duration
	delivered       int64
	segsSent, lost  int64
	delays          []time.Duration
	lastD, maxBwMbs float64
	traj            []TunePoint
}

// SetTuning turns the tuner on; call it before Attach. The agent's goal is
// the tuner's starting goal.
func (a *LiveAgent) SetTuning(lt LiveTuning) error {
	if (lt.Target == nil) == (lt.Mode == "") {
		return fmt.Errorf("deepcc: live tuning takes a target or a preference mode (exactly one)")
	}
	if _, err := ParseMode(string(lt.Mode)); err != nil {
		return err
	}
	if lt.TuneRTTs < 0 || lt.TuneRTTs > 1000 {
		return fmt.Errorf("deepcc: tuning interval %d RTTs must be in [1, 1000]", lt.TuneRTTs)
	}
	t := &liveTune{mode: lt.Mode, every: cmp.Or(lt.TuneRTTs, TuneEvery)}
	aim := tuner.Target{MaxDelayMs: 1, MaxLoss: ZeroLoss} // replaced at the first interval
	if lt.Target != nil {
		aim = *lt.Target
	}
	var err error
	if t.tu, err = tuner.New(aim, a.goal, lt.Tuner); err != nil {
		return err
	}
	a.tune = t
	return nil
}

// Goal returns the goal in force.
func (a *LiveAgent) Goal() Goal { return a.goal }

// Trajectory returns the tuner's intervals so far (T counts from the first
// decision); nil without tuning. Read it after the flow ends.
func (a *LiveAgent) Trajectory() []TunePoint {
	if a.tune == nil {
		return nil
	}
	return a.tune.traj
}

// queueSample records one RTT sample's queueing delay.
func (t *liveTune) queueSample(rtt, minRTT time.Duration) {
	t.delays = append(t.delays, max(rtt-minRTT, 0))
}

// step accounts one decision interval and, every tuning interval, lets the
// tuner choose the next goal (agentRun.afterStep with a DelayWindow of 1).
func (t *liveTune) step(a *LiveAgent, now clock.Time, raw stepRaw) error {
	if t.steps == 0 {
		t.t0 = now.Add(-raw.dt)
	}
	t.maxBwMbs = math.Max(t.maxBwMbs, a.bwEst/1e6)
	t.dt += raw.dt
	t.delivered += int64(raw.delivered)
	t.segsSent += raw.segsSent
	t.lost += raw.segsLost
	if t.steps++; t.steps%t.every != 0 {
		return nil
	}
	if len(t.delays) > 0 {
		// An interval without RTT samples (an outage) keeps the previous
		// delay measurement.
		t.lastD = percentileMs(t.delays, 0.95)
	}
	m := tuner.Metrics{DelayMs: t.lastD}
	if t.dt > 0 {
		m.ThroughputMbps = float64(t.delivered) * 8 / t.dt.Seconds() / 1e6
	}
	if t.segsSent > 0 {
		m.Loss = math.Min(1, float64(t.lost)/float64(t.segsSent))
	}
	if t.mode != "" {
		if err := t.tu.SetTarget(modeTargetFor(t.mode, a.minRTT(), math.Max(t.maxBwMbs, a.bwEst/1e6))); err != nil {
			return err
		}
	}
	g, err := t.tu.Observe(m)
	if err != nil {
		return err
	}
	if err := Goal(g).Validate(); err != nil {
		return err
	}
	a.goal = Goal(g)
	for i := range 3 {
		a.obs[goalOffset+i] = float32(a.goal[i])
	}
	t.traj = append(t.traj, TunePoint{T: now.Sub(t.t0).Seconds(), Measured: m, Goal: a.goal})
	t.dt, t.delivered, t.segsSent, t.lost = 0, 0, 0, 0
	t.delays = t.delays[:0]
	return nil
}

// modeTargetFor is mode's target for a flow with this minimum RTT and
// highest bandwidth estimate seen (Mbit/s).
func modeTargetFor(mode Mode, minRTT time.Duration, maxBwMbps float64) tuner.Target {
	if mode == ModeLowDelay {
		bound := LowDelayShare * float64(minRTT) / 1e6
		return tuner.Target{MaxDelayMs: math.Max(bound, 0.1), MaxLoss: ZeroLoss}
	}
	return tuner.Target{MinThroughputMbps: math.Max(maxBwMbps, 0.01), MaxLoss: ZeroLoss}
}

// ParseTuning reads the tuner's settings as `cclab send --target/--mode`
// and a scenario flow's target and mode keys give them: a target
// "MBPS,DELAY_MS,LOSS" (0 = no bound) or a preference mode, not both;
// nil when neither is given. Errors start with the key's name.
func ParseTuning(target, mode string) (*LiveTuning, error) {
	switch {
	case target == "" && mode == "":
		return nil, nil
	case target != "" && mode != "":
		return nil, errors.New("target: give target or mode, not both")
	case mode != "":
		m, err := ParseMode(mode)
		if err != nil {
			return nil, fmt.Errorf("mode: %w", err)
		}
		return &LiveTuning{Mode: m}, nil
	}
	v, err := scenario.ParseTarget(target)
	if err != nil {
		return nil, err
	}
	t := tuner.Target{MinThroughputMbps: v[0], MaxDelayMs: v[1], MaxLoss: v[2]}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	return &LiveTuning{Target: &t}, nil
}
