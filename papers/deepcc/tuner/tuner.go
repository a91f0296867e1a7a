// Package tuner is DeepCC's online goal tuner (paper section IV-C, "online
// tuning"): it treats the trained agent as a black box whose knob is the
// goal vector g = (throughput, delay, loss) and adjusts g by
// multi-dimensional gradient descent until the measured performance meets an
// application's target T (a minimum throughput and maximum delay and loss).
//
// The paper's equations did not survive in our copy of the text, so the
// update is reconstructed from its prose; every rule below cites the
// sentence it implements:
//
//   - "we set a k-step average of J as the loss function": the measurement
//     m̄ the tuner compares with T is the mean of the last K tuning
//     intervals.
//   - "if m^(i) satisfies the bound of T^(i), we set f(g^(i)) = T^(i).
//     Namely, we only update gradients when the target requirements are not
//     satisfied": the per-metric error e_i is the relative shortfall
//     max(0, T_i - m̄_i)/|T_i| in the "higher is better" space
//     m = (throughput, -delay, -loss), and J = ½ Σ e_i².
//   - "we use a numerical method to approximate ∇f(g)": ∂m̄_i/∂g_i is the
//     secant (m̄_i(t) - m̄_i(t-1)) / (g_i(t) - g_i(t-1)) along the tuner's
//     own trajectory (one dimension at a time; cross terms are ignored, as
//     the paper's per-dimension notation suggests). When g_i barely moved
//     the previous estimate is kept; before any estimate the prior is "one
//     unit of the bound per unit of weight, improving".
//   - "we combine Adam": the gradient ∂J/∂g_i = -e_i · (∂m̄_i/∂g_i)/|T_i|
//     drives an Adam step (Kingma & Ba 2015) on g.
//   - "if the distance between the i-th measurement and target is larger
//     than a threshold, the i-th goal is increased by a pre-setting value":
//     the jump-out rule, applied after the Adam step.
//   - "if the target is not satisfied with the measurement of throughput or
//     delay, the gradient of loss rate will be set to equal that of delay"
//     and "if the observed loss rate is higher than that of target and the
//     other two dimensions are satisfied, DeepCC does not update": the loss
//     weight only ever moves with the delay weight (its gradient and jump
//     are the delay's), so random, non-congestion loss cannot steer it.
//   - "each dimension of updated goal g^(i) will be normalized": weights are
//     floored at MinWeight and divided by their sum.
//
// The tuner works in the application's units (Mbit/s, ms, fraction) and
// never sees the agent: the caller measures each tuning interval (the paper
// uses four RTTs), calls Observe, and feeds the returned goal to the agent.
// It is deterministic and reads no clock.
package tuner

import (
	"errors"
	"fmt"
	"math"
)

// Dimensions of the goal and measurement vectors.
const (
	// Throughput is the index of the throughput weight.
	Throughput = iota
	// Delay is the index of the delay weight.
	Delay
	// Loss is the index of the loss weight.
	Loss
	// Dims is the number of dimensions.
	Dims
)

// Metrics is one tuning interval's measured performance, in the
// application's units.
type Metrics struct {
	// ThroughputMbps is the delivery rate, Mbit/s.
	ThroughputMbps float64 `json:"throughput_mbps"`
	// DelayMs is the queueing delay, ms (DeepCC uses the 95th percentile of
	// the interval's samples).
	DelayMs float64 `json:"delay_ms"`
	// Loss is the fraction of packets lost, in [0, 1].
	Loss float64 `json:"loss"`
}

// Target is an application's requirement (the paper's T, Table II): a lower
// bound on throughput and upper bounds on delay and loss. A zero field means
// "no bound on this metric" (the paper's "(n-1)-dimensional" targets).
type Target struct {
	// MinThroughputMbps is the throughput to reach, Mbit/s [0: none].
	MinThroughputMbps float64 `json:"min_throughput_mbps,omitempty"`
	// MaxDelayMs is the queueing delay not to exceed, ms [0: none].
	MaxDelayMs float64 `json:"max_delay_ms,omitempty"`
	// MaxLoss is the loss rate not to exceed, in (0, 1) [0: none].
	MaxLoss float64 `json:"max_loss,omitempty"`
}

