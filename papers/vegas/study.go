// Package vegas is the Vegas study (see README.md in this directory): NSGA-II
// tunes TCP Vegas's alpha and beta for goodput and queueing delay on pieces
// of cellular traces, then the default and the Pareto set are scored on
// held-out traces and judged against the paper's claim. It also ships the
// study's scenario, so that `cclab study vegas` runs from any directory.
package vegas

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/cclab/cclab/analysis/report"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/analysis/tune"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/moo"
)

// The study's problem: the paper's search space, constraint and
// objectives, and a split of the shipped cellular traces by recording.
var (
	Params      = []string{"vegas.alpha=1:20:int", "vegas.beta=1:30:int"}
	Constraints = []string{"vegas.alpha < vegas.beta"}
	Objectives  = []string{"max:goodput_mbps", "min:qdelay_mean_ms"}
	TrainTraces = []string{"ATT-LTE-driving.down.gz", "TMobile-LTE-short.down.gz"}
	TestTraces  = []string{"TMobile-LTE-driving.down.gz", "ATT-LTE-driving-2016.down.gz", "Verizon-LTE-short.down.gz"}
)

// Thresholds of the goal and of the paper's criterion.
const (
	// DefaultGain is the paper's claim: 1.15 Mbit/s more held-out goodput
	// than the default (2, 4) at no more mean queueing delay.
	DefaultGain = 1.15
	// The paper's "good QoS" criterion: goodput above PaperMinGoodput
	// Mbit/s and mean queueing delay below PaperMaxDelayMs.
	PaperMinGoodput = 4.0
	PaperMaxDelayMs = 60.0
	// Piece is the length of the trace pieces, the paper's 120 s.
	Piece = 120 * time.Second
)

// Config is one study.
type Config struct {
	// Scenario is the study's scenario, validated.
	Scenario *scenario.Scenario
	// TrainFiles and TestFiles are the trace files tuned on and held out.
	TrainFiles, TestFiles []string
	// Gain is the goal's held-out goodput gain, Mbit/s.
	Gain float64
	// Grid also simulates every point of the search space on both sets.
	Grid bool
	// Seeds, Piece and Jobs are as in tune.CaseOptions and tune.Options.
	Seeds int
	Piece time.Duration
	Jobs  int
	// Out, if set, receives each mode's tuning outputs in Out/MODE and
	// study.json.
	Out string
	// Options returns the tuning options (population, progress, ...) for
	// a mode and a function to call when the tuning ends.
	Options func(label string) (tune.Options, func())
}

// Problem returns the study's tuning problem on s.
func Problem(s *scenario.Scenario) (*tune.Problem, error) {
	return tune.NewProblem([]*scenario.Scenario{s}, Spec(s))
}

// Spec is the study's search for the Vegas controller the scenario's flows
// use: "vegas" (Linux semantics) in the default scenario, "vegas_ns3"
// (ns-3 3.37's TcpVegas) in papers/vegas/vegas-ns3.yaml.
func Spec(s *scenario.Scenario) tune.Spec {
	name := "vegas"
	for _, f := range s.Flows {
		if strings.HasPrefix(f.CC.Name, "vegas") {
			name = f.CC.Name
			break
		}
	}
	rename := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strings.ReplaceAll(x, "vegas.", name+".")
		}
		return out
	}
	return tune.Spec{Params: rename(Params), Objectives: Objectives, Constraints: rename(Constraints)}
}

// ModeRun is a mode's outcome with the tuning's full results, for tables.
type ModeRun struct {
	Mode
	Result  *tune.Result
	Holdout *tune.Holdout
}

// RunMode tunes on the training pieces in one trace mode (average or
// exact), scores the default and the Pareto set on the held-out pieces,
// and checks the goal.
func RunMode(ctx context.Context, cfg Config, prob *tune.Problem, mode string) (*ModeRun, error) {
	out := ""
	if cfg.Out != "" {
		out = filepath.Join(cfg.Out, mode)
	}
	cs, err := tune.NewCaseSets([]*scenario.Scenario{cfg.Scenario}, cfg.TrainFiles, cfg.TestFiles,
		tune.CaseOptions{Piece: cfg.Piece, Seeds: cfg.Seeds, TraceMode: mode})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	opts, finish := cfg.Options("vegas " + mode)
	res, h, err := cs.Tune(ctx, prob, opts, finish)
	if err != nil {
		return nil, fmt.Errorf("%s mode: %w", mode, err)
	}
	var grid *Grid
	if cfg.Grid {
		if grid, err = gridCheck(ctx, prob, cs, res, h, cfg.Jobs, out); err != nil {
			return nil, fmt.Errorf("%s mode: %w", mode, err)
		}
	}
	if out != "" {
		if err := res.WriteDir(out, h); err != nil {
			return nil, err
		}
	}
	return &ModeRun{Mode: judge(mode, prob, res, h, cfg.Gain, grid), Result: res, Holdout: h}, nil
}

