// Package marlin reproduces the MARLIN system: reinforcement
// learning of a congestion window for a Mockets-style transport on a tactical
// dumbbell whose bottleneck switches from SATCOM to UHF, competing with
// background traffic. It provides the learning environment (14 features x 7
// statistics, stacked over 10 steps, equation-1 reward), training with SAC,
// and the paper's evaluation (transfer time, retransmissions, RTT Transition
// Impact against TCP CUBIC, the Mockets baseline, a random agent and the
// ideal fair behaviour).
package marlin

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/learn/rl/space"
	"github.com/cclab/cclab/transport/tcp"
)

// Paper constants (section IV and V-A).
const (
	// StepInterval is the time between actions.
	StepInterval = 100 * time.Millisecond
	// EpisodeSteps is the length of a (partial, truncated) training
	// episode.
	EpisodeSteps = 200
	// History is the number of stacked states in an observation.
	History = 10
	// WindowCap is the largest window the agent may set (the paper's;
	// EnvConfig.WindowCap sets another for the compact variant).
	WindowCap units.Bytes = 150_000
	// ObservationSize is one observation: features x statistics x history.
	ObservationSize = NumFeatures * NumStats * History
)

// EnvConfig configures an environment. Zero values take the defaults in
// brackets.
type EnvConfig struct {
	// Base is the scenario: its first flow is the agent's (it is switched to
	// the Mockets protocol with an external controller), the rest is the
	// competing traffic. Required.
	Base *scenario.Scenario
	// Loss is the random loss after the link switch, or a negative value to
	// keep the scenario's [the scenario's].
	Loss float64
	// LossRange, if its upper bound is positive, draws each episode's loss
	// uniformly from it instead (domain randomisation) [off].
	LossRange [2]float64
	// Timeline draws each episode's link-switch time and background scale
	// [off: the base's].
	Timeline
	// QueueCost replaces the compact reward's queueing weight if positive
	// [QueueCost].
	QueueCost float64
	// LinkShaping credits the compact reward's delivered bytes at the
	// current link's rate instead of RefRate [off]: a step that uses the
	// whole link then scores 0 on any link, so the reward of one step
	// measures the capacity it leaves unused (see compactReward).
	LinkShaping bool
	// Bytes is the transfer size; 0 means a bulk flow.
	Bytes units.Bytes
	// BytesRange, if its upper bound is positive, draws each episode's
	// transfer size log-uniformly from it instead of Bytes.
	BytesRange [2]units.Bytes
	// InitialWindow is the window before the first action [10 segments].
	InitialWindow units.Bytes
	// Action is the action's parametrisation: ActionLinear (the paper's,
	// w' = w (1 + a)) or ActionLog2 (ours, w' = w 2^a) [ActionLinear].
	Action string
	// PacketTimers runs the agent's transport with Mockets' per-packet
	// retransmission timers (the Mockets baseline's) instead of SACK loss
	// detection and one RFC 6298 timer, the transport the shipped policy
	// was trained on [false].
	PacketTimers bool
	// Variant is the formulation: VariantPaper (the paper's observation
	// and equation 1) or VariantCompact (ours: compact observation and
	// CompactReward) [VariantPaper].
	Variant string
	// CapacityWindow and MinRTTWindow (compact variant only) are the spans
	// of the capacity estimate's max filter and of the minimum-RTT filter
	// behind the BDP estimate, whole 100-ms steps up to MaxFilterWindow
	// [DefaultCapacityWindow, DefaultMinRTTWindow]. Shorter windows follow
	// a drop in capacity (a switch to UHF, a heavier background) sooner,
	// so a window set in BDP units shrinks with it; longer ones ride out
	// the background's bursts.
	CapacityWindow, MinRTTWindow time.Duration
	// BDPSpan (ActionBDP only) is the action's span: the window is the BDP
	// estimate times 2^(BDPSpan a), from 1 to MaxBDPSpan [DefaultBDPSpan:
	// a quarter to four estimates]. A wider span lets the policy hold a
	// window far below an estimate the ACK burst after a switch has
	// inflated, or far above one still small at the start.
	BDPSpan float64
	// RTTFeature (compact variant only) appends CFMinRTT, the windowed
	// minimum RTT, to each step's features (CompactFeaturesRTT values)
	// [false: CompactFeatures].
	RTTFeature bool
	// WindowCap (compact variant only) is the largest window the agent
	// may set, from MinWindowCap to MaxWindowCap [0: the paper's
	// WindowCap, 150 KB].
	WindowCap units.Bytes
	// DemoScale multiplies the nominal bandwidth-delay product the
	// demonstrator (DemoAction) aims at, if positive [1].
	DemoScale float64
}

