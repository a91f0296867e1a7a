package report

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/sweep"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

// metricInfo describes a rows.csv column for figures.
type metricInfo struct {
	name, axis, what string
}

var reportMetrics = []metricInfo{
	{"goodput_mbps", "goodput (Mbit/s)", "mean goodput of the measured flows"},
	{"fct_s", "flow completion time (s)", "mean flow completion time of the flows that finished"},
	{"qdelay_p95_ms", "95th-percentile queueing delay (ms)", "95th-percentile queueing delay (RTT minus the flow's minimum RTT)"},
	{"rtt_p95_ms", "95th-percentile RTT (ms)", "95th-percentile RTT"},
	{"retransmissions", "retransmissions (packets)", "retransmitted packets per run"},
	{"utilization", "bottleneck utilisation (fraction)", "bottleneck utilisation"},
	{"rti", "RTT Transition Impact", "RTT Transition Impact across link changes"},
	{"jain", "Jain's fairness index", "Jain's fairness index over the measured flows"},
	{"background_share", "background share of capacity (fraction)", "capacity taken by background traffic"},
}

// cdfMetrics are the per-run quantities whose distribution across runs is
// drawn per combination.
var cdfMetrics = []string{"goodput_mbps", "fct_s", "rtt_p95_ms", "qdelay_p95_ms"}

func metricByName(name string) metricInfo {
	for _, m := range reportMetrics {
		if m.name == name {
			return m
		}
	}
	return metricInfo{name, name, name}
}

// layout splits the grid for bar charts and the scatter: the category axis
// (bars of one colour each, one scatter series each) is cc when the grid
// has it, otherwise the first axis when there are two or more; the other
// axes form the groups along the x axis.
type layout struct {
	catAxis    int // -1: one category
	categories []string
	groups     []string
	// ticks label the groups on a bar chart's x axis and xLabel names
	// it: with one grouping axis, its values under its full key.
	ticks  []string
	xLabel string
	// place[c] is combination c's (group, category).
	place [][2]int
}