// judge checks the goal and the paper's criterion on the held-out scores.
func judge(mode string, prob *tune.Problem, res *tune.Result, h *tune.Holdout, gain float64, grid *Grid) Mode {
	sm := Mode{Mode: mode, Tuning: res.Summary(h), Goal: Goal{GainWanted: gain}, Grid: grid}
	best, g := h.BestGain(prob, 0)
	if best >= 0 {
		pj := sm.Tuning.Test.Pareto[best]
		dq := h.Pareto[best].Objectives[1] - h.Default.Objectives[1]
		sm.Goal.Best, sm.Goal.GainMbps, sm.Goal.QdelayDiffMs = &pj, &g, &dq
		sm.Goal.Met = g >= gain
	}
	sm.Goal.MaxGainMbps = math.Inf(-1)
	for _, pt := range h.Pareto {
		sm.Goal.MaxGainMbps = max(sm.Goal.MaxGainMbps, pt.Objectives[0]-h.Default.Objectives[0])
		if pt.Objectives[0] > PaperMinGoodput && pt.Objectives[1] < PaperMaxDelayMs {
			sm.Goal.Paper++
		}
	}
	return sm
}

// WriteJSON writes the modes' outcomes to dir/study.json.
func WriteJSON(dir string, modes []Mode) error {
	f, err := os.Create(filepath.Join(dir, "study.json"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(modes); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Mode is one trace mode's outcome in the study.
type Mode struct {
	Mode   string        `json:"mode"`
	Tuning *tune.Summary `json:"tuning"`
	Goal   Goal          `json:"goal"`
	Grid   *Grid         `json:"grid,omitempty"`
}

// Grid is the exhaustive check: every point of the search space
// simulated on the training and the held-out pieces.
type Grid struct {
	Points int `json:"points"`
	// Simulations is the number of simulations the grid needed beyond
	// the tuning's.
	Simulations int64   `json:"simulations"`
	WallSeconds float64 `json:"wall_seconds"`
	// TrainFront is the number of points of the true Pareto set on the
	// training pieces; HypervolumeRatio the hypervolume of the tuning's
	// Pareto set over the true one's (same reference point).
	TrainFront       int     `json:"train_front_points"`
	HypervolumeRatio float64 `json:"hypervolume_ratio"`
	// FrontBest is the true training front's point with the largest
	// held-out goodput gain at no more held-out mean queueing delay than
	// the default: what a perfect tuner would offer.
	FrontBest *tune.PointJSON `json:"front_best,omitempty"`
	FrontGain *float64        `json:"front_gain_mbps,omitempty"`
	// OracleBest is the same over every point of the space, chosen with
	// hindsight on the held-out pieces: an upper bound on the goal.
	OracleBest *tune.PointJSON `json:"oracle_best,omitempty"`
	OracleGain *float64        `json:"oracle_gain_mbps,omitempty"`
	// MaxGain is the largest held-out goodput gain of any point, at any
	// delay.
	MaxGain float64 `json:"max_gain_mbps"`
}

// Goal checks the goal on the held-out pieces: a Pareto point
// with at least GainWanted Mbit/s more goodput than the default and no more
// mean queueing delay.
type Goal struct {
	GainWanted float64 `json:"gain_wanted_mbps"`
	Met        bool    `json:"met"`
	// Best is the Pareto point with the largest held-out goodput gain
	// among those with no more held-out mean queueing delay than the
	// default (absent if none has).
	Best         *tune.PointJSON `json:"best,omitempty"`
	GainMbps     *float64        `json:"gain_mbps,omitempty"`
	QdelayDiffMs *float64        `json:"qdelay_diff_ms,omitempty"`
	// MaxGainMbps is the largest held-out goodput gain of any Pareto
	// point, whatever its delay.
	MaxGainMbps float64 `json:"max_gain_mbps"`
	// Paper counts the Pareto points meeting the paper's "good QoS"
	// criterion on the held-out pieces: goodput above 4 Mbit/s and mean
	// queueing delay below 60 ms.
	Paper int `json:"paper_criterion_points"`
}

// gridCheck simulates every point of the (integer) search space on the
// training and held-out pieces.
func gridCheck(ctx context.Context, prob *tune.Problem, cs *tune.CaseSets, res *tune.Result, h *tune.Holdout, jobs int, out string) (*Grid, error) {
	start := time.Now()
	xs, err := prob.Grid(100_000)
	if err != nil {
		return nil, err
	}
	// The tuning's evaluator already holds the points it simulated.
	trainEv := res.Evaluator()
	trainSims := trainEv.Simulations()
	testEv, err := tune.NewEvaluator(prob, cs.Test, jobs)
	if err != nil {
		return nil, err
	}
	train, err := trainEv.Points(ctx, xs)
	if err != nil {
		return nil, err
	}
	test, err := testEv.Points(ctx, xs)
	if err != nil {
		return nil, err
	}
	g := &Grid{Points: len(xs), Simulations: trainEv.Simulations() - trainSims + testEv.Simulations()}
	inds := make([]moo.Individual, len(train))
	for i, pt := range train {
		inds[i] = moo.Individual{X: pt.X, Objectives: pt.Objectives, Constraints: pt.Constraints, Violation: pt.Violation, Generation: 1, Index: i}
	}
	front := moo.ParetoSet(prob.MOO, inds)
	g.TrainFront = len(front)
	if res.Reference != nil {
		tuned, err := moo.Hypervolume(prob.MOO, res.Pareto, res.Reference)
		if err != nil {
			return nil, err
		}
		best, err := moo.Hypervolume(prob.MOO, front, res.Reference)
		if err != nil {
			return nil, err
		}
		if best > 0 {
			g.HypervolumeRatio = tuned / best
		}
	}
	index := map[string]int{}
	for i, x := range xs {
		index[fmt.Sprint(x)] = i
	}
	frontTest := &tune.Holdout{Default: h.Default}
	for _, ind := range front {
		frontTest.Pareto = append(frontTest.Pareto, test[index[fmt.Sprint(ind.X)]])
	}
	pj := func(pt *tune.Point) *tune.PointJSON {
		p := tune.PointJSON{Params: map[string]float64{}, Objectives: map[string]float64{}, Feasible: pt.Feasible()}
		for i, q := range prob.Params {
			p.Params[q.Name] = pt.X[i]
		}
		for j, o := range prob.MOO.Objectives {
			p.Objectives[o.Name] = pt.Objectives[j]
		}
		return &p
	}
	if i, gain := frontTest.BestGain(prob, 0); i >= 0 {
		g.FrontBest, g.FrontGain = pj(frontTest.Pareto[i]), &gain
	}
	all := &tune.Holdout{Default: h.Default, Pareto: test}
	if i, gain := all.BestGain(prob, 0); i >= 0 {
		g.OracleBest, g.OracleGain = pj(test[i]), &gain
	}
	g.MaxGain = math.Inf(-1)
	for _, pt := range test {
		g.MaxGain = max(g.MaxGain, pt.Objectives[0]-h.Default.Objectives[0])
	}
	g.WallSeconds = math.Round(time.Since(start).Seconds()*10) / 10
	if out != "" {
		if err := writeGridCSV(out, prob, xs, train, test); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// writeGridCSV writes every point of the search space with its training
// and held-out objectives to out/grid.csv.
func writeGridCSV(out string, prob *tune.Problem, xs [][]float64, train, test []*tune.Point) error {
	var rows [][]string
	for i := range xs {
		row := []string{}
		for j, q := range prob.Params {
			row = append(row, tune.FormatValue(q.Variable, xs[i][j]))
		}
		for _, pt := range []*tune.Point{train[i], test[i]} {
			for _, v := range pt.Objectives {
				row = append(row, strconv.FormatFloat(v, 'g', 10, 64))
			}
		}
		rows = append(rows, row)
	}
	header := []string{}
	for _, q := range prob.Params {
		header = append(header, q.Name)
	}
	for _, set := range []string{"train_", "test_"} {
		for _, o := range prob.MOO.Objectives {
			header = append(header, set+o.Name)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return report.WriteCSV(filepath.Join(out, "grid.csv"), header, func(w *csv.Writer) error { return w.WriteAll(rows) })
}
