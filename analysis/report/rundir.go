package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
)

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

// flowSeries is one measured flow's time series read from flows.csv.
type flowSeries struct {
	name          string
	t, cw, rtt, m []float64
}

// runDirReport builds the report of a cclab run --out directory from its
// summary.json and time-series CSV files.
func runDirReport(dir string) (*Report, []string, error) {
	path := filepath.Join(dir, "summary.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRunSummary(dir, path, data); err != nil {
		return nil, nil, err
	}
	var res experiment.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, nil, fmt.Errorf("%s: not a run summary: %v", path, err)
	}
	r := New(fmt.Sprintf("Run of %s (seed %d)", res.Scenario, res.Seed))
	fsv := &figureSaver{dir: dir, r: r}
	runTables(r, &res, dir)
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
	flows, extra, err := readFlowSeries(ft)
	if err != nil {
		return nil, nil, err
	}
	if err := runFigures(fsv, dir, &res, flows, extra, lt); err != nil {
		return nil, nil, err
	}
	return r, fsv.saved, r.Err()
}

// runSummaryKeys are fields experiment.Result always writes (none is
// omitempty, and all date from its first version): other commands also
// write a summary.json, and decoding theirs as a run's yields an empty
// report that would overwrite the report they wrote themselves.
var runSummaryKeys = []string{"scenario", "seed", "sim_seconds", "flows", "links"}

// checkRunSummary refuses a summary.json that another command wrote,
// naming that command when it is recognisable.
func checkRunSummary(dir, path string, data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("%s: not a run summary: %v", path, err)
	}
	_, pareto := fields["pareto"]
	_, evaluations := fields["evaluations"]
	if pareto && evaluations {
		return fmt.Errorf("%s holds a cclab tune output (%s is a tune's summary, with a Pareto set and evaluations); its %s is tune's own and is left as it is; cclab report reads cclab run --out and cclab sweep --out directories",
			dir, path, File)
	}
	var missing []string
	for _, k := range runSummaryKeys {
		if _, ok := fields[k]; !ok {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: not the summary of a cclab run (no %s field), so %s is not a cclab run --out directory; cclab report reads cclab run --out and cclab sweep --out directories",
			path, strings.Join(missing, ", "), dir)
	}
	return nil
}

// runTables lists the run's flows, background sources and links.
func runTables(r *Report, res *experiment.Result, dir string) {
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
	r.Table(fmt.Sprintf("Links. Jain's fairness index %s.", FormatFloat(jainOrNaN(res.Jain))), []string{"link", "utilisation", "queue drops", "random losses", "background share"}, rows)
	if y, err := os.ReadFile(filepath.Join(dir, "scenario.yaml")); err == nil {
		r.Subheading("Scenario as run")
		r.Pre(string(y))
	}

}

// readFlowSeries reads the measured flows' series (the first
// maxPlottedFlows of them; extra counts the others).
func readFlowSeries(ft *csvTable) (flows []*flowSeries, extra int, err error) {
	index := map[string]*flowSeries{}
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
				return nil, 0, err
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
	return flows, extra, nil
}

// readLinkSeries reads link.csv: times, queue lengths and link rates, and
// whether any rate is known.
func readLinkSeries(lt *csvTable) (lT, lQ, lR []float64, rateKnown bool, err error) {
	lT = make([]float64, len(lt.rows))
	lQ = make([]float64, len(lt.rows))
	lR = make([]float64, len(lt.rows))
	for i := range lt.rows {
		if lT[i], err = lt.float(i, "t_s"); err != nil {
			return nil, nil, nil, false, err
		}
		if lQ[i], err = lt.float(i, "queue_packets"); err != nil {
			return nil, nil, nil, false, err
		}
		if lR[i], err = lt.float(i, "rate_mbps"); err != nil {
			return nil, nil, nil, false, err
		}
		rateKnown = rateKnown || lR[i] > 0
	}
	return lT, lQ, lR, rateKnown, nil
}

// runFigures draws the dashboard, the background traffic and the
// distributions.
func runFigures(fsv *figureSaver, dir string, res *experiment.Result, flows []*flowSeries, extra int, lt *csvTable) error {
	r := fsv.r
	lT, lQ, lR, rateKnown, err := readLinkSeries(lt)
	if err != nil {
		return err
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
		return err
	}
	if err := backgroundFigure(fsv, dir, res); err != nil {
		return err
	}
	r.Heading("Distributions")
	if err := fsv.add("RTT samples (the latest RTT at each sampling instant) per flow.", "cdf-rtt", plot.SVG,
		plot.CDF{Title: res.Scenario + ": RTT, sampled every " + interval, X: plot.Axis{Label: "RTT (ms)"}, Samples: rttS}); err != nil {
		return err
	}
	return fsv.add("Throughput per sampling interval per flow.", "cdf-throughput", plot.SVG,
		plot.CDF{Title: res.Scenario + ": in-order goodput per " + interval + " interval", X: plot.Axis{Label: "in-order goodput (Mbit/s)"}, Samples: thrS})
}

// backgroundFigure draws the background sources' delivered rate, when the
// run recorded background.csv.
func backgroundFigure(fsv *figureSaver, dir string, res *experiment.Result) error {
	if bt, err := readCSVTable(filepath.Join(dir, "background.csv"), "t_s", "source", "delivered_mbps"); err == nil {
		var bg []plot.Series
		bidx := map[string]int{}
		for i := range bt.rows {
			t, err := bt.float(i, "t_s")
			if err != nil {
				return err
			}
			v, err := bt.float(i, "delivered_mbps")
			if err != nil {
				return err
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
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
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

// jainOrNaN is Jain's index, or NaN (printed as a dash) when it is
// undefined because no measured flow delivered a byte.
func jainOrNaN(j *float64) float64 {
	if j == nil {
		return math.NaN()
	}
	return *j
}
