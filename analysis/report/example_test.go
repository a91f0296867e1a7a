package report_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

// Regenerate docs/examples with:
//
//	go test ./analysis/report -run TestExampleReport -update-example
var updateExample = flag.Bool("update-example", false, "rewrite docs/examples from the example report")

// exampleBudget is the size limit for everything under docs/examples.
const exampleBudget = 300 << 10

// TestExampleReport builds the example report from synthetic data, checks
// it stays within the size budget and is deterministic, and with
// -update-example writes it to docs/examples.
func TestExampleReport(t *testing.T) {
	dir := t.TempDir()
	if *updateExample {
		dir = filepath.Join("..", "..", "docs", "examples")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeExample(dir); err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
	}
	if total > exampleBudget {
		t.Errorf("example files total %d bytes, want ≤ %d", total, exampleBudget)
	}

	again := t.TempDir()
	if err := writeExample(again); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		a, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(again, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("%s differs between two builds", e.Name())
		}
	}
}

// writeExample writes report.html into dir, with one of its figures
// beside it as a PNG, the way a report command leaves plots beside the
// report.
func writeExample(dir string) error {
	return writeExampleFigures(dir, nil)
}

// writeExampleFigures builds the example; if each is non-nil it is also
// given every figure by name (used to inspect them as PNGs).
func writeExampleFigures(dir string, each func(name string, f plot.Figure)) error {
	run := fluidRun()
	dashboard := plot.Stacked{
		// 90 dpi keeps the embedded PNG, the largest item, within the
		// size budget of docs/examples.
		Size:   plot.Size{DPI: 90},
		Title:  "Single run: AIMD flow, 10 → 5 Mbit/s bottleneck, 40 ms base RTT",
		X:      plot.Axis{Label: "time (s)"},
		Events: []plot.Event{{X: 15, Label: "link switch at 15 s"}},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "cwnd (KB)", IncludeZero: true}, Series: []plot.Series{{Name: "flow 1", X: run.t, Y: run.cwnd}}},
			{Y: plot.Axis{Label: "RTT (ms)"}, Series: []plot.Series{{Name: "flow 1", X: run.t, Y: run.rtt}}},
			{Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: []plot.Series{
				{Name: "flow 1", X: run.t, Y: run.thr}, {Name: "capacity", X: run.t, Y: run.capacity}}, Step: true},
			{Y: plot.Axis{Label: "queue (packets)", IncludeZero: true}, Series: []plot.Series{{Name: "bottleneck", X: run.t, Y: run.queue}}},
		},
	}

	r := rand.New(rand.NewPCG(2024, 7))
	schemes := []string{"MARLIN", "cubic", "vegas"}
	rtts := make([]plot.Sample, len(schemes))
	for i, s := range schemes {
		base := []float64{42, 70, 44}[i]
		spread := []float64{4, 18, 2}[i]
		v := make([]float64, 150)
		for j := range v {
			v[j] = base + spread*math.Abs(r.NormFloat64())
		}
		rtts[i] = plot.Sample{Name: s, Values: v}
	}
	cdf := plot.CDF{Title: "Per-packet RTT", X: plot.Axis{Label: "RTT (ms)"}, Samples: rtts}

	losses := []string{"0%", "0.1%", "1%", "2%"}
	transfer := [][]plot.Estimate{
		{{Mean: 4.1, CI: 0.2}, {Mean: 4.0, CI: 0.2}, {Mean: 4.6, CI: 0.3}},
		{{Mean: 4.3, CI: 0.2}, {Mean: 4.9, CI: 0.3}, {Mean: 5.2, CI: 0.3}},
		{{Mean: 5.0, CI: 0.3}, {Mean: 8.7, CI: 0.9}, {Mean: 7.9, CI: 0.7}},
		{{Mean: 6.2, CI: 0.4}, {Mean: 13.5, CI: 1.6}, {Mean: math.NaN()}},
	}
	bars := plot.Bars{
		Title:  "Mean transfer time of a 5 MB file (mean ± 95% CI, 20 runs)",
		X:      plot.Axis{Label: "random loss rate"},
		Y:      plot.Axis{Label: "transfer time (s)"},
		Groups: losses, Categories: schemes, Values: transfer,
	}

	pantheon := plot.Pantheon("Throughput vs delay (mean ± 95% CI over 20 runs)", []plot.PointSeries{
		{Name: "MARLIN", Points: []plot.Point{{X: 9, Y: 8.9, XErr: 1.5, YErr: 0.3, Label: "MARLIN"}}},
		{Name: "cubic", Points: []plot.Point{{X: 61, Y: 9.3, XErr: 6, YErr: 0.2, Label: "cubic"}}},
		{Name: "vegas", Points: []plot.Point{{X: 4, Y: 6.1, XErr: 1, YErr: 0.6, Label: "vegas"}}},
	})

	var evals []plot.XY
	for i := 0; i < 100; i++ {
		d := 5 + 80*r.Float64()
		evals = append(evals, plot.XY{X: d, Y: 9.6 - 7*math.Exp(-d/14) - 2.5*r.Float64()*r.Float64()})
	}
	pareto := plot.Pareto{
		Title: "NSGA-II tuning: 100 evaluations",
		X:     plot.Axis{Label: "95th-percentile queueing delay (ms)"},
		Y:     plot.Axis{Label: "throughput (Mbit/s)"},
		XGoal: plot.Minimize, YGoal: plot.Maximize,
		Points: evals,
		Refs:   []plot.Ref{{Label: "default alpha=2, beta=4", X: 38, Y: 7.4}},
	}

	var lossX, mathis []float64
	for p := 1e-4; p <= 0.1; p *= 1.25 {
		lossX = append(lossX, p)
		// Mathis et al.: rate = MSS/RTT · sqrt(3/2) / sqrt(p), capped by
		// the 10 Mbit/s link.
		mathis = append(mathis, math.Min(10, 1460*8/0.04*math.Sqrt(1.5)/math.Sqrt(p)/1e6))
	}
	model := plot.ModelCurves{
		Title:  "TCP throughput vs loss: model and simulation",
		X:      plot.Axis{Label: "packet loss rate", Log: true},
		Y:      plot.Axis{Label: "throughput (Mbit/s)", Log: true},
		Curves: []plot.Series{{Name: "Mathis model", X: lossX, Y: mathis}},
		Measured: []plot.PointSeries{{Name: "simulation (mean ± 95% CI)", Points: []plot.Point{
			{X: 1e-3, Y: 9.1, YErr: 0.4}, {X: 3e-3, Y: 5.4, YErr: 0.5}, {X: 1e-2, Y: 2.6, YErr: 0.3},
			{X: 3e-2, Y: 1.2, YErr: 0.2}, {X: 0.1, Y: 0.45, YErr: 0.1},
		}}},
	}

	var steps, mean, lo, hi []float64
	for i := 0; i <= 100; i++ {
		s := float64(i) * 2000
		m := -60 + 140*(1-math.Exp(-float64(i)/25))
		w := 25*math.Exp(-float64(i)/40) + 6 + 2*r.Float64()
		steps, mean, lo, hi = append(steps, s), append(mean, m), append(lo, m-w), append(hi, m+w)
	}
	learning := plot.LearningCurve{
		Title:  "MARLIN training (5 seeds)",
		X:      plot.Axis{Label: "training step"},
		Y:      plot.Axis{Label: "mean episode return"},
		Curves: []plot.Band{{Name: "mean ± 95% CI", X: steps, Mean: mean, Low: lo, High: hi}},
	}

	if each != nil {
		for name, f := range map[string]plot.Figure{"dashboard": dashboard, "cdf": cdf, "bars": bars,
			"pantheon": pantheon, "pareto": pareto, "model": model, "learning": learning} {
			each(name, f)
		}
	}

	rep := report.New("cclab example report")
	rep.Paragraph("Every number in this report is synthetic: it was generated by analysis/report/example_test.go to show " +
		"what the plot and report packages produce. It is not a measurement of any scheme.")
	rep.Heading("Single run")
	rep.Pre("go test ./analysis/report -run TestExampleReport -update-example")
	rep.Plot("Single-run dashboard from a fluid AIMD model. The bottleneck halves at 15 s; "+
		"the queue and RTT respond, the window adapts.", dashboard)
	rep.PlotAs("Distribution of per-packet RTT.", "svg", cdf)
	rep.Heading("Comparison across loss levels")
	rep.Table("Mean transfer time (s) of a 5 MB file, mean ± 95% CI over 20 runs",
		append([]string{"loss rate"}, schemes...), transferRows(losses, transfer))
	rep.PlotAs("Mean transfer time per loss level. Hatching tells schemes apart in greyscale; "+
		"n/a marks a combination that was not run.", "svg", bars)
	rep.PlotAs("Pantheon-style summary. The delay axis is reversed, so better schemes sit up and to the right.", "svg", pantheon)
	rep.Heading("Tuning, models and learning")
	rep.PlotAs("Pareto front of a parameter search with the default parameters marked.", "svg", pareto)
	rep.PlotAs("Analytical model against simulation; both axes logarithmic.", "svg", model)
	rep.PlotAs("Learning curve: mean return with a shaded 95% confidence band.", "svg", learning)
	if err := rep.WriteFile(filepath.Join(dir, "report.html")); err != nil {
		return err
	}
	return pantheon.Save(filepath.Join(dir, "pantheon.png"))
}