// MinWindowCap and MaxWindowCap bound EnvConfig.WindowCap: ten segments
// at least, and far beyond any bandwidth-delay product of the MARLIN
// scenarios at most.
const (
	MinWindowCap units.Bytes = 15_000
	MaxWindowCap units.Bytes = 10_000_000
)

// ValidWindowCap reports whether b may be EnvConfig.WindowCap.
func ValidWindowCap(b units.Bytes) bool { return b >= MinWindowCap && b <= MaxWindowCap }

// ParseWindowCap reads a window cap written as a size ("200KB"): the
// EnvConfig.WindowCap it stands for, 0 for the paper's WindowCap (the
// default, recorded as such), or an error saying what is accepted.
func ParseWindowCap(v string) (units.Bytes, error) {
	b, err := units.ParseBytes(v)
	if err != nil || !ValidWindowCap(b) {
		return 0, fmt.Errorf("%q: want a size from %v to %v", v, MinWindowCap, MaxWindowCap)
	}
	if b == WindowCap {
		return 0, nil
	}
	return b, nil
}

// windowCap returns the largest window the agent may set.
func (c *EnvConfig) windowCap() units.Bytes {
	if c.WindowCap != 0 {
		return c.WindowCap
	}
	return WindowCap
}

// filterSteps returns the compact meter's filter windows in steps.
func (c *EnvConfig) filterSteps() (bw, rtt int) {
	cw, rw := c.CapacityWindow, c.MinRTTWindow
	if cw == 0 {
		cw = DefaultCapacityWindow
	}
	if rw == 0 {
		rw = DefaultMinRTTWindow
	}
	return int(cw / StepInterval), int(rw / StepInterval)
}

// ValidFilterWindow reports whether d may be a compact filter window
// (EnvConfig.CapacityWindow, MinRTTWindow): whole steps from one step to
// MaxFilterWindow.
func ValidFilterWindow(d time.Duration) bool {
	return d >= StepInterval && d <= MaxFilterWindow && d%StepInterval == 0
}

// checkCompactOptions validates the options of the compact variant's BDP
// estimate and action: the filter windows and the action's span.
func (c *EnvConfig) checkCompactOptions() error {
	if c.BDPSpan != 0 && (!ValidBDPSpan(c.BDPSpan) || c.Action != ActionBDP) {
		return fmt.Errorf("marlin: BDP action span %g: want %g to %g, with the %q action", c.BDPSpan, 1.0, MaxBDPSpan, ActionBDP)
	}
	if c.RTTFeature && c.Variant != VariantCompact {
		return fmt.Errorf("marlin: the minimum-RTT feature belongs to the %q variant's observation", VariantCompact)
	}
	if c.WindowCap != 0 && (c.Variant != VariantCompact || !ValidWindowCap(c.WindowCap)) {
		return fmt.Errorf("marlin: window cap %v: want %v to %v, with the %q variant", c.WindowCap, MinWindowCap, MaxWindowCap, VariantCompact)
	}
	if c.CapacityWindow == 0 && c.MinRTTWindow == 0 {
		return nil
	}
	if c.Variant != VariantCompact {
		return fmt.Errorf("marlin: the capacity and minimum-RTT windows belong to the %q variant's BDP estimate", VariantCompact)
	}
	for _, w := range []struct {
		name string
		d    time.Duration
	}{{"capacity window", c.CapacityWindow}, {"minimum-RTT window", c.MinRTTWindow}} {
		if w.d != 0 && !ValidFilterWindow(w.d) {
			return fmt.Errorf("marlin: %s %v: want a multiple of %v from %v to %v", w.name, w.d, StepInterval, StepInterval, MaxFilterWindow)
		}
	}
	return nil
}

// Action parametrisations (EnvConfig.Action). Under uniform exploration,
// a in U[-1, 1], the paper's linear action shrinks the window on average
// (E[log2(1 + a)] = -0.44 per step, and a = -1 drops it to the floor);
// the log-space action is symmetric (E[a] = 0) and spans the same
// halving-to-doubling range per step.
const (
	ActionLinear = "linear"
	ActionLog2   = "log2"
	// ActionBDP (compact variant only) sets the window to the BDP estimate
	// times 2^(2a): a = 0 holds one estimated BDP whatever the window was,
	// so the policy need not integrate its actions to hold a window.
	ActionBDP = "bdp"
)