// Validate reports a target that cannot be used.
func (t Target) Validate() error {
	for _, v := range []float64{t.MinThroughputMbps, t.MaxDelayMs, t.MaxLoss} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("tuner: target %+v: bounds must be finite and non-negative (0 = no bound)", t)
		}
	}
	if t.MaxLoss >= 1 {
		return fmt.Errorf("tuner: target max loss %g must be below 1 (0 = no bound)", t.MaxLoss)
	}
	if t.MinThroughputMbps == 0 && t.MaxDelayMs == 0 && t.MaxLoss == 0 {
		return errors.New("tuner: target sets no bound")
	}
	return nil
}

// Met reports whether m satisfies every bound of t.
func (t Target) Met(m Metrics) bool {
	ok := true
	if t.MinThroughputMbps > 0 {
		ok = ok && m.ThroughputMbps >= t.MinThroughputMbps
	}
	if t.MaxDelayMs > 0 {
		ok = ok && m.DelayMs <= t.MaxDelayMs
	}
	if t.MaxLoss > 0 {
		ok = ok && m.Loss <= t.MaxLoss
	}
	return ok
}

// String formats the target as the paper does ("8 Mbit/s, 70 ms, 1%").
func (t Target) String() string {
	s := ""
	add := func(x string) {
		if s != "" {
			s += ", "
		}
		s += x
	}
	if t.MinThroughputMbps > 0 {
		add(fmt.Sprintf(">= %.3g Mbit/s", t.MinThroughputMbps))
	}
	if t.MaxDelayMs > 0 {
		add(fmt.Sprintf("<= %.3g ms", t.MaxDelayMs))
	}
	if t.MaxLoss > 0 {
		add(fmt.Sprintf("<= %.3g%% loss", 100*t.MaxLoss))
	}
	return s
}

// Config holds the tuner's settings. Zero fields take the defaults in
// brackets; the paper gives none of these values. WithDefaults returns
// the effective settings.
type Config struct {
	// LearningRate is Adam's step size α on the goal weights [0.05].
	LearningRate float64
	// Beta1, Beta2 and Epsilon are Adam's moment decays and stabiliser
	// [0.9, 0.999, 1e-8: Kingma & Ba's defaults].
	Beta1, Beta2, Epsilon float64
	// K is the number of tuning intervals averaged into m̄ [4].
	K int
	// JumpThreshold is the relative distance e_i beyond which the jump-out
	// rule adds JumpStep to g_i [0.5: half the bound away]. A negative
	// value disables the rule.
	JumpThreshold float64
	// JumpStep is the jump-out rule's increment [0.05].
	JumpStep float64
	// MinWeight floors each weight before normalisation, so no metric is
	// ever ignored completely and secants stay defined [0.01].
	MinWeight float64
	// MinDelta is the smallest change of g_i that yields a new secant
	// estimate [1e-3]; smaller changes keep the previous estimate.
	MinDelta float64
	// RawSlopes uses the secant as it is. By default the secant's sign is
	// replaced by the prior's (a metric's own weight improves it, which is
	// what training with the reward g·m teaches the agent) and only its
	// magnitude is kept: on a cellular link one interval's throughput
	// swings by more than any goal change moves it, so a secant of the
	// wrong sign is almost always noise, and following it steps away from
	// the target.
	RawSlopes bool
}

func (c *Config) defaults() {
	def := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.LearningRate, 0.05)
	def(&c.Beta1, 0.9)
	def(&c.Beta2, 0.999)
	def(&c.Epsilon, 1e-8)
	def(&c.JumpThreshold, 0.5)
	def(&c.JumpStep, 0.05)
	def(&c.MinWeight, 0.01)
	def(&c.MinDelta, 1e-3)
	if c.K == 0 {
		c.K = 4
	}
}

// WithDefaults returns c with its zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	c.defaults()
	return c
}