func transferRows(groups []string, vals [][]plot.Estimate) [][]any {
	rows := make([][]any, len(groups))
	for g, name := range groups {
		rows[g] = []any{name}
		for _, e := range vals[g] {
			rows[g] = append(rows[g], report.MeanCI{Mean: e.Mean, CI: e.CI})
		}
	}
	return rows
}

type runTrace struct {
	t, cwnd, rtt, thr, capacity, queue []float64
}

// fluidRun is a deterministic fluid model of one AIMD flow through a
// drop-tail bottleneck whose rate halves at 15 s, sampled every 10 ms.
func fluidRun() runTrace {
	const (
		dt      = 0.01  // s
		mss     = 1.46  // KB
		baseRTT = 0.040 // s
		qmax    = 60.0  // packets
	)
	var tr runTrace
	cwnd := 10.0 // packets
	for i := 0; i <= 3000; i++ {
		t := float64(i) * dt
		capPkts := 10e6 / 8 / 1460 // packets/s
		if t >= 15 {
			capPkts /= 2
		}
		bdp := capPkts * baseRTT
		queue := math.Max(0, cwnd-bdp)
		if queue > qmax {
			cwnd /= 2
			queue = math.Max(0, cwnd-bdp)
		}
		rtt := baseRTT + queue/capPkts
		rate := math.Min(cwnd/rtt, capPkts)
		tr.t = append(tr.t, t)
		tr.cwnd = append(tr.cwnd, cwnd*mss)
		tr.rtt = append(tr.rtt, rtt*1000)
		tr.thr = append(tr.thr, rate*1460*8/1e6)
		tr.capacity = append(tr.capacity, capPkts*1460*8/1e6)
		tr.queue = append(tr.queue, queue)
		cwnd += dt / rtt // one packet per RTT
	}
	return tr
}