// Env is the MARLIN environment core: one observation is the 14 x 7
// statistics of the current step; wrap it with env.NewStack(History) and
// env.NewTimeLimit(EpisodeSteps) (see NewTrainingEnv) for the paper's
// stacked, truncated episodes.
type Env struct {
	cfg     EnvConfig
	obs     []float32
	meter   stepMeter
	compact compactMeter
	bytes   units.Bytes // the episode's transfer size, 0 for bulk

	net  *network.Network
	flow *network.Flow
	ext  cc.WindowSetter
	mss  units.Bytes

	// Per-step measurement baselines of the reward's target (lastCap,
	// lastBG) and of the Ideal scheme's capacity (lastIdealCap, lastUDP).
	lastCap                units.Bytes
	lastUDP                units.Bytes
	lastBG                 units.Bytes
	lastIdealCap           units.Bytes
	targetBytes            float64
	steps                  int
	lossNow                float64
	rewardSum, retxEpisode float64
	done                   bool
	info                   env.Info
}

var (
	_ env.Env = (*Env)(nil)
)

// NewEnv returns an environment; cfg.Base must be valid.
func NewEnv(cfg EnvConfig) (*Env, error) {
	if cfg.Base == nil {
		return nil, fmt.Errorf("marlin: no base scenario")
	}
	if len(cfg.Base.Flows) == 0 {
		return nil, fmt.Errorf("marlin: the base scenario %s has no flow for the agent", cfg.Base.Name)
	}
	if cfg.LossRange[1] < cfg.LossRange[0] || cfg.LossRange[0] < 0 || cfg.LossRange[1] >= 1 {
		return nil, fmt.Errorf("marlin: loss range %v must be within [0, 1)", cfg.LossRange)
	}
	if r := cfg.BytesRange; r[1] > 0 && (r[0] <= 0 || r[0] > r[1]) {
		return nil, fmt.Errorf("marlin: transfer size range %v must be increasing and positive", r)
	}
	nobs := NumFeatures * NumStats
	switch cfg.Variant {
	case "", VariantPaper:
		if cfg.Action == ActionBDP {
			return nil, fmt.Errorf("marlin: action %q needs the %q variant's BDP estimate", ActionBDP, VariantCompact)
		}
	case VariantCompact:
		nobs = CompactFeatures
		if cfg.RTTFeature {
			nobs = CompactFeaturesRTT
		}
	default:
		return nil, fmt.Errorf("marlin: variant %q: want %q or %q", cfg.Variant, VariantPaper, VariantCompact)
	}
	if err := cfg.checkCompactOptions(); err != nil {
		return nil, err
	}
	switch cfg.Action {
	case "", ActionLinear, ActionLog2, ActionBDP:
	default:
		return nil, fmt.Errorf("marlin: action %q: want %q, %q or %q", cfg.Action, ActionLinear, ActionLog2, ActionBDP)
	}
	e := &Env{cfg: cfg, obs: make([]float32, nobs), info: env.Info{}}
	// Validate the derived scenario once, so Reset cannot fail later.
	if _, err := e.scenarioFor(1, rand.New(rand.NewPCG(1, 1))); err != nil {
		return nil, err
	}
	return e, nil
}

// ObservationSpace implements env.Env: 14 x 7 unbounded statistics (the
// paper's variant) or CompactFeatures values (the compact one;
// CompactFeaturesRTT with EnvConfig.RTTFeature).
func (e *Env) ObservationSpace() space.Space {
	return space.Uniform(float32(math.Inf(-1)), float32(math.Inf(1)), len(e.obs))
}

// ActionSpace implements env.Env: one value in [-1, 1], the fraction by
// which the window grows (or shrinks).
func (e *Env) ActionSpace() space.Space { return space.Uniform(-1, 1, 1) }

