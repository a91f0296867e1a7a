package tune

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/learn/moo"
)

// PointJSON is a point of the JSON summary, keyed by the names given on
// the command line.
type PointJSON struct {
	Params map[string]float64 `json:"params"`
	// Objectives is absent for a candidate that was not simulated (it
	// violated a constraint on the parameters).
	Objectives map[string]float64 `json:"objectives,omitempty"`
	// Generation is the generation that first evaluated the point (0 for
	// the baseline).
	Generation int `json:"generation,omitempty"`
	// Feasible is false when the point violates a constraint.
	Feasible bool `json:"feasible"`
}

// HoldoutJSON is the held-out evaluation in the JSON summary.
type HoldoutJSON struct {
	Cases   []string    `json:"cases"`
	Default *PointJSON  `json:"default,omitempty"`
	Pareto  []PointJSON `json:"pareto"`
}

// Summary is the JSON form of a result (`cclab tune --json`, summary.json).
type Summary struct {
	// Pareto is the Pareto set of all evaluations.
	Pareto []PointJSON `json:"pareto"`
	// Evaluations lists every evaluation in order.
	Evaluations []PointJSON `json:"evaluations"`
	// Hypervolume has one value per generation: the hypervolume of the
	// Pareto set so far with respect to Reference, in the objectives'
	// units; HypervolumeNormalized divides it by the volume between the
	// reference point and the ideal point, giving a fraction in [0, 1].
	Hypervolume           []float64          `json:"hypervolume"`
	HypervolumeNormalized []float64          `json:"hypervolume_normalized"`
	Reference             map[string]float64 `json:"reference,omitempty"`
	Default               *PointJSON         `json:"default,omitempty"`
	Test                  *HoldoutJSON       `json:"test,omitempty"`
	Cases                 []string           `json:"cases"`
	Seed                  uint64             `json:"seed"`
	Pop                   int                `json:"pop"`
	Generations           int                `json:"generations"`
	Simulations           int64              `json:"simulations"`
	CacheHits             int64              `json:"cache_hits"`
	WallSeconds           float64            `json:"wall_seconds"`
}

