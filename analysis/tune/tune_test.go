package tune

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/moo"
)

// The tests use NewReno (beta, iw) on short runs: the package is
// controller-agnostic and these stay fast on a shared machine.

// lossy is a small scenario with random loss, so that seeds matter.
const lossy = `name: lossy
seed: 7
duration: 3s
bottleneck:
  rate: 8Mbps
  delay: 20ms
  queue: {discipline: droptail, limit: 30}
  loss: {model: bernoulli, p: 0.002}
flows:
  - name: a
    cc: newreno
  - name: b
    cc: {name: newreno, beta: 0.7}
    extra_delay: 10ms
`

func parse(t *testing.T, src, dir string) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(src), filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func renoSpec() Spec {
	return Spec{
		Params:      []string{"newreno.beta=0.3:0.9", "newreno.iw=1:30:int"},
		Objectives:  []string{"max:goodput_mbps", "min:qdelay_mean_ms"},
		Constraints: []string{"newreno.iw >= 4"},
	}
}

func TestMetricsOnHandMadeResult(t *testing.T) {
	fct := 2.5
	rti := 0.25
	jain := 0.8
	// y ran the last 5 s of 10 at 6 Mbit/s: sum_goodput_mbps adds rates
	// over different times, total_goodput_mbps is the bytes over the run.
	r := &experiment.Result{
		SimSeconds: 10,
		Flows: []experiment.FlowResult{
			{Name: "x", GoodputMbps: 2, BytesDelivered: 2_500_000, QdelayMeanMs: 10, FCT: &fct, Retransmissions: 3},
			{Name: "y", GoodputMbps: 6, BytesDelivered: 3_750_000, QdelayMeanMs: 30, Retransmissions: 5},
		},
		Links: []experiment.LinkResult{{Utilization: 0.9, Drops: 4}},
		Jain:  &jain,
		RTI:   &rti,
	}
	want := map[string]float64{
		"goodput_mbps": 4, "sum_goodput_mbps": 8, "min_goodput_mbps": 2, "max_goodput_mbps": 6,
		"qdelay_mean_ms": 20, "flow1.qdelay_mean_ms": 30, "flow0.fct_s": 2.5, "sum_retransmissions": 8,
		"jain": 0.8, "utilization": 0.9, "link_drops": 4, "rti": 0.25, "total_goodput_mbps": 5,
	}
	for name, w := range want {
		m, err := LookupMetric(name)
		if err != nil {
			t.Fatalf("LookupMetric(%q): %v", name, err)
		}
		got, err := m.Value(r)
		if err != nil || got != w {
			t.Errorf("%s = %v, %v; want %v", name, got, err, w)
		}
	}
	// Undefined values are errors that say why, not zeros.
	for _, name := range []string{"fct_s", "flow1.fct_s", "flow2.goodput_mbps"} {
		m, err := LookupMetric(name)
		if err != nil {
			t.Fatal(err)
		}
		if !m.MayBeUndefined {
			t.Errorf("%s: MayBeUndefined is false", name)
		}
		if v, err := m.Value(r); err == nil {
			t.Errorf("%s = %v, want an error (undefined)", name, v)
		}
	}
	for _, name := range MetricNames() {
		if _, err := LookupMetric(name); err != nil {
			t.Errorf("listed metric %q does not resolve: %v", name, err)
		}
	}
	_, err := LookupMetric("goodput")
	if err == nil || !strings.Contains(err.Error(), "goodput_mbps") || !strings.Contains(err.Error(), "jain") {
		t.Errorf("unknown metric error = %v; want it to list the accepted names", err)
	}
}