// scenarioFor derives an episode's scenario from the base.
func (e *Env) scenarioFor(seed uint64, rnd *rand.Rand) (*scenario.Scenario, error) {
	s := e.cfg.Base.Clone()
	s.Seed = seed
	f := &s.Flows[0]
	f.Protocol = "mockets"
	var tr scenario.Transport
	if f.Transport != nil {
		tr = *f.Transport
	}
	tr.PacketTimers = &e.cfg.PacketTimers
	f.Transport = &tr
	f.Count = 1
	f.Start = scenario.Duration{}
	iw := e.cfg.InitialWindow
	mss := units.Bytes(1448)
	if s.Transport.MSS.IsSet() {
		mss = s.Transport.MSS.V
	}
	if iw == 0 {
		iw = 10 * mss
	}
	f.CC = scenario.CC{Name: "external", Params: map[string]float64{
		"iw":         math.Max(1, math.Ceil(float64(iw)/float64(mss))),
		"max_window": float64(e.cfg.windowCap()),
	}}
	f.Bytes = scenario.Size{}
	bytes := e.cfg.Bytes
	if r := e.cfg.BytesRange; r[1] > 0 {
		lo, hi := math.Log(float64(max(r[0], 1))), math.Log(float64(r[1]))
		bytes = units.Bytes(math.Exp(lo + rnd.Float64()*(hi-lo)))
	}
	if bytes > 0 {
		f.Bytes = scenario.SizeOf(bytes)
	}
	e.bytes = bytes
	sched := s.Bottleneck.Schedule
	loss := e.cfg.Loss
	if e.cfg.LossRange[1] > 0 {
		loss = e.cfg.LossRange[0] + rnd.Float64()*(e.cfg.LossRange[1]-e.cfg.LossRange[0])
	}
	if loss >= 0 && len(sched) > 0 {
		sched[0].Loss = &scenario.Loss{Model: "bernoulli", P: loss}
	}
	e.cfg.Timeline.apply(s, rnd)
	// The simulation must outlast the longest episode.
	s.Duration = scenario.Dur(max(s.Duration.V, EpisodeSteps*StepInterval+time.Second))
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("marlin: derived scenario: %w", err)
	}
	return s, nil
}

// Timeline is the part of an episode's scenario that training draws at
// random: when the link switches and how heavy the SATCOM background is.
// The zero Timeline draws nothing.
type Timeline struct {
	// SwitchRange, if its upper bound is positive, draws the first
	// link switch's time uniformly from it (the authors randomise the
	// switch between 1 and 20 s in training).
	SwitchRange [2]time.Duration
	// BackgroundScale, if its upper bound is positive, scales the
	// background's UDP rates by a factor drawn from it.
	BackgroundScale [2]float64
	// SwitchExclude and BackgroundExclude, if non-empty (lower bound below
	// upper), are cut out of SwitchRange and BackgroundScale: the draw is
	// uniform over what is left, so an evaluation condition inside the
	// range stays unseen.
	SwitchExclude     [2]time.Duration
	BackgroundExclude [2]float64
	// DelayScale, if its upper bound is positive, scales each link's
	// one-way delay by a factor drawn from it: the first link's (SATCOM)
	// by one draw, every scheduled change's (UHF) by a second, so that a
	// policy meets path RTTs other than the scenario's two (ours; the
	// paper's links keep theirs).
	DelayScale [2]float64
	// RateScale, if its upper bound is positive, scales the first link's
	// rate (SATCOM) by one draw and every scheduled change's rate (UHF)
	// by a second (ours).
	RateScale [2]float64
	// QueueScale, if its upper bound is positive, scales the bottleneck
	// queue's limit (packets or bytes) by a draw, keeping at least 10
	// packets or 15 KB (ours).
	QueueScale [2]float64
}

// Check reports a range that is not increasing, a switch time that is
// not positive, a negative background scale, or a delay, rate or queue
// factor outside (0, 10].
func (t Timeline) Check() error {
	if r := t.SwitchRange; r != [2]time.Duration{} && !(0 < r[0] && r[0] <= r[1]) {
		return fmt.Errorf("marlin: switch-time range %v must be positive and increasing", r)
	}
	if r := t.BackgroundScale; r != [2]float64{} && !(0 <= r[0] && r[0] <= r[1]) {
		return fmt.Errorf("marlin: background-scale range %v must be non-negative and increasing", r)
	}
	for _, r := range []struct {
		name string
		r    [2]float64
	}{{"link-delay", t.DelayScale}, {"link-rate", t.RateScale}, {"queue-limit", t.QueueScale}} {
		if r.r != [2]float64{} && !(0 < r.r[0] && r.r[0] <= r.r[1] && r.r[1] <= 10) {
			return fmt.Errorf("marlin: %s scale range %v must be positive, increasing and at most 10", r.name, r.r)
		}
	}
	if x := t.SwitchExclude; x != [2]time.Duration{} && !(x[0] < x[1]) {
		return fmt.Errorf("marlin: excluded switch times %v must be an increasing interval", x)
	}
	if x := t.BackgroundExclude; x != [2]float64{} && !(x[0] < x[1]) {
		return fmt.Errorf("marlin: excluded background scales %v must be an increasing interval", x)
	}
	return nil
}

