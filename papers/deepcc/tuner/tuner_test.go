package tuner

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// agentModel is a synthetic f(g): a stand-in for the trained agent whose
// throughput and delay both grow with the throughput weight and shrink with
// the delay and loss weights (the shape the trade-off front gives), plus
// multiplicative measurement noise and an optional random loss that no goal
// can change.
type agentModel struct {
	capMbps, maxDelayMs float64
	noise               float64    // relative, uniform in ±noise
	lossLo, lossHi      float64    // random loss range
	plateau             float64    // x below which throughput is flat
	rnd                 *rand.Rand // seeded
}

func (a *agentModel) x(g [Dims]float64) float64 {
	return g[Throughput] - g[Delay] - 0.5*g[Loss]
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func (a *agentModel) measure(g [Dims]float64) Metrics {
	x := a.x(g)
	thr := a.capMbps * sigmoid(4*x)
	if a.plateau != 0 {
		// Flat (zero gradient) below the plateau edge: a local optimum
		// for a pure gradient method.
		thr = a.capMbps * (0.3 + math.Max(0, x-a.plateau))
	}
	delay := a.maxDelayMs * sigmoid(4*x-0.5)
	n := func() float64 { return 1 + a.noise*(2*a.rnd.Float64()-1) }
	loss := a.lossLo
	if a.lossHi > a.lossLo {
		loss += a.rnd.Float64() * (a.lossHi - a.lossLo)
	}
	return Metrics{ThroughputMbps: thr * n(), DelayMs: delay * n(), Loss: loss}
}

// run drives the tuner for n intervals and returns the fraction of the last
// tail intervals whose noiseless measurement met the target.
func run(t *testing.T, tu *Tuner, a *agentModel, n, tail int) float64 {
	t.Helper()
	g := tu.Goal()
	met := 0
	for k := 0; k < n; k++ {
		m := a.measure(g)
		var err error
		if g, err = tu.Observe(m); err != nil {
			t.Fatalf("Observe(%+v): %v", m, err)
		}
		sum := 0.0
		for _, w := range g {
			if w < 0 || math.IsNaN(w) {
				t.Fatalf("interval %d: goal %v has a negative or NaN weight", k, g)
			}
			sum += w
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("interval %d: goal %v sums to %g, want 1", k, g, sum)
		}
		if k >= n-tail {
			clean := *a
			clean.noise = 0
			if tu.Target().Met(clean.measure(g)) {
				met++
			}
		}
	}
	return float64(met) / float64(tail)
}

func TestConvergesToReachableTarget(t *testing.T) {
	target := Target{MinThroughputMbps: 6, MaxDelayMs: 80}
	// Feasible set: 0.101 <= x <= 0.47 (see agentModel).
	for _, tc := range []struct {
		name  string
		start [Dims]float64
	}{
		{"from low delay", [Dims]float64{0.1, 0.8, 0.1}},
		{"from high throughput", [Dims]float64{0.9, 0.05, 0.05}},
		{"from balanced", [Dims]float64{1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &agentModel{capMbps: 10, maxDelayMs: 100, noise: 0.05, rnd: rand.New(rand.NewPCG(1, 2))}
			tu, err := New(target, tc.start, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if frac := run(t, tu, a, 300, 100); frac < 0.9 {
				t.Errorf("target met in %.0f%% of the last 100 intervals, want >= 90%% (final goal %v, x = %.3f, want in [0.10, 0.47])",
					100*frac, tu.Goal(), a.x(tu.Goal()))
			}
		})
	}
}

func TestStaysPutWhenTargetMet(t *testing.T) {
	a := &agentModel{capMbps: 10, maxDelayMs: 100, noise: 0.02, rnd: rand.New(rand.NewPCG(3, 4))}
	start := [Dims]float64{0.5, 0.2, 0.3} // x = 0.15: feasible
	tu, err := New(Target{MinThroughputMbps: 6, MaxDelayMs: 80}, start, Config{})
	if err != nil {
		t.Fatal(err)
	}
	g0 := tu.Goal()
	for k := 0; k < 50; k++ {
		g, err := tu.Observe(a.measure(tu.Goal()))
		if err != nil {
			t.Fatal(err)
		}
		if g != g0 || tu.Last().Updated {
			t.Fatalf("interval %d: goal moved from %v to %v although the target is met", k, g0, g)
		}
	}
}

// TestRandomLossDoesNotMoveGoal checks the loss-gradient rule: loss the goal
// cannot influence, above the target's bound, leaves the goal unchanged when
// throughput and delay are met, and the loss gradient equals the delay
// gradient whenever one of them is missed.
func TestRandomLossDoesNotMoveGoal(t *testing.T) {
	a := &agentModel{capMbps: 10, maxDelayMs: 100, lossLo: 0.02, lossHi: 0.04, rnd: rand.New(rand.NewPCG(5, 6))}
	start := [Dims]float64{0.5, 0.2, 0.3}
	tu, err := New(Target{MinThroughputMbps: 6, MaxDelayMs: 80, MaxLoss: 0.01}, start, Config{})
	if err != nil {
		t.Fatal(err)
	}
	g0 := tu.Goal()
	for k := 0; k < 50; k++ {
		if _, err := tu.Observe(a.measure(tu.Goal())); err != nil {
			t.Fatal(err)
		}
		st := tu.Last()
		if st.Error[Loss] <= 0 {
			t.Fatalf("interval %d: loss error %g, want > 0 (loss %.3f above the 1%% bound)", k, st.Error[Loss], st.Mean.Loss)
		}
		if st.Updated || tu.Goal() != g0 || st.Gradient != [Dims]float64{} {
			t.Fatalf("interval %d: random loss moved the goal %v -> %v (gradient %v)", k, g0, tu.Goal(), st.Gradient)
		}
	}

	// Now miss the delay bound too: the loss gradient must be the delay's.
	a2 := &agentModel{capMbps: 10, maxDelayMs: 100, lossLo: 0.02, lossHi: 0.04, noise: 0.05, rnd: rand.New(rand.NewPCG(7, 8))}
	tu2, err := New(Target{MinThroughputMbps: 3, MaxDelayMs: 50, MaxLoss: 0.01}, [Dims]float64{0.9, 0.05, 0.05}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	sawDelayMiss := false
	for k := 0; k < 100; k++ {
		if _, err := tu2.Observe(a2.measure(tu2.Goal())); err != nil {
			t.Fatal(err)
		}
		st := tu2.Last()
		if st.Error[Delay] > 0 {
			sawDelayMiss = true
		}
		if (st.Error[Delay] > 0 || st.Error[Throughput] > 0) && st.Gradient[Loss] != st.Gradient[Delay] {
			t.Fatalf("interval %d: loss gradient %g, want the delay gradient %g", k, st.Gradient[Loss], st.Gradient[Delay])
		}
		if st.Jumped[Loss] != st.Jumped[Delay] {
			t.Fatalf("interval %d: loss jump %v differs from delay jump %v", k, st.Jumped[Loss], st.Jumped[Delay])
		}
	}
	if !sawDelayMiss {
		t.Fatalf("the delay bound was never missed; the test exercises nothing")
	}
	// Throughput and delay (the bounds the goal can reach) end up met.
	g := tu2.Goal()
	thr := a2.capMbps * sigmoid(4*a2.x(g))
	d := a2.maxDelayMs * sigmoid(4*a2.x(g)-0.5)
	if thr < 3 || d > 50 {
		t.Errorf("final goal %v gives %.2f Mbit/s and %.1f ms, want >= 3 and <= 50", g, thr, d)
	}
}

// TestJumpOutOfPlateau: on a flat region the numerical gradient is zero and
// Adam stalls; the jump-out rule must carry the goal to the target.
func TestJumpOutOfPlateau(t *testing.T) {
	target := Target{MinThroughputMbps: 7}
	start := [Dims]float64{0.05, 0.9, 0.05}
	mk := func() *agentModel {
		return &agentModel{capMbps: 10, maxDelayMs: 100, plateau: 0.2, rnd: rand.New(rand.NewPCG(9, 10))}
	}
	with, err := New(target, start, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if frac := run(t, with, mk(), 200, 50); frac < 0.9 {
		t.Errorf("with the jump-out rule: target met in %.0f%% of the last 50 intervals, want >= 90%% (goal %v)", 100*frac, with.Goal())
	}
	without, err := New(target, start, Config{JumpThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	if frac := run(t, without, mk(), 200, 50); frac != 0 {
		t.Errorf("without the jump-out rule the plateau should trap plain gradient descent; target met in %.0f%% of intervals", 100*frac)
	}
}

func TestSecantAndGradientHandComputed(t *testing.T) {
	tu, err := New(Target{MinThroughputMbps: 10}, [Dims]float64{0.5, 0.25, 0.25}, Config{K: 1, JumpThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	// First interval: no secant yet, prior slope |T| = 10.
	if _, err := tu.Observe(Metrics{ThroughputMbps: 5, DelayMs: 20}); err != nil {
		t.Fatal(err)
	}
	st := tu.Last()
	if st.Error[Throughput] != 0.5 {
		t.Errorf("error = %g, want (10-5)/10 = 0.5", st.Error[Throughput])
	}
	if want := -0.5 * 10 / 10; st.Gradient[Throughput] != want {
		t.Errorf("gradient = %g, want -e*slope/|T| = %g", st.Gradient[Throughput], want)
	}
	// Adam's first step moves each weight by the learning rate against
	// the gradient's sign: g_thr 0.5 -> 0.55, then normalised by 1.05.
	g := tu.Goal()
	if want := 0.55 / 1.05; math.Abs(g[Throughput]-want) > 1e-9 {
		t.Errorf("goal after one step = %v, want throughput weight %g", g, want)
	}
	g0 := st.Goal
	// Second interval: throughput rose by 2 while g_thr rose by
	// g0[0]-0.5: the secant is their ratio.
	if _, err := tu.Observe(Metrics{ThroughputMbps: 7, DelayMs: 20}); err != nil {
		t.Fatal(err)
	}
	if want := 2 / (g0[Throughput] - 0.5); math.Abs(tu.Last().Slope[Throughput]-want) > 1e-9 {
		t.Errorf("secant = %g, want %g", tu.Last().Slope[Throughput], want)
	}
}

func TestKIntervalAverage(t *testing.T) {
	tu, err := New(Target{MaxDelayMs: 1000}, [Dims]float64{1, 1, 1}, Config{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []float64{10, 20, 30, 40} {
		if _, err := tu.Observe(Metrics{DelayMs: d}); err != nil {
			t.Fatal(err)
		}
	}
	if got := tu.Mean().DelayMs; got != 30 {
		t.Errorf("mean of the last 3 of 10, 20, 30, 40 = %g, want 30", got)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target Target
		goal   [Dims]float64
		cfg    Config
		want   string
	}{
		{"no bound", Target{}, [Dims]float64{1, 1, 1}, Config{}, "no bound"},
		{"negative bound", Target{MaxDelayMs: -1}, [Dims]float64{1, 1, 1}, Config{}, "non-negative"},
		{"loss 1", Target{MaxLoss: 1}, [Dims]float64{1, 1, 1}, Config{}, "below 1"},
		{"NaN throughput", Target{MinThroughputMbps: math.NaN()}, [Dims]float64{1, 1, 1}, Config{}, "finite"},
		{"zero goal", Target{MaxDelayMs: 50}, [Dims]float64{}, Config{}, "no positive weight"},
		{"negative goal", Target{MaxDelayMs: 50}, [Dims]float64{1, -1, 1}, Config{}, "non-negative"},
		{"bad K", Target{MaxDelayMs: 50}, [Dims]float64{1, 1, 1}, Config{K: -2}, "K"},
		{"bad floor", Target{MaxDelayMs: 50}, [Dims]float64{1, 1, 1}, Config{MinWeight: 0.5}, "min weight"},
	} {
		_, err := New(tc.target, tc.goal, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	tu, err := New(Target{MaxDelayMs: 50}, [Dims]float64{1, 1, 1}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	before := tu.Goal()
	if _, err := tu.Observe(Metrics{ThroughputMbps: math.NaN()}); err == nil {
		t.Errorf("Observe(NaN) gave no error")
	}
	if tu.Goal() != before || len(tu.hist) != 0 {
		t.Errorf("a rejected measurement changed the tuner")
	}
}

func TestTargetMetAndString(t *testing.T) {
	tg := Target{MinThroughputMbps: 8, MaxDelayMs: 70, MaxLoss: 0.01}
	if got := tg.String(); got != ">= 8 Mbit/s, <= 70 ms, <= 1% loss" {
		t.Errorf("String() = %q", got)
	}
	for _, tc := range []struct {
		m    Metrics
		want bool
	}{
		{Metrics{8, 70, 0.01}, true}, // bounds are inclusive
		{Metrics{7.99, 10, 0}, false},
		{Metrics{20, 70.1, 0}, false},
		{Metrics{20, 10, 0.02}, false},
	} {
		if got := tg.Met(tc.m); got != tc.want {
			t.Errorf("Met(%+v) = %v, want %v", tc.m, got, tc.want)
		}
	}
	if !(Target{MaxDelayMs: 100}).Met(Metrics{ThroughputMbps: 0, DelayMs: 50, Loss: 0.5}) {
		t.Errorf("a delay-only target should ignore throughput and loss")
	}
}

func TestSetTarget(t *testing.T) {
	tu, err := New(Target{MaxDelayMs: 50}, [Dims]float64{0.5, 0.45, 0.05}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Met delay bound: the goal stays.
	g0 := tu.Goal()
	if g, _ := tu.Observe(Metrics{ThroughputMbps: 5, DelayMs: 10}); g != g0 {
		t.Errorf("a met target moved the goal to %v", g)
	}
	// A throughput bound above the measurement moves the throughput
	// weight up.
	if err := tu.SetTarget(Target{MinThroughputMbps: 10}); err != nil {
		t.Fatal(err)
	}
	if tu.Target().MinThroughputMbps != 10 {
		t.Errorf("target %v", tu.Target())
	}
	if g, _ := tu.Observe(Metrics{ThroughputMbps: 5, DelayMs: 10}); !(g[Throughput] > g0[Throughput]) {
		t.Errorf("goal %v after missing the new throughput bound; want the throughput weight above %v", g, g0[Throughput])
	}
	if err := tu.SetTarget(Target{}); err == nil {
		t.Errorf("an empty target gave no error")
	}
}