func TestBadSpecsSayWhatIsAccepted(t *testing.T) {
	s := parse(t, lossy, t.TempDir())
	tests := []struct {
		name string
		edit func(*Spec)
		want []string
	}{
		{"unknown controller parameter", func(sp *Spec) { sp.Params[0] = "newreno.alpha=1:2" }, []string{`no parameter "alpha"`, "iw, beta"}},
		{"range beyond the controller's", func(sp *Spec) { sp.Params[0] = "newreno.beta=0.01:0.9" }, []string{"exceeds", "[0.05, 0.95]"}},
		{"real range for an integer", func(sp *Spec) { sp.Params[1] = "newreno.iw=1:30" }, []string{"whole number", "newreno.iw=1:30:int"}},
		{"controller no flow uses", func(sp *Spec) { sp.Params[0] = "fixed.window=1000:2000:int" }, []string{"no flow uses fixed", "newreno"}},
		{"unknown field", func(sp *Spec) { sp.Params[0] = "bottleneck.qeue.limit=10:20:int" }, []string{`no field "qeue"`, "queue"}},
		{"misspelt controller", func(sp *Spec) { sp.Params[0] = "newrno.beta=0.3:0.9" }, []string{"controllers:", "newreno"}},
		{"field needing a unit", func(sp *Spec) { sp.Params[0] = "bottleneck.delay=10:20" }, []string{"bottleneck.delay", "units"}},
		{"bad range syntax", func(sp *Spec) { sp.Params[0] = "newreno.beta=0.9:0.3" }, []string{"must be less than", "NAME=LO:HI"}},
		{"duplicate parameter", func(sp *Spec) { sp.Params[1] = "newreno.beta=0.3:0.6" }, []string{"twice"}},
		{"unknown objective", func(sp *Spec) { sp.Objectives[0] = "max:throughput" }, []string{`unknown metric "throughput"`, "goodput_mbps"}},
		{"bad sense", func(sp *Spec) { sp.Objectives[0] = "maximise:goodput_mbps" }, []string{"accepted: max, min"}},
		{"unknown constraint name", func(sp *Spec) { sp.Constraints[0] = "newreno.alpha < 3" }, []string{`unknown variable "newreno.alpha"`, "newreno.beta, newreno.iw", "qdelay_mean_ms"}},
		{"equality constraint", func(sp *Spec) { sp.Constraints[0] = "newreno.iw = 3" }, []string{"column"}},
		{"no objective", func(sp *Spec) { sp.Objectives = nil }, []string{"--objective", "goodput_mbps"}},
		{"default of an untuned parameter", func(sp *Spec) { sp.Defaults = map[string]float64{"newreno.gamma": 1} }, []string{"not a tuned parameter", "newreno.beta"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := renoSpec()
			tc.edit(&sp)
			_, err := NewProblem([]*scenario.Scenario{s}, sp)
			if err == nil {
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDefaultsComeFromTheScenario(t *testing.T) {
	s := parse(t, lossy, t.TempDir())
	sp := Spec{
		Params:     []string{"newreno.beta=0.3:0.9", "bottleneck.queue.limit=10:100:int", "bottleneck.loss.p=0:0.01"},
		Objectives: []string{"max:goodput_mbps"},
	}
	p, err := NewProblem([]*scenario.Scenario{s}, sp)
	if err != nil {
		t.Fatal(err)
	}
	// newreno.beta: the first flow does not set it, so NewReno's default
	// 0.5 (the second flow's 0.7 is not the baseline); the queue limit and
	// the loss are plain fields.
	if got, want := p.Default(), []float64{0.5, 30, 0.002}; !slices.Equal(got, want) {
		t.Errorf("defaults %v, want %v", got, want)
	}
	sp.Defaults = map[string]float64{"bottleneck.queue.limit": 50}
	p, err = NewProblem([]*scenario.Scenario{s}, sp)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Params[1].Default; got != 50 {
		t.Errorf("queue limit default %v with --default 50", got)
	}
	// Apply writes the values where the paths say.
	c := s.Clone()
	if err := p.Apply(c, []float64{0.4, 20, 0}); err != nil {
		t.Fatal(err)
	}
	if c.Flows[0].CC.Params["beta"] != 0.4 || c.Flows[1].CC.Params["beta"] != 0.4 || c.Bottleneck.Queue.Limit.Packets != 20 || c.Bottleneck.Loss.P != 0 {
		t.Errorf("Apply gave flows %+v, queue %+v, loss %+v", c.Flows, c.Bottleneck.Queue.Limit, c.Bottleneck.Loss)
	}
}

// writeTrace writes a synthetic gzip-compressed Mahimahi trace of the
// given length whose rate changes every 700 ms between 1 and 4
// opportunities per ms, with a 300 ms outage every 5 s.
func writeTrace(t *testing.T, path string, length time.Duration) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	ms := int(length / time.Millisecond)
	for m := 1; m <= ms; m++ {
		if m%5000 < 300 && m != ms {
			continue
		}
		k := 1 + (m/700)%4
		if m == ms {
			k = 1
		}
		for range k {
			fmt.Fprintf(zw, "%d\n", m)
		}
	}
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

const traced = `name: traced
seed: 1
duration: 4s
bottleneck:
  trace: one.gz
  trace_mode: MODE
  delay: 25ms
  queue: {discipline: droptail, limit: 40}
flows:
  - name: a
    cc: newreno
`

func stripWall(r *experiment.Result) *experiment.Result {
	c := *r
	c.WallSeconds = 0
	return &c
}

// TestPiecesAreTheTracesPieces checks that the cut copies give exactly the
// runs that slicing the original trace gives, in both trace modes, and
// that pieces are consecutive with the remainder dropped.
func TestPiecesAreTheTracesPieces(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, filepath.Join(dir, "one.gz"), 9500*time.Millisecond)
	writeTrace(t, filepath.Join(dir, "two.gz"), 4*time.Second)
	for _, mode := range []string{"exact", "average"} {
		t.Run(mode, func(t *testing.T) {
			s := parse(t, strings.Replace(traced, "MODE", mode, 1), dir)
			pieces := t.TempDir()
			cases, err := Cases([]*scenario.Scenario{s}, CaseOptions{
				Traces: []string{filepath.Join(dir, "one.gz"), filepath.Join(dir, "two.gz")},
				Piece:  3 * time.Second, Dir: pieces, Seeds: 2,
			})
			if err != nil {
				t.Fatal(err)
			}
			// one.gz: 9.5 s -> 3 pieces; two.gz: 4 s -> 1 piece; 2 seeds each.
			var names []string
			for _, c := range cases {
				names = append(names, c.Name)
			}
			want := []string{"one.gz@0s seed1", "one.gz@0s seed2", "one.gz@3s seed1", "one.gz@3s seed2", "one.gz@6s seed1", "one.gz@6s seed2", "two.gz@0s seed1", "two.gz@0s seed2"}
			if !slices.Equal(names, want) {
				t.Fatalf("cases %q, want %q", names, want)
			}
			for _, c := range cases[:6] {
				got, _, err := experiment.Run(context.Background(), c.Scenario)
				if err != nil {
					t.Fatal(err)
				}
				ref := s.Clone()
				ref.Seed = c.Seed
				ref.Bottleneck.Trace = filepath.Join(dir, "one.gz")
				ref.Bottleneck.TraceStart = scenario.Dur(c.Start)
				ref.Bottleneck.TraceLength = scenario.Dur(3 * time.Second)
				if err := ref.Validate(); err != nil {
					t.Fatal(err)
				}
				want, _, err := experiment.Run(context.Background(), ref)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(stripWall(got), stripWall(want)) {
					t.Errorf("%s: the cut copy gives\n%+v\nslicing the original gives\n%+v", c.Name, stripWall(got), stripWall(want))
				}
				if got.Flows[0].BytesDelivered == 0 {
					t.Errorf("%s delivered nothing", c.Name)
				}
			}
			// A piece longer than a trace is an error naming both.
			_, err = Cases([]*scenario.Scenario{s}, CaseOptions{Traces: []string{filepath.Join(dir, "two.gz")}, Piece: 5 * time.Second, Dir: pieces})
			if err == nil || !strings.Contains(err.Error(), "shorter than one 5s piece") {
				t.Errorf("error %v; want one saying the trace is shorter than a piece", err)
			}
		})
	}
}

// runs tunes with the given jobs and seed on two seeds of the lossy
// scenario.
func runs(t *testing.T, jobs int, seed uint64) *Result {
	t.Helper()
	s := parse(t, lossy, t.TempDir())
	cases, err := Cases([]*scenario.Scenario{s}, CaseOptions{Seeds: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProblem([]*scenario.Scenario{s}, renoSpec())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), p, cases, Options{Pop: 6, Gens: 3, Seed: seed, Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type runKey struct {
	Evaluated   []moo.Individual
	Pareto      []moo.Individual
	Hypervolume []float64
	Default     []float64
}

func keyOf(r *Result) runKey {
	return runKey{r.Evaluated, r.Pareto, r.Hypervolume, r.Default.Objectives}
}

// sameKey compares two runs exactly, NaN equal to NaN: an infeasible
// candidate's objectives are NaN, which reflect.DeepEqual never finds equal.
func sameKey(a, b runKey) bool { return fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b) }

func TestSameSeedSameFrontAnyJobs(t *testing.T) {
	one := runs(t, 1, 3)
	if len(one.Evaluated) != 18 || len(one.Hypervolume) != 3 {
		t.Fatalf("%d evaluations and %d hypervolume values, want 18 and 3", len(one.Evaluated), len(one.Hypervolume))
	}
	if len(one.Pareto) == 0 {
		t.Fatal("empty Pareto set")
	}
	for _, jobs := range []int{2, 5} {
		other := runs(t, jobs, 3)
		if !sameKey(keyOf(one), keyOf(other)) {
			t.Errorf("jobs 1 and %d differ:\n%+v\n%+v", jobs, keyOf(one).Pareto, keyOf(other).Pareto)
		}
	}
	if reflect.DeepEqual(keyOf(one).Evaluated, keyOf(runs(t, 2, 4)).Evaluated) {
		t.Error("seeds 3 and 4 gave the same evaluations; the seed is ignored")
	}
	for i := 1; i < len(one.Hypervolume); i++ {
		if one.Hypervolume[i] < one.Hypervolume[i-1] {
			t.Errorf("hypervolume decreased: %v", one.Hypervolume)
		}
	}
}

// TestScoresAreMeansOverCases checks the objectives against simulations run
// by hand, and that infeasible candidates are not simulated and repeated
// ones come from the cache.
func TestScoresAreMeansOverCases(t *testing.T) {
	r := runs(t, 2, 5)
	p := r.Problem
	// The baseline (beta 0.5, iw 10) was seeded and is feasible.
	if got := r.Evaluated[0].X; !slices.Equal(got, []float64{0.5, 10}) {
		t.Errorf("first candidate %v, want the default [0.5 10]", got)
	}
	if !reflect.DeepEqual(r.Default.Objectives, r.Evaluated[0].Objectives) {
		t.Errorf("default %v, first evaluation %v", r.Default.Objectives, r.Evaluated[0].Objectives)
	}
	for _, ind := range r.Evaluated[:4] {
		if !ind.Feasible() {
			continue
		}
		var g, q float64
		for _, c := range r.Cases {
			s := c.Scenario.Clone()
			if err := p.Apply(s, ind.X); err != nil {
				t.Fatal(err)
			}
			res, _, err := experiment.Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			g += (res.Flows[0].GoodputMbps + res.Flows[1].GoodputMbps) / 2
			q += (res.Flows[0].QdelayMeanMs + res.Flows[1].QdelayMeanMs) / 2
		}
		n := float64(len(r.Cases))
		if got, want := ind.Objectives, []float64{g / n, q / n}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-9 {
			t.Errorf("%s: objectives %v, by hand %v", p.FormatX(ind.X), got, want)
		}
	}
	distinct := map[string]bool{}
	infeasible := 0
	for _, ind := range r.Evaluated {
		if ind.X[1] < 4 {
			infeasible++
			if ind.Feasible() || !math.IsNaN(ind.Objectives[0]) {
				t.Errorf("%s violates iw >= 4 but is feasible or simulated: %+v", p.FormatX(ind.X), ind)
			}
			continue
		}
		distinct[key(ind.X)] = true
	}
	if got, want := r.Simulations, int64(len(distinct)*len(r.Cases)); got != want {
		t.Errorf("%d simulations; want %d (distinct feasible points x cases)", got, want)
	}
	if got, want := r.CacheHits, int64(len(r.Evaluated)-infeasible-len(distinct)+1); got != want {
		t.Errorf("%d cache hits; want %d (repeats, plus the baseline)", got, want)
	}
}

func TestMetricConstraintAndUndefinedMetric(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, lossy, dir)
	cases, err := Cases([]*scenario.Scenario{s}, CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sp := renoSpec()
	sp.Constraints = []string{"goodput_mbps >= 3.9"}
	p, err := NewProblem([]*scenario.Scenario{s}, sp)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := NewEvaluator(p, cases, 0)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ev.Func()(context.Background(), moo.Candidate{X: []float64{0.5, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3.9 - e.Objectives[0]; e.Constraints[0] != want {
		t.Errorf("g = %v, want 3.9 - goodput = %v", e.Constraints[0], want)
	}
	// fct_s is undefined for bulk flows: the candidate is infeasible
	// through the "metrics defined" constraint, not an error.
	sp = renoSpec()
	sp.Objectives = []string{"min:fct_s"}
	p, err = NewProblem([]*scenario.Scenario{s}, sp)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.MOO.Constraints); n != 2 || p.MOO.Constraints[1].Name != guardName {
		t.Fatalf("constraints %+v; want the user's and %q", p.MOO.Constraints, guardName)
	}
	ev, _ = NewEvaluator(p, cases, 0)
	e, err = ev.Func()(context.Background(), moo.Candidate{X: []float64{0.5, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Constraints[1] != 1 || !math.IsNaN(e.Objectives[0]) {
		t.Errorf("evaluation %+v; want the guard at 1 (every case undefined) and a NaN objective", e)
	}
	sc, _ := ev.Scores(context.Background(), []float64{0.5, 10})
	if !strings.Contains(sc.Reason, "fct_s") {
		t.Errorf("reason %q does not name fct_s", sc.Reason)
	}
}

func TestHoldoutAndOutputs(t *testing.T) {
	r := runs(t, 0, 6)
	s := parse(t, lossy, t.TempDir())
	s.Seed = 100
	test, err := Cases([]*scenario.Scenario{s}, CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Holdout(context.Background(), test, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Pareto) != len(r.Pareto) || h.Default == nil {
		t.Fatalf("holdout has %d points and default %v; want %d and a default", len(h.Pareto), h.Default, len(r.Pareto))
	}
	for i, pt := range h.Pareto {
		c := s.Clone()
		if err := r.Problem.Apply(c, pt.X); err != nil {
			t.Fatal(err)
		}
		res, _, err := experiment.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if want := (res.Flows[0].GoodputMbps + res.Flows[1].GoodputMbps) / 2; pt.Objectives[0] != want || !slices.Equal(pt.X, r.Pareto[i].X) {
			t.Errorf("held-out point %d: X %v goodput %v; want X %v goodput %v", i, pt.X, pt.Objectives[0], r.Pareto[i].X, want)
		}
	}
	dir := t.TempDir()
	if err := r.WriteDir(dir, h); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pareto.csv", "evaluations.csv", "default.csv", "hypervolume.csv", "cases.csv", "summary.json", "front.png", "front.svg", "hypervolume.png", "test.csv", "test_cases.csv", "test_front.png", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "pareto.csv"))
	if got, want := strings.Count(string(data), "\n"), len(r.Pareto)+1; got != want {
		t.Errorf("pareto.csv has %d lines, want %d", got, want)
	}
	data, _ = os.ReadFile(filepath.Join(dir, "summary.json"))
	var sum struct {
		Pareto []struct {
			Params     map[string]float64 `json:"params"`
			Objectives map[string]float64 `json:"objectives"`
		} `json:"pareto"`
		Evaluations []json.RawMessage `json:"evaluations"`
		Hypervolume []float64         `json:"hypervolume"`
		Test        struct {
			Pareto []json.RawMessage `json:"pareto"`
		} `json:"test"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Pareto) != len(r.Pareto) || len(sum.Evaluations) != 18 || len(sum.Hypervolume) != 3 || len(sum.Test.Pareto) != len(r.Pareto) {
		t.Errorf("summary has %d Pareto points, %d evaluations, %d hypervolumes, %d test points", len(sum.Pareto), len(sum.Evaluations), len(sum.Hypervolume), len(sum.Test.Pareto))
	}
	p0 := sum.Pareto[0]
	if p0.Params["newreno.beta"] != r.Pareto[0].X[0] || p0.Params["newreno.iw"] != r.Pareto[0].X[1] || p0.Objectives["goodput_mbps"] != r.Pareto[0].Objectives[0] {
		t.Errorf("first Pareto point in JSON %+v, in the result %+v", p0, r.Pareto[0])
	}
}

func TestBeatsAndBestGain(t *testing.T) {
	p := &Problem{MOO: moo.Problem{Objectives: []moo.Objective{{Name: "g", Sense: moo.Maximize}, {Name: "d"}}}}
	base := []float64{5, 40}
	tests := []struct {
		a      []float64
		margin float64
		want   bool
	}{
		{[]float64{6.2, 40}, 1.15, true},
		{[]float64{6.1, 40}, 1.15, false},   // gain too small
		{[]float64{6.2, 40.1}, 1.15, false}, // more delay
		{[]float64{5, 40}, 0, true},
		{[]float64{math.NaN(), 40}, 0, false},
	}
	for _, tc := range tests {
		if got := p.Beats(tc.a, base, 0, tc.margin); got != tc.want {
			t.Errorf("Beats(%v, %v, margin %v) = %v, want %v", tc.a, base, tc.margin, got, tc.want)
		}
	}
	h := &Holdout{Default: &Point{Objectives: base}, Pareto: []*Point{
		{Objectives: []float64{7, 55}}, {Objectives: []float64{5.5, 39}}, {Objectives: []float64{5.8, 40}}, {Objectives: []float64{4, 20}},
	}}
	if i, g := h.BestGain(p, 0); i != 2 || math.Abs(g-0.8) > 1e-12 {
		t.Errorf("BestGain = %d, %v; want point 2 with gain 0.8", i, g)
	}
	// Point 3 has the least delay but less goodput than the default.
	if i, g := h.BestGain(p, 1); i != 1 || g != 1 {
		t.Errorf("BestGain on delay = %d, %v; want point 1 with gain 1", i, g)
	}
}

// TestMalformedTraceFailsBeforeTuning: a held-out trace given whole (no
// pieces) was parsed only when its first case ran, after the whole search.
func TestMalformedTraceFailsBeforeTuning(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	if err := os.WriteFile(bad, []byte("1\n2\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeTrace(t, filepath.Join(dir, "one.gz"), 4*time.Second)
	s := parse(t, strings.Replace(traced, "MODE", "exact", 1), dir)
	_, err := Cases([]*scenario.Scenario{s}, CaseOptions{Traces: []string{bad}})
	if err == nil || !strings.Contains(err.Error(), "bad.trace:3:") {
		t.Errorf("Cases with a malformed trace: %v, want its line named", err)
	}
}
