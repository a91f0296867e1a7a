package deepcc

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cclab/cclab/core/units"
)

// testTrace is the smallest repository trace, quick to load.
var testTrace = filepath.Join("..", "..", "traces", "ATT-LTE-driving-2016.down.gz")

func testSampler() *Sampler {
	return &Sampler{Traces: []string{testTrace}, Length: 4 * time.Second}
}

func newTestEnv(t *testing.T) *Env {
	t.Helper()
	e, err := NewEnv(EnvConfig{Sampler: testSampler()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// episode runs an episode with a fixed action sequence and returns every
// observation and reward.
func episode(t *testing.T, e *Env, seed uint64, steps int) ([][]float32, []float64) {
	t.Helper()
	obs, _ := e.Reset(seed)
	all := [][]float32{append([]float32(nil), obs...)}
	var rs []float64
	for k := 0; k < steps; k++ {
		a := []float32{float32(math.Sin(float64(k) / 3))}
		o, r, term, trunc, _ := e.Step(a)
		all = append(all, append([]float32(nil), o...))
		rs = append(rs, r)
		if term || trunc {
			break
		}
	}
	return all, rs
}

func TestObservationShapeAndDeterminism(t *testing.T) {
	e := newTestEnv(t)
	if d := e.ObservationSpace().Dim(); d != History*NumFeatures+6 {
		t.Fatalf("observation dimension %d, want %d", d, ObservationSize)
	}
	if a := e.ActionSpace(); a.Dim() != 1 || a.Low[0] != -1 || a.High[0] != 1 {
		t.Fatalf("action space %v, want one value in [-1, 1]", a)
	}
	o1, r1 := episode(t, e, 7, 60)
	o2, r2 := episode(t, newTestEnv(t), 7, 60)
	if len(o1) != len(o2) {
		t.Fatalf("same seed: %d and %d observations", len(o1), len(o2))
	}
	for k := range o1 {
		if len(o1[k]) != ObservationSize {
			t.Fatalf("observation %d has %d values, want %d", k, len(o1[k]), ObservationSize)
		}
		for i := range o1[k] {
			if o1[k][i] != o2[k][i] || math.IsNaN(float64(o1[k][i])) {
				t.Fatalf("same seed, step %d value %d: %g vs %g", k, i, o1[k][i], o2[k][i])
			}
		}
		if k > 0 && r1[k-1] != r2[k-1] {
			t.Fatalf("same seed, step %d: reward %g vs %g", k, r1[k-1], r2[k-1])
		}
	}
	// The goal sits at the end of every observation and sums to 1.
	g := o1[len(o1)-1][goalOffset:]
	if s := g[0] + g[1] + g[2]; math.Abs(float64(s)-1) > 1e-6 {
		t.Errorf("goal part %v sums to %g, want 1", g, s)
	}
	o3, _ := episode(t, e, 8, 60)
	same := true
	for i := range o3[len(o3)-1] {
		same = same && o3[len(o3)-1][i] == o1[len(o1)-1][i]
	}
	if same {
		t.Errorf("seeds 7 and 8 gave identical episodes")
	}
}

func TestStepRewardIsGoalDotMeasurement(t *testing.T) {
	e := newTestEnv(t)
	e.Reset(3)
	g := e.Goal()
	for k := 0; k < 40; k++ {
		_, r, _, _, _ := e.Step([]float32{0.3})
		m := e.Last().Measurement
		if want := g[0]*m[0] + g[1]*m[1] + g[2]*m[2]; math.Abs(r-want) > 1e-12 {
			t.Fatalf("step %d: reward %g, want g.m = %g (g %v, m %v)", k, r, want, g, m)
		}
		if m[0] < 0 || m[1] > 0 || m[2] > 0 {
			t.Fatalf("step %d: measurement %v, want throughput >= 0, -delay <= 0, -loss <= 0", k, m)
		}
	}
}

// TestWindowAtEstimatedBDP checks the action mapping on a fixed 12 Mbit/s
// link with a 40 ms RTT: after probing with a = +1 (the window quadruples
// each RTT until the bandwidth estimate is the link's), a = 0.1 (1.15 BDP)
// fills the link with a few ms of queue, a = +1 keeps three BDPs queued, and
// a = -0.5 (half a BDP) holds half the link without a queue: the
// self-limited samples do not shrink the estimate.
func TestWindowAtEstimatedBDP(t *testing.T) {
	link := Link{Name: "fixed", Rate: 12 * units.Mbps, Delay: 20 * time.Millisecond, Queue: 500, Capacity: 12 * units.Mbps}
	hold := func(a float32) (util float64, q time.Duration) {
		t.Helper()
		e, err := NewEnv(EnvConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(link, Goal{0.5, 0.5, 0}, 1, 6*time.Second); err != nil {
			t.Fatal(err)
		}
		n := 0
		for k := 0; !e.Done(); k++ {
			act := a
			if k < 12 {
				act = 1 // probe
			}
			e.Step([]float32{act})
			if e.Network().Now() > 3e9 { // the last 3 s
				n++
				util += e.Last().Measurement[0]
				q += e.Last().QDelay
			}
		}
		return util / float64(n), q / time.Duration(n)
	}
	for _, tc := range []struct {
		a        float32
		uLo, uHi float64
		qLo, qHi time.Duration
	}{
		{0.1, 0.95, 1.02, 0, 15 * time.Millisecond},
		{1, 0.95, 1.02, 100 * time.Millisecond, 140 * time.Millisecond},
		{-0.5, 0.4, 0.6, 0, 5 * time.Millisecond},
	} {
		u, q := hold(tc.a)
		if u < tc.uLo || u > tc.uHi || q < tc.qLo || q > tc.qHi {
			t.Errorf("a = %g: utilisation %.3f, queueing %v; want [%g, %g] and [%v, %v]", tc.a, u, q, tc.uLo, tc.uHi, tc.qLo, tc.qHi)
		}
	}
}

func TestEnvBadInput(t *testing.T) {
	if _, err := NewEnv(EnvConfig{Sampler: &Sampler{Traces: []string{"no/such/trace"}}}); err == nil || !strings.Contains(err.Error(), "no/such/trace") {
		t.Errorf("missing trace: err = %v, want one naming the file", err)
	}
	if _, err := NewEnv(EnvConfig{Sampler: &Sampler{}}); err == nil {
		t.Errorf("sampler without traces gave no error")
	}
	e, _ := NewEnv(EnvConfig{})
	for _, l := range []Link{
		{Name: "no rate", Delay: time.Millisecond, Queue: 10, Capacity: 1},
		{Name: "no queue", Rate: units.Mbps, Queue: 0, Capacity: units.Mbps},
		{Name: "loss", Rate: units.Mbps, Queue: 10, Loss: 1, Capacity: units.Mbps},
		{Name: "both", Rate: units.Mbps, Trace: testTrace, Queue: 10, Capacity: units.Mbps},
	} {
		if err := e.Start(l, Goal{1, 0, 0}, 1, time.Second); err == nil {
			t.Errorf("link %q: Start gave no error", l.Name)
		}
	}
	if err := e.Start(Link{Name: "ok", Rate: units.Mbps, Queue: 10, Capacity: units.Mbps}, Goal{0.5, 0.6, 0}, 1, time.Second); err == nil {
		t.Errorf("a goal summing to 1.1 was accepted")
	}
	if err := e.SetGoal(Goal{-0.5, 1, 0.5}); err == nil {
		t.Errorf("SetGoal accepted a negative weight")
	}
}

func TestSetGoalUpdatesObservation(t *testing.T) {
	e, _ := NewEnv(EnvConfig{})
	link := Link{Name: "fixed", Rate: 5 * units.Mbps, Delay: 10 * time.Millisecond, Queue: 50, Capacity: 5 * units.Mbps}
	if err := e.Start(link, Goal{1, 0, 0}, 1, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	e.Step([]float32{0})
	want := Goal{0.2, 0.3, 0.5}
	if err := e.SetGoal(want); err != nil {
		t.Fatal(err)
	}
	o := e.Observation()
	for i := range 3 {
		if o[goalOffset+i] != float32(want[i]) {
			t.Fatalf("observation goal %v, want %v", o[goalOffset:], want)
		}
	}
	_, r, _, _, _ := e.Step([]float32{0})
	if m := e.Last().Measurement; math.Abs(r-Reward(want, m)) > 1e-12 {
		t.Errorf("reward after SetGoal %g, want the new goal's %g", r, Reward(want, m))
	}
}