func (c *Config) validate() error {
	switch {
	case !(c.LearningRate > 0):
		return fmt.Errorf("tuner: learning rate %g must be positive", c.LearningRate)
	case !(c.Beta1 >= 0 && c.Beta1 < 1 && c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("tuner: Adam betas %g, %g must be in [0, 1)", c.Beta1, c.Beta2)
	case !(c.Epsilon > 0):
		return fmt.Errorf("tuner: epsilon %g must be positive", c.Epsilon)
	case c.K < 1:
		return fmt.Errorf("tuner: K %d must be at least 1", c.K)
	case !(c.JumpStep >= 0) || math.IsNaN(c.JumpThreshold):
		return fmt.Errorf("tuner: jump step %g must be >= 0 and the threshold a number", c.JumpStep)
	case !(c.MinWeight > 0 && c.MinWeight < 1.0/Dims):
		return fmt.Errorf("tuner: min weight %g must be in (0, 1/3)", c.MinWeight)
	case !(c.MinDelta > 0):
		return fmt.Errorf("tuner: min delta %g must be positive", c.MinDelta)
	}
	return nil
}

// Step describes one call of Observe, for logs and tests.
type Step struct {
	// Mean is the K-interval average m̄ the decision used.
	Mean Metrics `json:"mean"`
	// Error is the relative shortfall e_i per dimension (0 where the bound
	// is met or absent).
	Error [Dims]float64 `json:"error"`
	// Slope is the secant estimate of ∂m̄_i/∂g_i in "higher is better"
	// units (Mbit/s, -ms, -fraction per unit weight).
	Slope [Dims]float64 `json:"slope"`
	// Gradient is ∂J/∂g after the loss rule.
	Gradient [Dims]float64 `json:"gradient"`
	// Jumped reports which dimensions the jump-out rule increased.
	Jumped [Dims]bool `json:"jumped"`
	// Updated is false when the tuner left the goal alone (target met, or
	// only the loss bound violated).
	Updated bool `json:"updated"`
	// Goal is the goal after the step.
	Goal [Dims]float64 `json:"goal"`
}

// Tuner adjusts the goal vector towards a target. It is not safe for
// concurrent use.
type Tuner struct {
	cfg    Config
	target Target
	bound  [Dims]float64 // T in "higher is better" space
	active [Dims]bool    // which bounds are set

	goal    [Dims]float64 // current normalised goal
	hist    []Metrics     // last K intervals, oldest first
	prevM   [Dims]float64 // m̄ at the previous step
	prevG   [Dims]float64 // goal in force when prevM was measured
	havePrv bool
	slope   [Dims]float64

	m, v [Dims]float64 // Adam moments
	t    int           // Adam step count
	last Step
}

// New returns a tuner that starts from goal initial (three non-negative
// weights, normalised here) and pursues target.
func New(target Target, initial [Dims]float64, cfg Config) (*Tuner, error) {
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := target.Validate(); err != nil {
		return nil, err
	}
	sum := 0.0
	for _, w := range initial {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("tuner: initial goal %v must have finite, non-negative weights", initial)
		}
		sum += w
	}
	if sum <= 0 {
		return nil, fmt.Errorf("tuner: initial goal %v has no positive weight", initial)
	}
	tu := &Tuner{cfg: cfg, target: target}
	tu.bound = [Dims]float64{target.MinThroughputMbps, -target.MaxDelayMs, -target.MaxLoss}
	tu.active = [Dims]bool{target.MinThroughputMbps > 0, target.MaxDelayMs > 0, target.MaxLoss > 0}
	tu.goal = tu.normalise(initial)
	for i := range tu.slope {
		// Prior: one bound's worth of improvement per unit of weight.
		tu.slope[i] = math.Max(math.Abs(tu.bound[i]), 1e-9)
	}
	tu.last.Goal = tu.goal
	return tu, nil
}

// Goal returns the current goal (weights summing to 1).
func (tu *Tuner) Goal() [Dims]float64 { return tu.goal }

// Target returns the target.
func (tu *Tuner) Target() Target { return tu.target }

// Last returns the diagnostics of the latest Observe.
func (tu *Tuner) Last() Step { return tu.last }

// Mean returns the average of the last K intervals observed.
func (tu *Tuner) Mean() Metrics {
	var s Metrics
	for _, h := range tu.hist {
		s.ThroughputMbps += h.ThroughputMbps
		s.DelayMs += h.DelayMs
		s.Loss += h.Loss
	}
	if n := float64(len(tu.hist)); n > 0 {
		s.ThroughputMbps /= n
		s.DelayMs /= n
		s.Loss /= n
	}
	return s
}