func (p *Problem) pointJSON(x, objectives []float64, feasible bool, gen int) PointJSON {
	pj := PointJSON{Params: map[string]float64{}, Generation: gen, Feasible: feasible}
	for i, q := range p.Params {
		pj.Params[q.Name] = x[i]
	}
	defined := true
	for _, v := range objectives {
		defined = defined && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	if defined {
		pj.Objectives = map[string]float64{}
		for j, o := range p.MOO.Objectives {
			pj.Objectives[o.Name] = objectives[j]
		}
	}
	return pj
}

func (p *Problem) ptJSON(pt *Point) *PointJSON {
	if pt == nil {
		return nil
	}
	pj := p.pointJSON(pt.X, pt.Objectives, pt.Feasible(), 0)
	return &pj
}

// Summary returns the JSON summary; h may be nil.
func (r *Result) Summary(h *Holdout) *Summary {
	p := r.Problem
	s := &Summary{
		Hypervolume: r.Hypervolume, Default: p.ptJSON(r.Default),
		Seed: r.Options.Seed, Pop: r.Options.Pop, Generations: r.Options.Gens,
		Simulations: r.Simulations, CacheHits: r.CacheHits, WallSeconds: math.Round(r.Wall.Seconds()*1000) / 1000,
		Pareto: []PointJSON{}, Evaluations: []PointJSON{},
	}
	for _, ind := range r.Pareto {
		s.Pareto = append(s.Pareto, p.pointJSON(ind.X, ind.Objectives, true, ind.Generation))
	}
	for _, ind := range r.Evaluated {
		s.Evaluations = append(s.Evaluations, p.pointJSON(ind.X, ind.Objectives, ind.Feasible(), ind.Generation))
	}
	s.HypervolumeNormalized = make([]float64, len(r.Hypervolume))
	for i, v := range r.Hypervolume {
		if r.Volume > 0 {
			s.HypervolumeNormalized[i] = v / r.Volume
		}
	}
	if r.Reference != nil {
		s.Reference = map[string]float64{}
		for j, o := range p.MOO.Objectives {
			s.Reference[o.Name] = r.Reference[j]
		}
	}
	for _, c := range r.Cases {
		s.Cases = append(s.Cases, c.Name)
	}
	if h != nil {
		t := &HoldoutJSON{Default: p.ptJSON(h.Default), Pareto: []PointJSON{}}
		for _, c := range h.Cases {
			t.Cases = append(t.Cases, c.Name)
		}
		for _, pt := range h.Pareto {
			t.Pareto = append(t.Pareto, *p.ptJSON(pt))
		}
		s.Test = t
	}
	return s
}

// WriteJSON writes the summary as indented JSON.
func (r *Result) WriteJSON(w io.Writer, h *Holdout) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Summary(h))
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// WriteTable writes the human-readable result: the run's size, the Pareto
// set with the baseline, the hypervolume per generation and, if h is not
// nil, the held-out scores.
func (r *Result) WriteTable(w io.Writer, h *Holdout) {
	p := r.Problem
	evals := len(r.Evaluated)
	fmt.Fprintf(w, "NSGA-II, population %d x %d generations (seed %d): %d evaluations and the default; %d simulations on %s (%d answers from the cache) in %.1f s\n\n",
		r.Options.Pop, r.Options.Gens, r.Options.Seed, evals, r.Simulations, plural(len(r.Cases), "case"), r.CacheHits, r.Wall.Seconds())
	fmt.Fprintf(w, "Pareto set (%s; objectives are means over the %s):\n", plural(len(r.Pareto), "point"), plural(len(r.Cases), "tuning case"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{""}
	for _, q := range p.Params {
		head = append(head, q.Name)
	}
	for _, o := range p.MOO.Objectives {
		head = append(head, objSpec(o))
	}
	head = append(head, "gen")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	row := func(label string, x, obj []float64, gen string) {
		cells := []string{label}
		for i, q := range p.Params {
			cells = append(cells, short(q.Variable, x[i]))
		}
		for _, v := range obj {
			cells = append(cells, num(v))
		}
		cells = append(cells, gen)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if r.Default != nil {
		row("default", r.Default.X, r.Default.Objectives, "")
	}
	for i, ind := range r.Pareto {
		row(strconv.Itoa(i+1), ind.X, ind.Objectives, strconv.Itoa(ind.Generation))
	}
	tw.Flush()
	if len(r.Pareto) == 0 {
		fmt.Fprintln(w, "  (no feasible point found)")
	}
	if len(r.Hypervolume) > 0 && r.Volume > 0 {
		fmt.Fprint(w, "\nhypervolume per generation (normalised):")
		for _, v := range r.Hypervolume {
			fmt.Fprintf(w, " %.4f", v/r.Volume)
		}
		fmt.Fprintln(w)
	}
	if h == nil {
		return
	}
	fmt.Fprintf(w, "\nheld-out evaluation on %s not used for tuning (difference from the default in brackets):\n", plural(len(h.Cases), "case"))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head = head[:len(head)-1]
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	trow := func(label string, pt *Point) {
		cells := []string{label}
		for i, q := range p.Params {
			cells = append(cells, short(q.Variable, pt.X[i]))
		}
		for j, v := range pt.Objectives {
			c := num(v)
			if h.Default != nil && pt != h.Default {
				c += " (" + plus(v-h.Default.Objectives[j]) + ")"
			}
			cells = append(cells, c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if h.Default != nil {
		trow("default", h.Default)
	}
	for i, pt := range h.Pareto {
		trow(strconv.Itoa(i+1), pt)
	}
	tw.Flush()
}

// short writes a parameter value for a table: real values to 5
// significant digits (the CSV and JSON files have them in full).
func short(v moo.Variable, x float64) string {
	if v.Kind == moo.Integer {
		return FormatValue(v, x)
	}
	return strconv.FormatFloat(x, 'g', 5, 64)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func plus(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	if x >= 0 {
		return "+" + strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func objSpec(o moo.Objective) string { return o.Sense.String() + ":" + o.Name }

func ftoa(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 10, 64)
}

// writeCSV writes header and rows to path.
func writeCSV(path string, header []string, rows [][]string) error {
	return report.WriteCSV(path, header, func(w *csv.Writer) error { return w.WriteAll(rows) })
}

// WriteDir writes the result into dir (created if needed):
//
//	pareto.csv         the Pareto set: parameters, mean objectives, generation
//	evaluations.csv    every evaluation: generation, index, parameters,
//	                   objectives (empty when not simulated), constraint
//	                   values, violation, feasible
//	default.csv        the baseline's parameters and objectives
//	hypervolume.csv    generation, evaluations so far, hypervolume, normalised
//	cases.csv          the tuning cases: name, trace, piece start and length, seed
//	summary.json       the JSON summary
//	front.png/.svg     all evaluations faint, the Pareto set highlighted, the
//	                   default marked (first two objectives)
//	hypervolume.png/.svg  normalised hypervolume per generation
//	report.html        all of the above in one page
//
// and with a held-out evaluation h: test.csv (the baseline and each Pareto
// point: parameters, mean objectives and their differences from the
// baseline), test_cases.csv (every metric of every point in every held-out
// case), test_front.png/.svg.
func (r *Result) WriteDir(dir string, h *Holdout) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := r.Problem
	var params, objs, cons []string
	for _, q := range p.Params {
		params = append(params, q.Name)
	}
	for _, o := range p.MOO.Objectives {
		objs = append(objs, o.Name)
	}
	for _, c := range p.MOO.Constraints {
		cons = append(cons, "g: "+c.Name)
	}
	xs := func(x []float64) []string {
		out := make([]string, len(x))
		for i, v := range x {
			out[i] = FormatValue(p.Params[i].Variable, v)
		}
		return out
	}
	fs := func(v []float64) []string {
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = ftoa(x)
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, s := range parts {
			out = append(out, s...)
		}
		return out
	}
	var rows [][]string
	for _, ind := range r.Pareto {
		rows = append(rows, cat(xs(ind.X), fs(ind.Objectives), []string{strconv.Itoa(ind.Generation)}))
	}
	if err := writeCSV(filepath.Join(dir, "pareto.csv"), cat(params, objs, []string{"generation"}), rows); err != nil {
		return err
	}
	rows = nil
	for _, ind := range r.Evaluated {
		obj := fs(ind.Objectives)
		rows = append(rows, cat([]string{strconv.Itoa(ind.Generation), strconv.Itoa(ind.Index)}, xs(ind.X), obj, fs(ind.Constraints),
			[]string{ftoa(ind.Violation), strconv.FormatBool(ind.Feasible())}))
	}
	if err := writeCSV(filepath.Join(dir, "evaluations.csv"), cat([]string{"generation", "index"}, params, objs, cons, []string{"violation", "feasible"}), rows); err != nil {
		return err
	}
	rows = nil
	if r.Default != nil {
		rows = append(rows, cat(xs(r.Default.X), fs(r.Default.Objectives), []string{strconv.FormatBool(r.Default.Feasible())}))
	}
	if err := writeCSV(filepath.Join(dir, "default.csv"), cat(params, objs, []string{"feasible"}), rows); err != nil {
		return err
	}
	rows = nil
	for g, v := range r.Hypervolume {
		n := 0
		for _, ind := range r.Evaluated {
			if ind.Generation <= g+1 {
				n++
			}
		}
		norm := math.NaN()
		if r.Volume > 0 {
			norm = v / r.Volume
		}
		rows = append(rows, []string{strconv.Itoa(g + 1), strconv.Itoa(n), ftoa(v), ftoa(norm)})
	}
	if err := writeCSV(filepath.Join(dir, "hypervolume.csv"), []string{"generation", "evaluations", "hypervolume", "hypervolume_normalized"}, rows); err != nil {
		return err
	}
	if err := writeCases(filepath.Join(dir, "cases.csv"), r.Cases); err != nil {
		return err
	}
	if h != nil {
		if err := r.writeHoldout(dir, h, params, objs, xs, fs, cat); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "summary.json"))
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f, h); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	figs := r.Figures(h)
	for _, nf := range figs {
		if _, err := plot.SaveAll(nf.Figure, filepath.Join(dir, nf.Name), plot.PNG, plot.SVG); err != nil {
			return err
		}
	}
	return r.writeReport(filepath.Join(dir, "report.html"), h, figs)
}

func writeCases(path string, cases []Case) error {
	var rows [][]string
	for _, c := range cases {
		start, length := "", ""
		if c.Trace != "" {
			start = ftoa(c.Start.Seconds())
			if c.Length > 0 {
				length = ftoa(c.Length.Seconds())
			}
		}
		rows = append(rows, []string{c.Name, c.Trace, start, length, strconv.FormatUint(c.Seed, 10)})
	}
	return writeCSV(path, []string{"case", "trace", "start_s", "length_s", "seed"}, rows)
}

func (r *Result) writeHoldout(dir string, h *Holdout, params, objs []string, xs, fs func([]float64) []string, cat func(...[]string) []string) error {
	p := r.Problem
	var deltas []string
	for _, o := range objs {
		deltas = append(deltas, "delta_"+o)
	}
	var rows [][]string
	add := func(label string, pt *Point) {
		d := make([]float64, len(pt.Objectives))
		for j := range d {
			d[j] = math.NaN()
			if h.Default != nil {
				d[j] = pt.Objectives[j] - h.Default.Objectives[j]
			}
		}
		rows = append(rows, cat([]string{label}, xs(pt.X), fs(pt.Objectives), fs(d)))
	}
	if h.Default != nil {
		add("default", h.Default)
	}
	for i, pt := range h.Pareto {
		add(strconv.Itoa(i+1), pt)
	}
	if err := writeCSV(filepath.Join(dir, "test.csv"), cat([]string{"point"}, params, objs, deltas), rows); err != nil {
		return err
	}
	if err := writeCases(filepath.Join(dir, "test_cases_list.csv"), h.Cases); err != nil {
		return err
	}
	var mnames []string
	for _, m := range p.metrics {
		mnames = append(mnames, m.Name)
	}
	rows = nil
	addCases := func(label string, pt *Point) {
		if pt.Scores == nil {
			return
		}
		for k, c := range h.Cases {
			rows = append(rows, cat([]string{label}, xs(pt.X), []string{c.Name}, fs(pt.Scores.PerCase[k])))
		}
	}
	if h.Default != nil {
		addCases("default", h.Default)
	}
	for i, pt := range h.Pareto {
		addCases(strconv.Itoa(i+1), pt)
	}
	return writeCSV(filepath.Join(dir, "test_cases.csv"), cat([]string{"point"}, params, []string{"case"}, mnames), rows)
}

// NamedFigure is a figure with the file stem WriteDir saves it under.
type NamedFigure struct {
	Name, Caption string
	Figure        plot.Figure
}

func axisFor(o moo.Objective) (plot.Axis, plot.Goal) {
	if o.Sense == moo.Maximize {
		return plot.Axis{Label: o.Name + " (higher is better)"}, plot.Maximize
	}
	return plot.Axis{Label: o.Name + " (lower is better)"}, plot.Minimize
}

// DefaultLabel names the baseline, e.g. "default vegas.alpha=2, vegas.beta=4".
func (p *Problem) DefaultLabel(x []float64) string {
	parts := make([]string, len(p.Params))
	for i, q := range p.Params {
		parts[i] = q.Name + "=" + FormatValue(q.Variable, x[i])
	}
	return "default " + strings.Join(parts, ", ")
}

// Figures returns the result's plots: the front (when there are at least
// two objectives), the hypervolume per generation, and the held-out front
// if h is not nil.
func (r *Result) Figures(h *Holdout) []NamedFigure {
	p := r.Problem
	var figs []NamedFigure
	if len(p.MOO.Objectives) >= 2 {
		ox, oy := p.MOO.Objectives[0], p.MOO.Objectives[1]
		ax, gx := axisFor(ox)
		ay, gy := axisFor(oy)
		f := plot.Pareto{
			Title: fmt.Sprintf("NSGA-II, %d x %d generations: means over %s", r.Options.Pop, r.Options.Gens, plural(len(r.Cases), "tuning case")),
			X:     ax, Y: ay, XGoal: gx, YGoal: gy,
		}
		pos := map[string]int{}
		for _, ind := range r.Evaluated {
			if !ind.Feasible() {
				continue
			}
			if _, dup := pos[key(ind.X)]; dup {
				continue
			}
			pos[key(ind.X)] = len(f.Points)
			f.Points = append(f.Points, plot.XY{X: ind.Objectives[0], Y: ind.Objectives[1]})
		}
		if len(p.MOO.Objectives) > 2 {
			// The front in all objectives, not just the two drawn.
			f.Front = []int{}
			for _, ind := range r.Pareto {
				f.Front = append(f.Front, pos[key(ind.X)])
			}
			f.Title += " (front in all objectives)"
		}
		if d := r.Default; d != nil && !math.IsNaN(d.Objectives[0]) {
			f.Refs = []plot.Ref{{Label: p.DefaultLabel(d.X), X: d.Objectives[0], Y: d.Objectives[1]}}
		}
		figs = append(figs, NamedFigure{"front", "Every evaluation (faint) and the Pareto set, means over the tuning cases; the default parameters marked.", f})
		if h != nil {
			t := plot.Pareto{
				Title: fmt.Sprintf("The tuned Pareto set on %s", plural(len(h.Cases), "held-out case")),
				X:     ax, Y: ay, XGoal: gx, YGoal: gy,
			}
			for _, pt := range h.Pareto {
				t.Points = append(t.Points, plot.XY{X: pt.Objectives[0], Y: pt.Objectives[1]})
			}
			if len(p.MOO.Objectives) > 2 {
				t.Front = []int{}
				for i := range t.Points {
					t.Front = append(t.Front, i)
				}
			}
			if d := h.Default; d != nil {
				t.Refs = []plot.Ref{{Label: p.DefaultLabel(d.X), X: d.Objectives[0], Y: d.Objectives[1]}}
			}
			figs = append(figs, NamedFigure{"test_front", "The Pareto points found in tuning, scored on held-out cases (highlighted: those still non-dominated there); the default marked.", t})
		}
	}
	if len(r.Hypervolume) > 0 && r.Volume > 0 {
		gens := make([]float64, len(r.Hypervolume))
		norm := make([]float64, len(r.Hypervolume))
		for i, v := range r.Hypervolume {
			gens[i] = float64(i + 1)
			norm[i] = v / r.Volume
		}
		figs = append(figs, NamedFigure{"hypervolume", "Hypervolume of the Pareto set so far, normalised by the box between the ideal point and the reference point.", plot.TimeSeries{
			Title:   "Hypervolume per generation",
			X:       plot.Axis{Label: "generation"},
			Y:       plot.Axis{Label: "hypervolume (normalised)", IncludeZero: true},
			Series:  []plot.Series{{Name: "Pareto set of all evaluations so far", X: gens, Y: norm}},
			Markers: true,
		}})
	}
	return figs
}

func (r *Result) writeReport(path string, h *Holdout, figs []NamedFigure) error {
	p := r.Problem
	rep := report.New("cclab tune")
	rep.Paragraph(fmt.Sprintf("NSGA-II, population %d x %d generations (seed %d): %d evaluations, %d simulations on %d cases in %.1f s.",
		r.Options.Pop, r.Options.Gens, r.Options.Seed, len(r.Evaluated), r.Simulations, len(r.Cases), r.Wall.Seconds()))
	head := []string{""}
	for _, q := range p.Params {
		head = append(head, q.Name)
	}
	for _, o := range p.MOO.Objectives {
		head = append(head, objSpec(o))
	}
	row := func(label string, x, obj []float64) []any {
		out := []any{label}
		for _, v := range x {
			out = append(out, v)
		}
		for _, v := range obj {
			out = append(out, v)
		}
		return out
	}
	var rows [][]any
	if r.Default != nil {
		rows = append(rows, row("default", r.Default.X, r.Default.Objectives))
	}
	for i, ind := range r.Pareto {
		rows = append(rows, row(strconv.Itoa(i+1), ind.X, ind.Objectives))
	}
	rep.Heading("Tuning")
	rep.Table("The default and the Pareto set, means over the tuning cases", head, rows)
	if h != nil {
		rows = nil
		if h.Default != nil {
			rows = append(rows, row("default", h.Default.X, h.Default.Objectives))
		}
		for i, pt := range h.Pareto {
			rows = append(rows, row(strconv.Itoa(i+1), pt.X, pt.Objectives))
		}
		rep.Heading("Held-out cases")
		rep.Table(fmt.Sprintf("The default and the tuned Pareto set on %d held-out cases", len(h.Cases)), head, rows)
	}
	rep.Heading("Figures")
	for _, f := range figs {
		rep.PlotAs(f.Caption, plot.SVG, f.Figure)
	}
	return rep.WriteFile(path)
}
