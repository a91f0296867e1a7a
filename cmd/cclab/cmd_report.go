package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/analysis/sweep"
)

func init() {
	register(&command{name: "report", summary: "write an HTML report with plots for a sweep or run output directory", run: runReport})
}

// ReportFile is the report's name inside the directory it describes.
const ReportFile = "report.html"

// Limits that keep figures readable; the tables always list everything.
const (
	maxCDFSamples   = 12 // lines in one CDF
	maxSeriesCombos = 6  // combinations re-simulated for time series
)

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	noSeries := fs.Bool("no-series", false, "sweeps: do not re-simulate run 0 of the first combinations for time-series plots")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab report DIR (a cclab sweep --out or cclab run --out directory)")
		fs.PrintDefaults()
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one directory, got %d arguments (usage: cclab report DIR)", len(pos))
	}
	dir := pos[0]
	if st, err := os.Stat(dir); err != nil {
		return err
	} else if !st.IsDir() {
		return usagef("%s is not a directory (want a cclab sweep --out or cclab run --out directory)", dir)
	}
	warn := func(msg string) { fmt.Fprintln(stderr, "warning: "+msg) }
	var r *report.Report
	var figs []string
	switch {
	case exists(filepath.Join(dir, sweep.ManifestFile)):
		r, figs, err = sweepReport(ctx, dir, !*noSeries, warn)
	case exists(filepath.Join(dir, "summary.json")):
		r, figs, err = runDirReport(dir)
	default:
		return fmt.Errorf("%s holds neither %s (cclab sweep --out) nor summary.json (cclab run --out)", dir, sweep.ManifestFile)
	}
	if err != nil {
		return err
	}
	path := filepath.Join(dir, ReportFile)
	if err := r.WriteFile(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %d plot(s) beside it (PNG and SVG)\n", path, len(figs))
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// figureSaver saves figures beside the report and embeds one format.
type figureSaver struct {
	dir   string
	r     *report.Report
	saved []string
}

// add saves fig as STEM.png and STEM.svg and embeds the given format.
func (s *figureSaver) add(caption, stem, embed string, fig plot.Figure) error {
	paths, err := plot.SaveAll(fig, filepath.Join(s.dir, stem), plot.PNG, plot.SVG)
	if err != nil {
		return fmt.Errorf("plotting %s: %w", stem, err)
	}
	s.saved = append(s.saved, stem)
	for _, p := range paths {
		if strings.HasSuffix(p, "."+embed) {
			s.r.Figure(caption, p)
		}
	}
	return s.r.Err()
}

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

// sweepReport builds the report of a sweep directory.
func sweepReport(ctx context.Context, dir string, series bool, warn func(string)) (*report.Report, []string, error) {
	m, rs, err := sweep.Load(dir, warn)
	if err != nil {
		return nil, nil, err
	}
	rows := rs.Sorted()
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: the sweep has no finished runs yet", dir)
	}
	agg := sweep.Aggregate(m, rows, sweep.Columns(rows))
	byCombo := make([]*sweep.ComboStats, m.Combinations)
	for _, cs := range agg {
		byCombo[cs.Combo] = cs
	}
	r := report.New("Sweep of " + m.ScenarioName)
	fsv := &figureSaver{dir: dir, r: r}

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

	r.Heading("Summary")
	header := []string{"combination", "runs"}
	for _, sm := range summaryMetrics {
		header = append(header, sm.header)
	}
	var table [][]any
	for _, cs := range agg {
		row := []any{cs.Label(), cs.Runs}
		for _, sm := range summaryMetrics {
			st, ok := statOf(cs, sm.metric)
			row = append(row, meanCIOf(st, ok))
		}
		table = append(table, row)
	}
	r.Table("Mean ± 95% confidence half-width (Student t) over runs, per combination. FCT is over flows that finished.", header, table)

	l := newLayout(m)
	short := shortKeys(m)
	maxFlows := 0
	for _, row := range rows {
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
			st, ok := statOf(byCombo[c], mi.name)
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
			return nil, nil, err
		}
	}

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
			return nil, nil, err
		}
	}

	r.Heading("Throughput and delay")
	var pts []plot.PointSeries
	for k, cat := range l.categories {
		ps := plot.PointSeries{Name: cat}
		for c, pl := range l.place {
			if pl[1] != k {
				continue
			}
			g, gok := statOf(byCombo[c], "goodput_mbps")
			d, dok := statOf(byCombo[c], "qdelay_p95_ms")
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
	if err := fsv.add("Pantheon-style summary: mean goodput against mean 95th-percentile queueing delay per combination, delay axis reversed so that better is up and to the right.", "pantheon", plot.SVG, pan); err != nil {
		return nil, nil, err
	}

	if series {
		if err := sweepSeries(ctx, r, fsv, m, rs); err != nil {
			return nil, nil, err
		}
	}
	return r, fsv.saved, r.Err()
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

func meanCIOf(st sweep.Stat, ok bool) report.MeanCI {
	if !ok {
		return report.MeanCI{Mean: nan(), CI: nan()}
	}
	return meanCI(st)
}

// sweepSeries re-simulates run 0 of the first combinations with sampling on
// and draws their time series together. Rows keep no time series (they
// would dwarf the results); the simulator is deterministic, so run 0 is
// reproduced exactly, which the report checks against its recorded row.
func sweepSeries(ctx context.Context, r *report.Report, fsv *figureSaver, m *sweep.Manifest, rs *sweep.Rows) error {
	r.Heading("Time series of run 0")
	spec := sweep.Spec{ScenarioPath: m.ScenarioPath, ScenarioData: []byte(m.Scenario), Sets: m.Sets, Grid: m.Grid, FirstSeed: &m.FirstSeed, Runs: m.Runs}
	plan, err := sweep.NewPlan(spec)
	if err != nil {
		r.Paragraph("Run 0 could not be re-simulated for time series: " + err.Error())
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
		s.Sample = scenario.Dur(defaultSample)
		res, net, err := experiment.Run(s)
		if err != nil {
			r.Paragraph(fmt.Sprintf("Combination %s could not be re-simulated: %v", plan.Combos[c].Label(), err))
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
	text += fmt.Sprintf(", re-simulated with %v sampling; cwnd, RTT and throughput are the first measured flow's.", defaultSample)
	r.Paragraph(text)
	if len(mismatched) > 0 {
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

// csvTable is a CSV file read with its header, for clear errors by line.
type csvTable struct {
	path   string
	header map[string]int
	rows   [][]string
}

func readCSVTable(path string, need ...string) (*csvTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty file, want a header line", path)
	}
	t := &csvTable{path: path, header: map[string]int{}, rows: recs[1:]}
	for i, h := range recs[0] {
		t.header[h] = i
	}
	for _, n := range need {
		if _, ok := t.header[n]; !ok {
			return nil, fmt.Errorf("%s: no %q column (header: %s)", path, n, strings.Join(recs[0], ","))
		}
	}
	return t, nil
}

func (t *csvTable) float(row int, col string) (float64, error) {
	s := t.rows[row][t.header[col]]
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a number", t.path, row+2, col, s)
	}
	return v, nil
}

func (t *csvTable) text(row int, col string) string { return t.rows[row][t.header[col]] }

// runDirReport builds the report of a cclab run --out directory from its
// summary.json and time-series CSV files.
func runDirReport(dir string) (*report.Report, []string, error) {
	path := filepath.Join(dir, "summary.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var res experiment.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, nil, fmt.Errorf("%s: not a run summary: %v", path, err)
	}
	r := report.New(fmt.Sprintf("Run of %s (seed %d)", res.Scenario, res.Seed))
	fsv := &figureSaver{dir: dir, r: r}
	r.Heading("Results")
	r.Paragraph(fmt.Sprintf("Simulated %.3f s in %.3f s of wall time (%d events).", res.SimSeconds, res.WallSeconds, res.Events))
	var rows [][]any
	for _, f := range res.Flows {
		rows = append(rows, []any{f.Name, f.CC, f.BytesDelivered, f.GoodputMbps, optionalCell(f.FCT), f.Retransmissions, f.RTOs,
			f.RTTMeanMs, f.RTTP95Ms, f.QdelayMeanMs, f.QdelayP95Ms, optionalCell(f.RTI)})
	}
	r.Table("Measured flows.", []string{"flow", "cc", "delivered (B)", "goodput (Mbit/s)", "FCT (s)", "retransmissions", "RTOs",
		"RTT mean (ms)", "RTT p95 (ms)", "qdelay mean (ms)", "qdelay p95 (ms)", "RTI"}, rows)
	if len(res.Background) > 0 {
		rows = nil
		for _, b := range res.Background {
			rows = append(rows, []any{b.Name, b.OfferedMbps, b.SentMbps, b.DeliveredMbps, b.CapacityShare, b.Drops})
		}
		r.Table("Background traffic.", []string{"source", "offered (Mbit/s)", "sent (Mbit/s)", "delivered (Mbit/s)", "capacity share", "drops"}, rows)
	}
	rows = nil
	for _, l := range res.Links {
		rows = append(rows, []any{l.Name, l.Utilization, l.Drops, l.Losses, l.BackgroundShare})
	}
	r.Table(fmt.Sprintf("Links. Jain's fairness index %s.", report.FormatFloat(jainOrNaN(res.Jain))), []string{"link", "utilisation", "queue drops", "random losses", "background share"}, rows)
	if y, err := os.ReadFile(filepath.Join(dir, "scenario.yaml")); err == nil {
		r.Subheading("Scenario as run")
		r.Pre(string(y))
	}

	flowsPath := filepath.Join(dir, "flows.csv")
	if _, err := os.Stat(flowsPath); errors.Is(err, fs.ErrNotExist) {
		r.Paragraph("No time series were recorded (flows.csv is missing).")
		return r, fsv.saved, r.Err()
	}
	ft, err := readCSVTable(flowsPath, "t_s", "flow", "cc", "background", "cwnd_bytes", "rtt_ms", "goodput_mbps")
	if err != nil {
		return nil, nil, err
	}
	lt, err := readCSVTable(filepath.Join(dir, "link.csv"), "t_s", "queue_packets", "rate_mbps")
	if err != nil {
		return nil, nil, err
	}
	type flowSeries struct {
		name          string
		t, cw, rtt, m []float64
	}
	var flows []*flowSeries
	index := map[string]*flowSeries{}
	extra := 0
	for i := range ft.rows {
		if ft.text(i, "background") == "true" {
			continue
		}
		key := ft.text(i, "flow")
		fsr := index[key]
		if fsr == nil {
			if len(flows) == maxPlottedFlows {
				if _, counted := index["\x00"+key]; !counted {
					index["\x00"+key] = nil
					extra++
				}
				continue
			}
			fsr = &flowSeries{name: key + " (" + ft.text(i, "cc") + ")"}
			index[key] = fsr
			flows = append(flows, fsr)
		}
		var vals [4]float64
		for k, col := range []string{"t_s", "cwnd_bytes", "rtt_ms", "goodput_mbps"} {
			if vals[k], err = ft.float(i, col); err != nil {
				return nil, nil, err
			}
		}
		if vals[2] == 0 {
			vals[2] = nan() // no RTT sample yet: a gap, not a zero RTT
		}
		fsr.t = append(fsr.t, vals[0])
		fsr.cw = append(fsr.cw, vals[1]/1000)
		fsr.rtt = append(fsr.rtt, vals[2])
		fsr.m = append(fsr.m, vals[3])
	}
	lT := make([]float64, len(lt.rows))
	lQ := make([]float64, len(lt.rows))
	lR := make([]float64, len(lt.rows))
	rateKnown := false
	for i := range lt.rows {
		var err error
		if lT[i], err = lt.float(i, "t_s"); err != nil {
			return nil, nil, err
		}
		if lQ[i], err = lt.float(i, "queue_packets"); err != nil {
			return nil, nil, err
		}
		if lR[i], err = lt.float(i, "rate_mbps"); err != nil {
			return nil, nil, err
		}
		rateKnown = rateKnown || lR[i] > 0
	}
	step := time.Duration(0)
	if len(lT) > 1 {
		step = time.Duration(math.Round((lT[1] - lT[0]) * 1e9))
	}
	var cwnd, rtt, thr []plot.Series
	var rttS, thrS []plot.Sample
	for _, f := range flows {
		cwnd = append(cwnd, plot.Series{Name: f.name, X: f.t, Y: f.cw})
		rtt = append(rtt, plot.Series{Name: f.name, X: f.t, Y: f.rtt})
		thr = append(thr, plot.Series{Name: f.name, X: f.t, Y: smooth(f.m, smoothSamples(step))})
		rttS = append(rttS, plot.Sample{Name: f.name, Values: f.rtt})
		thrS = append(thrS, plot.Sample{Name: f.name, Values: f.m})
	}
	if rateKnown {
		thr = append(thr, plot.Series{Name: "link rate", X: lT, Y: lR})
	}
	title := fmt.Sprintf("%s (seed %d)", res.Scenario, res.Seed)
	if extra > 0 {
		title += fmt.Sprintf(": first %d of %d flows", len(flows), len(flows)+extra)
	}
	interval := "the sampling interval"
	if step > 0 {
		interval = step.String()
	}
	r.Heading("Time series")
	dash := plot.Stacked{
		Title: title,
		X:     plot.Axis{Label: "time (s)"},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "cwnd (KB)", IncludeZero: true}, Series: cwnd, Step: true},
			{Y: plot.Axis{Label: "RTT (ms)", IncludeZero: true}, Series: rtt},
			{Y: plot.Axis{Label: "in-order goodput (Mbit/s, " + smoothWindow.String() + " average)", IncludeZero: true}, Series: thr},
			{Y: plot.Axis{Label: "queue (packets)", IncludeZero: true}, Series: []plot.Series{{Name: "bottleneck", X: lT, Y: lQ}}, Step: true},
		},
		Events: scheduleEvents(dir),
	}
	if err := fsv.add("Congestion window, latest RTT sample (every "+interval+"), throughput averaged over "+smoothWindow.String()+" and bottleneck queue over time.", "dashboard", plot.PNG, dash); err != nil {
		return nil, nil, err
	}
	if bt, err := readCSVTable(filepath.Join(dir, "background.csv"), "t_s", "source", "delivered_mbps"); err == nil {
		var bg []plot.Series
		bidx := map[string]int{}
		for i := range bt.rows {
			t, err := bt.float(i, "t_s")
			if err != nil {
				return nil, nil, err
			}
			v, err := bt.float(i, "delivered_mbps")
			if err != nil {
				return nil, nil, err
			}
			name := bt.text(i, "source")
			k, ok := bidx[name]
			if !ok {
				if len(bg) == maxPlottedFlows {
					continue
				}
				k = len(bg)
				bidx[name] = k
				bg = append(bg, plot.Series{Name: name})
			}
			bg[k].X = append(bg[k].X, t)
			bg[k].Y = append(bg[k].Y, v)
		}
		fig := plot.TimeSeries{Title: res.Scenario + ": background traffic delivered", X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "delivered (Mbit/s)", IncludeZero: true}, Series: bg}
		if err := fsv.add("Background sources' delivered rate per interval.", "background", plot.PNG, fig); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	r.Heading("Distributions")
	if err := fsv.add("RTT samples (the latest RTT at each sampling instant) per flow.", "cdf-rtt", plot.SVG,
		plot.CDF{Title: res.Scenario + ": RTT, sampled every " + interval, X: plot.Axis{Label: "RTT (ms)"}, Samples: rttS}); err != nil {
		return nil, nil, err
	}
	if err := fsv.add("Throughput per sampling interval per flow.", "cdf-throughput", plot.SVG,
		plot.CDF{Title: res.Scenario + ": in-order goodput per " + interval + " interval", X: plot.Axis{Label: "in-order goodput (Mbit/s)"}, Samples: thrS}); err != nil {
		return nil, nil, err
	}
	return r, fsv.saved, r.Err()
}

// scheduleEvents marks the bottleneck's scheduled changes, read from the
// run's scenario.yaml when it is there.
func scheduleEvents(dir string) []plot.Event {
	data, err := os.ReadFile(filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		return nil
	}
	s, err := scenario.Parse(data, filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		return nil
	}
	var ev []plot.Event
	for _, c := range s.Bottleneck.Schedule {
		ev = append(ev, plot.Event{X: c.At.V.Seconds(), Label: fmt.Sprintf("link change at %.3g s", c.At.V.Seconds())})
	}
	return ev
}

// smoothWindow is the averaging window of report throughput panels: per
// 100 ms interval, delivered bytes spike when a retransmission fills a
// reassembly hole (tens of times the link rate on a slow link), which
// flattens every other line in the panel.
const smoothWindow = time.Second

// smooth returns the trailing mean of y over k samples (k >= 1), skipping
// NaNs.
func smooth(y []float64, k int) []float64 {
	out := make([]float64, len(y))
	var sum float64
	n := 0
	for i, v := range y {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
		if j := i - k; j >= 0 && !math.IsNaN(y[j]) {
			sum -= y[j]
			n--
		}
		if n > 0 {
			out[i] = sum / float64(n)
		} else {
			out[i] = nan()
		}
	}
	return out
}

// smoothSamples is how many samples of the given interval make
// smoothWindow.
func smoothSamples(interval time.Duration) int {
	if interval <= 0 {
		return 1
	}
	return max(1, int(math.Round(float64(smoothWindow)/float64(interval))))
}

func optionalCell(p *float64) any {
	if p == nil {
		return nan()
	}
	return *p
}
