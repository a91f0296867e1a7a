package deepcc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/par"
	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/deepcc/tuner"
)

// The paper's steady link for its robustness and convergence experiments
// (section VI-D): "a steady link with 12 Mbps, 60 ms RTT, and 90 KB of
// buffer".
const (
	PaperRate  = 12 * units.Mbps
	PaperDelay = 30 * time.Millisecond // one way: a 60 ms RTT
	// PaperQueue is 90 KB in 1500-byte packets (1448 bytes of payload
	// plus headers), one BDP of the link.
	PaperQueue = 60
)

// PaperLink returns the paper's steady link with random loss probability
// loss.
func PaperLink(loss float64) Link {
	name := "12Mbps-60ms-90KB"
	if loss > 0 {
		name += fmt.Sprintf("-loss%g%%", 100*loss)
	}
	return Link{Name: name, Rate: PaperRate, Delay: PaperDelay, Queue: PaperQueue, Loss: loss, Capacity: PaperRate}
}

// Targets of the paper's experiments.
var (
	// CoexistTarget is Figure 11's DeepCC target: "5 Mbps, 180 ms, 1%".
	CoexistTarget = tuner.Target{MinThroughputMbps: 5, MaxDelayMs: 180, MaxLoss: 0.01}
	// LossTarget is Figure 14's: "11 Mbps throughput, 100 ms delay, and
	// 5% loss rate".
	LossTarget = tuner.Target{MinThroughputMbps: 11, MaxDelayMs: 100, MaxLoss: 0.05}
)

// StudyConfig holds what the DeepCC studies (coexistence, convergence,
// random loss, intervals, modes) share. Zero values take the defaults in
// brackets; each study has its own default Duration and Runs.
type StudyConfig struct {
	// Policy is the trained agent; required.
	Policy *policy.Policy
	// Duration is each run's length; Runs the number of seeds (or trace
	// windows) per point.
	Duration time.Duration
	Runs     int
	// Seed offsets the runs' seeds: run k uses Seed+k+1.
	Seed uint64
	// DecisionRTTs [1] and TuneRTTs [4] set DeepCC's intervals; Tuner
	// configures its tuner; DelayWindow [4] as in EvalConfig.
	DecisionRTTs, TuneRTTs float64
	Tuner                  tuner.Config
	DelayWindow            int
	// TunerStart is the tuner's initial goal [(0.6, 0.35, 0.05)].
	TunerStart *Goal
	// Traces and Set are the held-out traces of the interval and mode
	// studies [EvalTraces in traces/].
	Traces []string
	Set    *TraceSet
	// Jobs is the number of parallel runs [GOMAXPROCS]; results do not
	// depend on it.
	Jobs int
	// Progress, if set, is called after each finished run.
	Progress func(done, total int)
}

func (c *StudyConfig) defaults(duration time.Duration, runs int) error {
	c.Duration = cmp.Or(c.Duration, duration)
	c.Runs = cmp.Or(c.Runs, runs)
	c.DelayWindow = cmp.Or(c.DelayWindow, 4)
	c.DecisionRTTs = cmp.Or(c.DecisionRTTs, 1)
	c.TuneRTTs = cmp.Or(c.TuneRTTs, TuneEvery)
	if c.TunerStart == nil {
		g := Goal{0.6, 0.35, 0.05}
		c.TunerStart = &g
	}
	if c.Traces == nil {
		c.Traces = TracePaths("traces", EvalTraces)
	}
	if c.Set == nil {
		c.Set = NewTraceSet()
	}
	if c.Jobs <= 0 {
		c.Jobs = runtime.GOMAXPROCS(0)
	}
	switch {
	case c.Policy == nil:
		return fmt.Errorf("deepcc: no policy")
	case c.Duration <= 0 || c.Runs < 1:
		return fmt.Errorf("deepcc: run length %v and runs %d must be positive", c.Duration, c.Runs)
	case c.DelayWindow < 1:
		return fmt.Errorf("deepcc: tuner delay window %d must be >= 1", c.DelayWindow)
	case !(c.DecisionRTTs >= 0.05 && c.DecisionRTTs <= 20):
		return fmt.Errorf("deepcc: decision interval %g minimum RTTs must be in [0.05, 20]", c.DecisionRTTs)
	case !(c.TuneRTTs > 0 && c.TuneRTTs <= 1000):
		return fmt.Errorf("deepcc: tuning interval %g RTTs must be in (0, 1000]", c.TuneRTTs)
	}
	if err := c.TunerStart.Validate(); err != nil {
		return fmt.Errorf("deepcc: tuner start: %w", err)
	}
	return c.Policy.Check(PolicySpaces())
}

// run is a DeepCC Run with the study's settings.
func (c *StudyConfig) run(l Link, seed uint64, goal Goal, target *tuner.Target, mode Mode) Run {
	if target != nil || mode != "" {
		goal = *c.TunerStart
	}
	return Run{Link: l, Duration: c.Duration, Seed: seed, Goal: goal, Target: target, Mode: mode, Tuner: c.Tuner,
		DelayWindow: c.DelayWindow, DecisionRTTs: c.DecisionRTTs, TuneRTTs: c.TuneRTTs}
}

// seed is the seed of run k.
func (c *StudyConfig) seed(k int) uint64 { return c.Seed + uint64(k) + 1 }

// doAll runs f(p, i) for i in [0, n) on c.Jobs goroutines, each with its
// own clone of the policy, and returns the first error.
func (c *StudyConfig) doAll(ctx context.Context, n int, f func(p *policy.Policy, i int) error) error {
	pols := make([]*policy.Policy, par.Workers(n, c.Jobs))
	for w := range pols {
		pols[w] = c.Policy.Clone() // ActInto owns buffers
	}
	errs := make([]error, n)
	if err := par.Do(ctx, n, c.Jobs, c.Progress, func(w, i int) { errs[i] = f(pols[w], i) }); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Scheme is one scheme of a single-flow study: DeepCC with a fixed goal, a
// target or a mode, or a classic controller.
type Scheme struct {
	Name   string        `json:"name"`
	CC     string        `json:"cc,omitempty"`
	Goal   *Goal         `json:"goal,omitempty"`
	Target *tuner.Target `json:"target,omitempty"`
	Mode   Mode          `json:"mode,omitempty"`
}

// runScheme runs one single-flow run of s.
func (c *StudyConfig) runScheme(p *policy.Policy, s Scheme, l Link, seed uint64) (RunResult, error) {
	if s.CC != "" {
		return RunClassic(scenario.CC{Name: s.CC}, Run{Link: l, Duration: c.Duration, Seed: seed})
	}
	g := DefaultGoals[1].Goal
	if s.Goal != nil {
		g = *s.Goal
	}
	return RunDeepCC(p, c.run(l, seed, g, s.Target, s.Mode))
}

// Stat is a mean with its 95% confidence half-width over runs; Mean is -1
// when there was no sample (JSON has no NaN).
type Stat struct {
	Mean float64 `json:"mean"`
	CI95 float64 `json:"ci95"`
}

func statOf(x []float64) Stat {
	s := metrics.Summarize(x)
	if s.N == 0 {
		return Stat{Mean: -1}
	}
	ci := s.CI95
	if math.IsNaN(ci) {
		ci = 0
	}
	return Stat{Mean: s.Mean, CI95: ci}
}

func goalPtr(g Goal) *Goal { return &g }

func targetPtr(t tuner.Target) *tuner.Target { return &t }