// Observe records the latest tuning interval's measurement (taken under the
// current goal) and returns the goal for the next interval. Non-finite
// measurements are rejected with an error and change nothing.
func (tu *Tuner) Observe(m Metrics) ([Dims]float64, error) {
	for _, v := range []float64{m.ThroughputMbps, m.DelayMs, m.Loss} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return tu.goal, fmt.Errorf("tuner: measurement %+v must be finite and non-negative", m)
		}
	}
	if len(tu.hist) == tu.cfg.K {
		copy(tu.hist, tu.hist[1:])
		tu.hist = tu.hist[:len(tu.hist)-1]
	}
	tu.hist = append(tu.hist, m)
	mean := tu.Mean()
	mv := [Dims]float64{mean.ThroughputMbps, -mean.DelayMs, -mean.Loss}

	step := Step{Mean: mean}
	// Secant estimate of ∂m̄_i/∂g_i along the trajectory.
	if tu.havePrv {
		for i := range Dims {
			if dg := tu.goal[i] - tu.prevG[i]; math.Abs(dg) >= tu.cfg.MinDelta {
				tu.slope[i] = (mv[i] - tu.prevM[i]) / dg
				if !tu.cfg.RawSlopes {
					// Keep a floor so a flat secant does not stall
					// the step (Adam rescales the gradient anyway).
					tu.slope[i] = math.Max(math.Abs(tu.slope[i]), 1e-3*math.Abs(tu.bound[i]))
				}
			}
		}
	}
	tu.prevM, tu.prevG, tu.havePrv = mv, tu.goal, true
	step.Slope = tu.slope

	// Relative shortfall per bound: zero where met ("f(g_i) = T_i").
	for i := range Dims {
		if tu.active[i] && mv[i] < tu.bound[i] {
			step.Error[i] = (tu.bound[i] - mv[i]) / math.Abs(tu.bound[i])
		}
	}
	// ∂J/∂g_i for J = ½ Σ e_i², e_i = (T_i - m̄_i)/|T_i|.
	var grad [Dims]float64
	for _, i := range []int{Throughput, Delay} {
		if step.Error[i] > 0 {
			grad[i] = -step.Error[i] * tu.slope[i] / math.Abs(tu.bound[i])
		}
	}
	// The loss rule: the loss weight follows the delay weight while
	// throughput or delay misses its bound, and is otherwise left alone,
	// so random loss alone never moves the goal.
	thrOrDelayMissed := step.Error[Throughput] > 0 || step.Error[Delay] > 0
	if thrOrDelayMissed {
		grad[Loss] = grad[Delay]
	}
	step.Gradient = grad
	if !thrOrDelayMissed {
		// Target met (or only its loss bound missed): keep the goal and
		// Adam's state as they are.
		step.Goal = tu.goal
		tu.last = step
		return tu.goal, nil
	}

	// Adam on the (unnormalised) weights.
	tu.t++
	c := tu.cfg
	b1c := 1 - math.Pow(c.Beta1, float64(tu.t))
	b2c := 1 - math.Pow(c.Beta2, float64(tu.t))
	g := tu.goal
	for i := range Dims {
		tu.m[i] = c.Beta1*tu.m[i] + (1-c.Beta1)*grad[i]
		tu.v[i] = c.Beta2*tu.v[i] + (1-c.Beta2)*grad[i]*grad[i]
		g[i] -= c.LearningRate * (tu.m[i] / b1c) / (math.Sqrt(tu.v[i]/b2c) + c.Epsilon)
	}
	// Jump-out rule for the throughput and delay weights; the loss weight
	// jumps with the delay weight (it "always follows the gradient of
	// delay").
	if c.JumpThreshold >= 0 {
		for _, i := range []int{Throughput, Delay} {
			if step.Error[i] > c.JumpThreshold {
				g[i] += c.JumpStep
				step.Jumped[i] = true
			}
		}
		if step.Jumped[Delay] {
			g[Loss] += c.JumpStep
			step.Jumped[Loss] = true
		}
	}
	tu.goal = tu.normalise(g)
	step.Updated = true
	step.Goal = tu.goal
	tu.last = step
	return tu.goal, nil
}

// normalise floors each weight at MinWeight and scales the weights to sum
// to 1 (the paper's normalisation before the goal reaches the agent).
func (tu *Tuner) normalise(g [Dims]float64) [Dims]float64 {
	sum := 0.0
	for i := range g {
		g[i] = math.Max(g[i], tu.cfg.MinWeight)
		sum += g[i]
	}
	for i := range g {
		g[i] /= sum
	}
	return g
}

// SetTarget replaces the target the tuner pursues, keeping its goal, its
// measurement history and Adam's state. DeepCC's preference modes use it:
// their bound follows what the flow observes (its minimum RTT, its highest
// bandwidth estimate).
func (tu *Tuner) SetTarget(target Target) error {
	if err := target.Validate(); err != nil {
		return err
	}
	tu.target = target
	tu.bound = [Dims]float64{target.MinThroughputMbps, -target.MaxDelayMs, -target.MaxLoss}
	tu.active = [Dims]bool{target.MinThroughputMbps > 0, target.MaxDelayMs > 0, target.MaxLoss > 0}
	return nil
}