func newLayout(m *sweep.Manifest) layout {
	l := layout{catAxis: -1}
	short := shortKeys(m)
	for i, a := range m.Grid {
		if a.Key == "cc" {
			l.catAxis = i
		}
	}
	if l.catAxis < 0 && len(m.Grid) >= 2 {
		l.catAxis = 0
	}
	if l.catAxis >= 0 {
		a := m.Grid[l.catAxis]
		for _, v := range a.Values {
			l.categories = append(l.categories, short[a.Key]+"="+v)
		}
	} else {
		l.categories = []string{m.ScenarioName}
	}
	index := map[string]int{}
	for c := range m.Combinations {
		params := m.ComboParams(c)
		k := 0
		var rest []sweep.Param
		for i, p := range params {
			if i == l.catAxis {
				k = indexOf(m.Grid[i].Values, p.Value)
			} else {
				rest = append(rest, p)
			}
		}
		g := shortLabel(rest, short)
		gi, ok := index[g]
		if !ok {
			gi = len(l.groups)
			index[g] = gi
			l.groups = append(l.groups, g)
			tick := g
			if len(rest) == 1 {
				tick = rest[0].Value
			}
			l.ticks = append(l.ticks, tick)
		}
		l.place = append(l.place, [2]int{gi, k})
	}
	switch rest := len(m.Grid) - btoi(l.catAxis >= 0); {
	case rest == 1:
		for i, a := range m.Grid {
			if i != l.catAxis {
				l.xLabel = a.Key
			}
		}
	case rest > 1:
		l.xLabel = "combination"
	default:
		l.ticks = []string{m.ScenarioName}
	}
	return l
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shortKeys maps each grid key to its last path segment when that is
// unambiguous (bottleneck.loss.p -> p), so that legends and tick labels
// fit; tables keep the full keys.
func shortKeys(m *sweep.Manifest) map[string]string {
	short := map[string]string{}
	count := map[string]int{}
	for _, a := range m.Grid {
		s := a.Key[strings.LastIndex(a.Key, ".")+1:]
		short[a.Key] = s
		count[s]++
	}
	for k, s := range short {
		if count[s] > 1 {
			short[k] = k
		}
	}
	return short
}

// shortLabel is ParamsLabel with shortKeys applied.
func shortLabel(ps []sweep.Param, short map[string]string) string {
	if len(ps) == 0 {
		return ""
	}
	out := make([]sweep.Param, len(ps))
	for i, p := range ps {
		out[i] = sweep.Param{Key: short[p.Key], Value: p.Value}
	}
	return sweep.ParamsLabel(out)
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

func statOf(cs *sweep.ComboStats, metric string) (sweep.Stat, bool) {
	if cs == nil {
		return sweep.Stat{}, false
	}
	st, ok := cs.Stat(metric)
	return st, ok && st.N > 0 && st.Mean != nil
}

func estimate(st sweep.Stat, ok bool) plot.Estimate {
	if !ok {
		return plot.Estimate{Mean: nan(), CI: nan()}
	}
	e := plot.Estimate{Mean: *st.Mean}
	if st.CI95 != nil {
		e.CI = *st.CI95
	}
	return e
}

// sweepData is what the sections of a sweep report draw from.
type sweepData struct {
	m       *sweep.Manifest
	rows    []*sweep.Row
	agg     []*sweep.ComboStats
	byCombo []*sweep.ComboStats
	l       layout
	short   map[string]string
}

// sweepReport builds the report of a sweep directory.
func sweepReport(ctx context.Context, dir string, series bool, warn func(string)) (*Report, []string, error) {
	m, rs, err := sweep.Load(dir, warn)
	if err != nil {
		return nil, nil, err
	}
	rows := rs.Sorted()
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: the sweep has no finished runs yet", dir)
	}
	d := &sweepData{m: m, rows: rows, agg: sweep.Aggregate(m, rows, sweep.Columns(rows)), byCombo: make([]*sweep.ComboStats, m.Combinations),
		l: newLayout(m), short: shortKeys(m)}
	for _, cs := range d.agg {
		d.byCombo[cs.Combo] = cs
	}
	r := New("Sweep of " + m.ScenarioName)
	fsv := &figureSaver{dir: dir, r: r}
	sweepSetup(r, m, rows)
	sweepSummary(r, d.agg)
	for _, section := range []func(*figureSaver, *sweepData) error{sweepBars, sweepCDFs, sweepPantheon} {
		if err := section(fsv, d); err != nil {
			return nil, nil, err
		}
	}
	if series {
		if err := sweepSeries(ctx, r, fsv, dir, m, rs, warn); err != nil {
			return nil, nil, err
		}
	}
	return r, fsv.saved, r.Err()
}

// sweepSetup describes the sweep: scenario, grid, runs and seeds.
func sweepSetup(r *Report, m *sweep.Manifest, rows []*sweep.Row) {
	r.Heading("Setup")
	grid := "no grid (one combination)"
	if len(m.Grid) > 0 {
		var parts []string
		for _, a := range m.Grid {
			parts = append(parts, a.Key+" ∈ {"+strings.Join(a.Values, ", ")+"}")
		}
		grid = strings.Join(parts, " × ")
	}
	items := []string{
		"Scenario: " + m.ScenarioPath + " (name " + m.ScenarioName + ")",
		"Grid: " + grid,
		fmt.Sprintf("Runs: %d per combination, seeds %d to %d (run r uses seed %d+r in every combination)", m.Runs, m.FirstSeed, m.FirstSeed+uint64(m.Runs)-1, m.FirstSeed),
		fmt.Sprintf("Recorded: %d of %d runs", len(rows), m.Jobs()),
	}
	if len(m.Sets) > 0 {
		items = append(items, "Fixed overrides: "+strings.Join(m.Sets, " "))
	}
	if m.Shard.Count > 1 {
		items = append(items, fmt.Sprintf("Shard %s only: merge the shards with cclab merge for the whole sweep", m.Shard))
	}
	r.List(items...)
	if len(rows) < m.ShardJobs() {
		r.Paragraph(fmt.Sprintf("The sweep is incomplete (%d of %d runs): the figures show the runs recorded so far. Resume it with the same cclab sweep command.", len(rows), m.ShardJobs()))
	}
	r.Pre(m.Scenario)

}

// sweepSummary is the table of mean ± CI per combination.
func sweepSummary(r *Report, agg []*sweep.ComboStats) {
	r.Heading("Summary")
	header := []string{"combination", "runs"}
	for _, sm := range SummaryMetrics {
		header = append(header, sm.Header)
	}
	var table [][]any
	for _, cs := range agg {
		row := []any{cs.Label(), cs.Runs}
		for _, sm := range SummaryMetrics {
			st, ok := statOf(cs, sm.Metric)
			row = append(row, meanCIOf(st, ok))
		}
		table = append(table, row)
	}
	r.Table("Mean ± 95% confidence half-width (Student t) over runs, per combination. FCT is over flows that finished.", header, table)

}

// sweepBars draws one bar chart per metric.
func sweepBars(fsv *figureSaver, d *sweepData) error {
	r, m, l := fsv.r, d.m, d.l
	maxFlows := 0
	for _, row := range d.rows {
		maxFlows = max(maxFlows, len(row.Result.Flows))
	}
	r.Heading("Means per combination")
	r.Paragraph("Bars are means over runs; whiskers are 95% confidence intervals of the mean. Every combination used the same seeds, so differences between bars are not blurred by different random draws.")
	for _, mi := range reportMetrics {
		if mi.name == "jain" && maxFlows < 2 {
			continue
		}
		values := make([][]plot.Estimate, len(l.groups))
		for g := range values {
			values[g] = make([]plot.Estimate, len(l.categories))
			for k := range values[g] {
				values[g][k] = plot.Estimate{Mean: nan(), CI: nan()}
			}
		}
		defined := false
		for c, pl := range l.place {
			st, ok := statOf(d.byCombo[c], mi.name)
			defined = defined || ok
			values[pl[0]][pl[1]] = estimate(st, ok)
		}
		if !defined {
			continue
		}
		fig := plot.Bars{
			Title:      fmt.Sprintf("%s: %s (mean ± 95%% CI)", m.ScenarioName, mi.what),
			X:          plot.Axis{Label: l.xLabel},
			Y:          plot.Axis{Label: mi.axis},
			Groups:     l.ticks,
			Categories: l.categories,
			Values:     values,
		}
		if err := fsv.add(capitalise(mi.what)+" per combination.", "bars-"+mi.name, plot.SVG, fig); err != nil {
			return err
		}
	}

	return nil
}

// sweepCDFs draws the distribution over runs of the per-run metrics.
func sweepCDFs(fsv *figureSaver, d *sweepData) error {
	r, m, rows, short := fsv.r, d.m, d.rows, d.short
	r.Heading("Distributions across runs")
	shown := min(m.Combinations, maxCDFSamples)
	if m.Combinations > shown {
		r.Paragraph(fmt.Sprintf("The CDFs show the first %d of %d combinations; rows.csv has them all.", shown, m.Combinations))
	}
	for _, name := range cdfMetrics {
		mi := metricByName(name)
		col := columnByName(sweep.Columns(rows), name)
		var samples []plot.Sample
		defined := 0
		for c := range shown {
			var v []float64
			for _, row := range rows {
				if row.Combo == c {
					x := col.Value(row.Result)
					v = append(v, x)
					if !math.IsNaN(x) {
						defined++
					}
				}
			}
			samples = append(samples, plot.Sample{Name: shortLabel(m.ComboParams(c), short), Values: v})
		}
		if defined == 0 {
			continue
		}
		fig := plot.CDF{
			Title:   fmt.Sprintf("%s: %s, one value per run", m.ScenarioName, mi.what),
			X:       plot.Axis{Label: mi.axis},
			Samples: samples,
		}
		if err := fsv.add("Distribution over runs of the "+mi.what+".", "cdf-"+name, plot.SVG, fig); err != nil {
			return err
		}
	}

	return nil
}

// sweepPantheon draws goodput against queueing delay per combination.
func sweepPantheon(fsv *figureSaver, d *sweepData) error {
	r, m, l := fsv.r, d.m, d.l
	r.Heading("Throughput and delay")
	var pts []plot.PointSeries
	for k, cat := range l.categories {
		ps := plot.PointSeries{Name: cat}
		for c, pl := range l.place {
			if pl[1] != k {
				continue
			}
			g, gok := statOf(d.byCombo[c], "goodput_mbps")
			d, dok := statOf(d.byCombo[c], "qdelay_p95_ms")
			if !gok || !dok {
				continue
			}
			p := plot.Point{X: *d.Mean, Y: *g.Mean, Label: l.groups[pl[0]]}
			if d.CI95 != nil {
				p.XErr = *d.CI95
			}
			if g.CI95 != nil {
				p.YErr = *g.CI95
			}
			ps.Points = append(ps.Points, p)
		}
		pts = append(pts, ps)
	}
	pan := plot.Pantheon(m.ScenarioName+": goodput vs 95th-percentile queueing delay (mean ± 95% CI)", pts)
	return fsv.add("Pantheon-style summary: mean goodput against mean 95th-percentile queueing delay per combination, delay axis reversed so that better is up and to the right.", "pantheon", plot.SVG, pan)

}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func columnByName(cols []sweep.Column, name string) sweep.Column {
	for _, c := range cols {
		if c.Name == name {
			return c
		}
	}
	return sweep.Column{Name: name, Value: func(*experiment.Result) float64 { return nan() }}
}

func meanCIOf(st sweep.Stat, ok bool) MeanCI {
	if !ok {
		return MeanCI{Mean: nan(), CI: nan()}
	}
	return MeanCIOf(st)
}

// sweepSeries re-simulates run 0 of the first combinations with sampling on
// and draws their time series together. Rows keep no time series (they
// would dwarf the results); the simulator is deterministic, so run 0 is
// reproduced exactly, which the report checks against its recorded row.
func sweepSeries(ctx context.Context, r *Report, fsv *figureSaver, dir string, m *sweep.Manifest, rs *sweep.Rows, warn func(string)) error {
	r.Heading("Time series of run 0")
	scnPath, found := locateScenario(dir, m)
	spec := sweep.Spec{ScenarioPath: scnPath, ScenarioData: []byte(m.Scenario), Sets: m.Sets, Grid: m.Grid, FirstSeed: &m.FirstSeed, Runs: m.Runs}
	plan, err := sweep.NewPlan(spec)
	if err != nil {
		r.Paragraph("Run 0 could not be re-simulated for time series: " + err.Error())
		msg := fmt.Sprintf("%s: no time-series plot: run 0 could not be re-simulated: %v", dir, err)
		switch {
		case found:
			// The scenario file is there: the error says what else is wrong.
		case filepath.IsAbs(m.ScenarioPath):
			msg += fmt.Sprintf("; the sweep's scenario file %s is no longer there with the content the sweep ran, and the scenario's relative paths (traces) resolve against it", m.ScenarioPath)
		default:
			msg += fmt.Sprintf("; %s records the scenario as %s, relative to the directory cclab sweep ran in, and neither the current directory nor a directory above %s holds that file with the content the sweep ran: run cclab report from the directory the sweep ran in (the scenario's relative paths, such as traces, resolve against the scenario file), or pass --no-series",
				sweep.ManifestFile, m.ScenarioPath, dir)
		}
		warn(msg)
		return nil
	}
	recorded := map[int]*sweep.Row{}
	for _, row := range rs.Sorted() {
		if row.Run == 0 {
			recorded[row.Combo] = row
		}
	}
	n := min(m.Combinations, maxSeriesCombos)
	short := shortKeys(m)
	var cwnd, rtt, thr, queue []plot.Series
	var mismatched []string
	for c := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := plan.Scenario(sweep.Job{Combo: c, Run: 0})
		s.Sample = scenario.Dur(SeriesSample)
		res, net, err := experiment.Run(ctx, s)
		if err != nil {
			r.Paragraph(fmt.Sprintf("Combination %s could not be re-simulated: %v", plan.Combos[c].Label(), err))
			warn(fmt.Sprintf("%s: combination %s left out of the time-series plot: run 0 could not be re-simulated: %v", dir, plan.Combos[c].Label(), err))
			continue
		}
		if row := recorded[c]; row != nil {
			// Sampling adds timer events but changes nothing else.
			a, b := *res, *row.Result
			a.WallSeconds, b.WallSeconds = 0, 0
			a.Events, b.Events = 0, 0
			if !reflect.DeepEqual(a, b) {
				mismatched = append(mismatched, plan.Combos[c].Label())
			}
		}
		name := shortLabel(plan.Combos[c].Params, short)
		if name == "" {
			name = m.ScenarioName
		}
		ser := net.Series
		t := make([]float64, len(ser.T))
		for i, x := range ser.T {
			t[i] = x.Seconds()
		}
		q := make([]float64, len(ser.QueuePackets))
		for i, v := range ser.QueuePackets {
			q[i] = float64(v)
		}
		queue = append(queue, plot.Series{Name: name, X: t, Y: q})
		// The first measured flow stands for the combination.
		for i, f := range net.Flows {
			if f.Background || len(ser.Flows[i].CwndBytes) == 0 {
				continue
			}
			fs := ser.Flows[i]
			x := t[fs.Offset : fs.Offset+len(fs.CwndBytes)]
			cw := make([]float64, len(fs.CwndBytes))
			rt := make([]float64, len(fs.RTTms))
			for k := range cw {
				cw[k] = float64(fs.CwndBytes[k]) / 1000
				rt[k] = fs.RTTms[k]
				if rt[k] == 0 {
					rt[k] = nan() // no sample yet
				}
			}
			cwnd = append(cwnd, plot.Series{Name: name, X: x, Y: cw})
			rtt = append(rtt, plot.Series{Name: name, X: x, Y: rt})
			thr = append(thr, plot.Series{Name: name, X: x, Y: smooth(fs.Mbps, smoothSamples(ser.Interval))})
			break
		}
	}
	if len(queue) == 0 {
		return nil
	}
	text := fmt.Sprintf("Run 0 (seed %d) of ", m.FirstSeed)
	if n < m.Combinations {
		text += fmt.Sprintf("the first %d of %d combinations", n, m.Combinations)
	} else {
		text += "each combination"
	}
	text += fmt.Sprintf(", re-simulated with %v sampling; cwnd, RTT and throughput are the first measured flow's.", SeriesSample)
	r.Paragraph(text)
	if len(mismatched) > 0 {
		warn(fmt.Sprintf("%s: the re-simulated run 0 differs from the recorded row for %s: the time series may not match the tables", dir, strings.Join(mismatched, "; ")))
		r.Paragraph("Warning: the re-simulated run 0 differs from the recorded row for " + strings.Join(mismatched, "; ") +
			": this cclab simulates differently from the one that ran the sweep, so these time series may not match the tables.")
	}
	fig := plot.Stacked{
		Title: m.ScenarioName + ": run 0 per combination",
		X:     plot.Axis{Label: "time (s)"},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "cwnd (KB)", IncludeZero: true}, Series: cwnd, Step: true},
			{Y: plot.Axis{Label: "RTT (ms)", IncludeZero: true}, Series: rtt},
			{Y: plot.Axis{Label: "in-order goodput (Mbit/s, " + smoothWindow.String() + " average)", IncludeZero: true}, Series: thr},
			{Y: plot.Axis{Label: "queue (packets)", IncludeZero: true}, Series: queue, Step: true},
		},
	}
	return fsv.add("Congestion window, RTT, throughput and bottleneck queue over time, run 0 of each combination shown.", "timeseries-run0", plot.PNG, fig)
}

// locateScenario finds the sweep's scenario file, against which the
// scenario's relative paths (traces) resolve. The manifest records the
// path as given to cclab sweep, relative to a working directory it does
// not record; besides the current directory, the directory holding the
// sweep and those above it are the likely origins (cclab sweep x.yaml
// --out results/s). A candidate counts only if it holds the content the
// sweep ran, so an unrelated file of the same name is never taken. found
// is false when no candidate matched; path is then the recorded one
// (still right for a built-in scenario, or one without relative paths).
func locateScenario(dir string, m *sweep.Manifest) (path string, found bool) {
	p := m.ScenarioPath
	if p == "" {
		return p, false
	}
	if sameContent(p, m.Scenario) {
		return p, true
	}
	if filepath.IsAbs(p) {
		return p, false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return p, false
	}
	for d := abs; ; d = filepath.Dir(d) {
		if c := filepath.Join(d, p); sameContent(c, m.Scenario) {
			return c, true
		}
		if filepath.Dir(d) == d {
			return p, false
		}
	}
}

func sameContent(path, content string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(content)) {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && string(data) == content
}