// TimelineRanges names the ranges SetRange sets, as `cclab marlin train`
// names its flags (the gym's options write "_" for "-").
var TimelineRanges = []string{"switch-range", "switch-exclude", "background-range", "background-exclude", "delay-range", "rate-range", "queue-range"}

// SetRange sets the range named name (one of TimelineRanges) from v,
// written "LO,HI": durations for the switch times, numbers for the rest.
// It does not check the range against the others; Check does.
func (t *Timeline) SetRange(name, v string) error {
	var err error
	switch name {
	case "switch-range":
		t.SwitchRange, err = parseRange(v, parseTime)
	case "switch-exclude":
		t.SwitchExclude, err = parseRange(v, parseTime)
	case "background-range":
		t.BackgroundScale, err = parseRange(v, parseFactor)
	case "background-exclude":
		t.BackgroundExclude, err = parseRange(v, parseFactor)
	case "delay-range":
		t.DelayScale, err = parseRange(v, parseFactor)
	case "rate-range":
		t.RateScale, err = parseRange(v, parseFactor)
	case "queue-range":
		t.QueueScale, err = parseRange(v, parseFactor)
	default:
		return fmt.Errorf("no timeline range %q (ranges: %s)", name, strings.Join(TimelineRanges, ", "))
	}
	return err
}

// parseRange reads a range written "LO,HI", each bound parsed by parse.
func parseRange[T any](v string, parse func(string) (T, error)) ([2]T, error) {
	var r [2]T
	lo, hi, ok := strings.Cut(v, ",")
	if !ok {
		return r, fmt.Errorf("want LO,HI, got %q", v)
	}
	for i, x := range []string{lo, hi} {
		x = strings.TrimSpace(x)
		b, err := parse(x)
		if err != nil {
			return r, fmt.Errorf("%q in %q: %w", x, v, err)
		}
		r[i] = b
	}
	return r, nil
}

// parseFactor parses a range bound that is a number.
func parseFactor(x string) (float64, error) {
	f, err := strconv.ParseFloat(x, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	return f, nil
}

// parseTime parses a range bound that is a duration.
func parseTime(x string) (time.Duration, error) {
	d, err := time.ParseDuration(x)
	if err != nil {
		return 0, fmt.Errorf("not a duration (e.g. 4.5s)")
	}
	return d, nil
}

// TrainingTimeline is the timeline TrainConfig.Randomize draws from unless
// told otherwise: the switch uniformly in [5 s, 15 s], the SATCOM
// background's UDP rates scaled by a factor in [0.8, 1.2].
func TrainingTimeline() Timeline {
	return Timeline{SwitchRange: [2]time.Duration{5 * time.Second, 15 * time.Second}, BackgroundScale: [2]float64{0.8, 1.2}}
}

// Draws reports whether t draws anything.
func (t Timeline) Draws() bool {
	return t.SwitchRange[1] > 0 || t.BackgroundScale[1] > 0 || t.DelayScale[1] > 0 || t.RateScale[1] > 0 || t.QueueScale[1] > 0
}

// apply draws the switch time, then the background scale, then the two
// delay scales, the two rate scales and the queue scale, from rnd into
// s. The order of the draws is part of every training run's stream; a
// draw not configured takes nothing from it, so each later range leaves
// the streams of timelines without it as they were.
func (t Timeline) apply(s *scenario.Scenario, rnd *rand.Rand) {
	if sched := s.Bottleneck.Schedule; t.SwitchRange[1] > 0 && len(sched) > 0 {
		r, x := t.SwitchRange, t.SwitchExclude
		at := time.Duration(drawExcluding(rnd.Float64(), float64(r[0]), float64(r[1]), float64(x[0]), float64(x[1])))
		sched[0].At = scenario.Dur(at.Round(time.Millisecond))
	}
	if r := t.BackgroundScale; r[1] > 0 {
		x := t.BackgroundExclude
		k := drawExcluding(rnd.Float64(), r[0], r[1], x[0], x[1])
		for i := range s.Background {
			scaleUDP(&s.Background[i], k)
		}
	}
	if r := t.DelayScale; r[1] > 0 {
		scale := func(d time.Duration, k float64) scenario.Duration {
			return scenario.Dur(time.Duration(float64(d) * k).Round(time.Microsecond))
		}
		k := uniform(rnd, r)
		s.Bottleneck.Delay = scale(s.Bottleneck.Delay.V, k)
		k = uniform(rnd, r)
		for i := range s.Bottleneck.Schedule {
			if c := &s.Bottleneck.Schedule[i]; c.Delay.IsSet() {
				c.Delay = scale(c.Delay.V, k)
			}
		}
	}
	if r := t.RateScale; r[1] > 0 {
		scale := func(b units.Bandwidth, k float64) scenario.Rate {
			return scenario.RateOf(units.Bandwidth(math.Round(float64(b) * k)))
		}
		k := uniform(rnd, r)
		if s.Bottleneck.Rate.V > 0 {
			s.Bottleneck.Rate = scale(s.Bottleneck.Rate.V, k)
		}
		k = uniform(rnd, r)
		for i := range s.Bottleneck.Schedule {
			if c := &s.Bottleneck.Schedule[i]; c.Rate.IsSet() && c.Rate.V > 0 {
				c.Rate = scale(c.Rate.V, k)
			}
		}
	}
	if r := t.QueueScale; r[1] > 0 {
		k := uniform(rnd, r)
		if l := &s.Bottleneck.Queue.Limit; l.Packets > 0 {
			*l = scenario.PacketsOf(max(10, int(math.Round(float64(l.Packets)*k))))
		} else if l.V > 0 {
			*l = scenario.SizeOf(max(15_000, units.Bytes(math.Round(float64(l.V)*k))))
		}
	}
}

// uniform draws a factor uniformly from r.
func uniform(rnd *rand.Rand, r [2]float64) float64 { return r[0] + rnd.Float64()*(r[1]-r[0]) }

// String describes t for a policy's metadata.
func (t Timeline) String() string {
	var parts []string
	if r := t.SwitchRange; r[1] > 0 {
		p := fmt.Sprintf("switch %v-%v", r[0], r[1])
		if x := t.SwitchExclude; x[0] < x[1] {
			p += fmt.Sprintf(" without %v-%v", x[0], x[1])
		}
		parts = append(parts, p)
	}
	if r := t.BackgroundScale; r[1] > 0 {
		p := fmt.Sprintf("background x%g-%g", r[0], r[1])
		if x := t.BackgroundExclude; x[0] < x[1] {
			p += fmt.Sprintf(" without x%g-%g", x[0], x[1])
		}
		parts = append(parts, p)
	}
	if r := t.DelayScale; r[1] > 0 {
		parts = append(parts, fmt.Sprintf("link delays x%g-%g", r[0], r[1]))
	}
	if r := t.RateScale; r[1] > 0 {
		parts = append(parts, fmt.Sprintf("link rates x%g-%g", r[0], r[1]))
	}
	if r := t.QueueScale; r[1] > 0 {
		parts = append(parts, fmt.Sprintf("queue limit x%g-%g", r[0], r[1]))
	}
	if len(parts) == 0 {
		return "the base's timeline"
	}
	return strings.Join(parts, ", ")
}

// drawExcluding maps u in [0, 1) uniformly onto [lo, hi] without the open
// interval (xlo, xhi); with xlo >= xhi (nothing excluded) it is
// lo + u (hi - lo), the draw of the builds before exclusions.
func drawExcluding(u, lo, hi, xlo, xhi float64) float64 {
	xlo, xhi = max(xlo, lo), min(xhi, hi)
	if xlo >= xhi {
		return lo + u*(hi-lo)
	}
	v := lo + u*((hi-lo)-(xhi-xlo))
	if v >= xlo {
		v += xhi - xlo
	}
	return v
}

// scaleUDP scales the rates of b's UDP sources (in a sequence, its
// parts') by k.
func scaleUDP(b *scenario.Background, k float64) {
	scaleRates(b, k, func(typ string) bool { return typ == "cbr" || typ == "poisson" || typ == "onoff" || typ == "mice" })
}

// scaleRates scales by k the rates of b, or of its sequence's parts,
// whose type is one of.
func scaleRates(b *scenario.Background, k float64, of func(typ string) bool) {
	if of(b.Type) {
		b.Rate = scenario.RateOf(units.Bandwidth(float64(b.Rate.V) * k))
	}
	for i := range b.Sequence {
		scaleRates(&b.Sequence[i], k, of)
	}
}

// Reset implements env.Env: a new episode on a fresh network whose every
// random stream derives from seed.
func (e *Env) Reset(seed uint64) ([]float32, env.Info) {
	rnd := rand.New(rand.NewPCG(seed, 0x6d61726c696e))
	s, err := e.scenarioFor(seed, rnd)
	if err != nil {
		panic(err) // validated in NewEnv
	}
	n, err := network.Build(s)
	if err != nil {
		panic(fmt.Sprintf("marlin: building a validated scenario: %v", err))
	}
	e.net = n
	e.flow = n.Flows[0]
	e.ext = e.flow.Sender.CC().(cc.WindowSetter)
	e.mss = e.flow.Sender.Config().MSS
	prev := e.flow.Sender.OnRTT
	e.flow.Sender.OnRTT = func(now clock.Time, rtt time.Duration) {
		prev(now, rtt)
		e.meter.onRTT(rtt)
		e.compact.onRTT(rtt)
	}
	e.meter.reset(0)
	bw, rtt := e.cfg.filterSteps()
	e.compact.reset(0, e.bytes, e.flow.Sender.CC().CongestionWindow(), bw, rtt)
	e.lastCap, e.lastUDP, e.lastBG, e.lastIdealCap = 0, 0, 0, 0
	e.targetBytes, e.steps, e.done = 0, 0, false
	e.rewardSum, e.retxEpisode = 0, 0
	e.lossNow = n.Bottleneck.LossRate()
	clear(e.obs)
	clear(e.info)
	return e.obs, e.info
}

// Step implements env.Env: set the window from the action (WindowFor, or
// BDPWindow for ActionBDP), simulate one step, and observe.
func (e *Env) Step(action []float32) ([]float32, float64, bool, bool, env.Info) {
	if e.net == nil {
		panic("marlin: Step before Reset")
	}
	now := e.net.Now()
	var w units.Bytes
	if e.cfg.Action == ActionBDP {
		w = bdpWindow(action[0], e.cfg.BDPSpan, e.compact.bdp, e.mss, e.cfg.windowCap())
	} else {
		w = windowFor(e.cfg.Action, action[0], e.flow.Sender.CC().CongestionWindow(), e.mss, e.cfg.windowCap())
	}
	e.ext.SetCongestionWindow(now, w)

	end := now.Add(StepInterval)
	e.net.Sched.RunUntil(end)
	if e.net.Sched.Stopped() || e.flow.Done() {
		e.done = true
	}
	r := e.observe(end)
	e.steps++
	return e.obs, r, e.done, false, e.info
}

// observe measures the step that ended at now, updates the statistics and
// returns the reward.
func (e *Env) observe(now clock.Time) float64 {
	f := e.flow
	snd := f.Sender
	st := snd.State()
	if e.cfg.Variant == VariantCompact {
		return e.observeCompact(now, st)
	}
	v, retx := e.meter.measure(now, st, e.obs)
	kb := func(b units.Bytes) float64 { return float64(b) / 1000 }

	// Reward (equation 1): loss_c is the loss in force during the step.
	e.targetBytes += e.linkLeft(now)
	lossC := e.lossNow
	e.lossNow = e.net.Bottleneck.LossRate()
	r := Reward(e.targetBytes/1000, kb(st.Stats.BytesAcked), int(retx), lossC)
	e.rewardSum += r
	e.retxEpisode += float64(retx)
	e.info["target_kb"] = e.targetBytes / 1000
	e.info["acked_kb"] = kb(st.Stats.BytesAcked)
	e.info["retransmissions"] = float64(retx)
	e.info["cwnd_kb"] = v[FeatCwnd]
	e.info["loss"] = lossC
	return r
}

// observeCompact is observe for the compact variant: the compact features
// and CompactReward, whose queueing term compares the step's largest RTT
// with the current link's nominal RTT (privileged information, as
// equation 1's target is: the policy never sees it).
func (e *Env) observeCompact(now clock.Time, st tcp.FlowState) float64 {
	s := e.compact.measure(now, st, e.obs)
	nom := e.net.NominalRTT(e.flow, e.net.CurrentSegment())
	infl := 1.0
	if nom > 0 && s.maxRTT > 0 {
		infl = float64(s.maxRTT) / float64(nom)
	}
	qc, ref := e.compactWeights()
	r := compactReward(s.dt, s.delivered, s.retx, infl, qc, ref)
	e.rewardSum += r
	e.retxEpisode += float64(s.retx)
	e.info["delivered_kb"] = s.delivered / 1000
	e.info["retransmissions"] = float64(s.retx)
	e.info["cwnd_kb"] = float64(st.Cwnd) / 1000
	e.info["bdp_kb"] = float64(s.bdp) / 1000
	e.info["rtt_inflation"] = infl
	return r
}

// compactWeights returns the compact reward's queueing weight and the
// rate, in bytes/s, at which it credits delivered bytes now: the
// configured weight or QueueCost, and the current link's rate with link
// shaping or RefRate.
func (e *Env) compactWeights() (qc, ref float64) {
	qc, ref = QueueCost, RefRate
	if c := e.cfg.QueueCost; c > 0 {
		qc = c
	}
	if e.cfg.LinkShaping {
		ref = float64(e.net.LinkRate().BytesIn(time.Second))
	}
	return qc, ref
}

// linkLeft returns target_t's increment for the step ending at now: the
// payload bytes the agent's flow could have delivered "to fully utilize the
// link" (paper section IV-C), the link's capacity minus the traffic influx
// from the competing sources, UDP and TCP alike, in payload bytes. It is
// what the bottleneck offers once the background has sent what it wanted;
// when the agent pushes an adaptive background flow back, the target grows,
// so the agent is asked to use the capacity it frees, not to stop at a fair
// share.
func (e *Env) linkLeft(now clock.Time) float64 {
	n := e.net
	capacity := n.Bottleneck.Capacity(now)
	bg := e.udpSent()
	for _, f := range n.Flows {
		if f.Background {
			st := f.Sender.Stats()
			bg += st.BytesSent + units.Bytes(st.SegmentsSent)*f.Sender.Config().Header
		}
	}
	left := float64(capacity-e.lastCap) - float64(bg-e.lastBG)
	e.lastCap, e.lastBG = capacity, bg
	if left <= 0 {
		return 0
	}
	return e.payload(left)
}

// udpSent returns the bytes the background's UDP sources have sent so far.
func (e *Env) udpSent() units.Bytes {
	var b units.Bytes
	for _, s := range e.net.Sources {
		b += s.SentBytes
	}
	return b
}

// payload converts wire bytes to the agent flow's payload bytes.
func (e *Env) payload(wire float64) float64 {
	cfg := e.flow.Sender.Config()
	return wire * float64(cfg.MSS) / float64(cfg.MSS+cfg.Header)
}

// leftover returns the payload bytes the link could carry since the last
// call beyond what the UDP background sent: the Ideal scheme's capacity.
func (e *Env) leftover(now clock.Time) float64 {
	n := e.net
	capacity := n.Bottleneck.Capacity(now)
	udp := e.udpSent()
	left := float64(capacity-e.lastIdealCap) - float64(udp-e.lastUDP)
	e.lastIdealCap, e.lastUDP = capacity, udp
	if left <= 0 {
		return 0
	}
	return e.payload(left)
}

// Network returns the current episode's network (for evaluation).
func (e *Env) Network() *network.Network { return e.net }

// Flow returns the agent's flow in the current episode.
func (e *Env) Flow() *network.Flow { return e.flow }

// NewTrainingEnv wraps an environment the way the paper trains: 10 stacked
// states (CompactHistory for the compact variant) and 200-step episodes
// truncated (not terminated).
func NewTrainingEnv(cfg EnvConfig) (env.Env, error) { return NewFrameSkipTrainingEnv(cfg, 1) }

// NewFrameSkipTrainingEnv is NewTrainingEnv with each action repeated for
// skip steps (ActionRepeat, outside the stack so the observation still
// holds the last History 100-ms steps) and episodes of EpisodeSteps/skip
// actions, 20 s as without repetition: the environment of TrainConfig's
// FrameSkip. skip must divide EpisodeSteps.
func NewFrameSkipTrainingEnv(cfg EnvConfig, skip int) (env.Env, error) {
	e, _, err := newTrainingEnv(cfg, skip)
	return e, err
}

// newTrainingEnv is NewFrameSkipTrainingEnv also returning the core, which
// a demonstrator reads.
func newTrainingEnv(cfg EnvConfig, skip int) (env.Env, *Env, error) {
	if skip < 1 || EpisodeSteps%skip != 0 {
		return nil, nil, fmt.Errorf("marlin: frame skip %d must be a positive divisor of the episode's %d steps", skip, EpisodeSteps)
	}
	core, err := NewEnv(cfg)
	if err != nil {
		return nil, nil, err
	}
	st, err := env.NewStack(core, historyFor(cfg.Variant), true)
	if err != nil {
		return nil, nil, err
	}
	var e env.Env = st
	if skip > 1 {
		if e, err = env.NewActionRepeat(st, skip); err != nil {
			return nil, nil, err
		}
	}
	return env.NewTimeLimit(e, EpisodeSteps/skip), core, nil
}
