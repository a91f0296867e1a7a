package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/sweep"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/atomicfile"
)

// SeriesSample is the time-series interval of a run written with
// WriteRunDir when neither the command nor the scenario sets one, and of
// the runs a sweep report re-simulates.
const SeriesSample = 100 * time.Millisecond

// WriteRunDir writes a single run's files into dir: summary.json, the
// scenario as run, flows.csv (one row per flow and sample), link.csv and
// background.csv.
func WriteRunDir(dir string, s *scenario.Scenario, r *experiment.Result, n *network.Network) error {
	if err := WriteJSON(filepath.Join(dir, "summary.json"), r); err != nil {
		return err
	}
	if y, err := s.MarshalFor(dir); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), y, 0o644); err != nil {
			return err
		}
	}
	if n.Series == nil {
		return nil
	}
	if err := writeSeriesCSV(dir, n); err != nil {
		return err
	}
	if err := writeBBROutputs(dir, n); err != nil {
		return err
	}
	return writeRunPlots(dir, r, n)
}

// WriteJSON writes v as indented JSON with a final newline to path,
// atomically, creating path's directory: the shape of every JSON output
// (summary.json, study.json, the papers' evaluations).
func WriteJSON(path string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(js, '\n'))
}

// WriteCSV writes a CSV file with header, the rows coming from rows.
func WriteCSV(path string, header []string, rows func(w *csv.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.Write(header); err != nil {
		f.Close()
		return err
	}
	if err := rows(w); err != nil {
		f.Close()
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Ftoa formats a number for a CSV cell with 8 significant digits.
func Ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

func writeSeriesCSV(dir string, n *network.Network) error {
	s := n.Series
	err := WriteCSV(filepath.Join(dir, "flows.csv"), []string{"t_s", "flow", "cc", "background", "cwnd_bytes", "inflight_bytes", "rtt_ms", "goodput_mbps", "sent_mbps", "carried_mbps"}, func(w *csv.Writer) error {
		for i, f := range n.Flows {
			fs := s.Flows[i]
			for k := range fs.CwndBytes {
				t := s.T[fs.Offset+k]
				if t < f.Start || t > f.Stop {
					continue
				}
				if err := w.Write([]string{clock.FormatSeconds(t), f.Name, f.CC.String(), strconv.FormatBool(f.Background),
					strconv.FormatInt(int64(fs.CwndBytes[k]), 10), strconv.FormatInt(int64(fs.InFlight[k]), 10),
					Ftoa(fs.RTTms[k]), Ftoa(fs.Mbps[k]), Ftoa(fs.SentMbps[k]), Ftoa(fs.CarriedMbps[k])}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = WriteCSV(filepath.Join(dir, "link.csv"), []string{"t_s", "queue_packets", "queue_bytes", "rate_mbps"}, func(w *csv.Writer) error {
		for k, t := range s.T {
			if err := w.Write([]string{clock.FormatSeconds(t), strconv.Itoa(s.QueuePackets[k]), strconv.FormatInt(int64(s.QueueBytes[k]), 10), Ftoa(s.LinkMbps[k])}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(n.Sources) == 0 {
		return err
	}
	return WriteCSV(filepath.Join(dir, "background.csv"), []string{"t_s", "source", "delivered_mbps"}, func(w *csv.Writer) error {
		for i, src := range n.Sources {
			for k, v := range s.SourceMbps[i] {
				if err := w.Write([]string{clock.FormatSeconds(s.T[k]), src.Name, Ftoa(v)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// SummaryMetrics are the columns of a sweep's summary table, printed after
// a sweep and shown in its report.
var SummaryMetrics = []struct{ Metric, Header string }{
	{"goodput_mbps", "goodput Mbit/s"},
	{"fct_s", "FCT s"},
	{"qdelay_p95_ms", "qdelay p95 ms"},
	{"rtt_p95_ms", "RTT p95 ms"},
	{"retransmissions", "retx"},
	{"utilization", "utilisation"},
}

// MeanCIOf is a sweep statistic as a table cell: NaN where undefined.
func MeanCIOf(s sweep.Stat) MeanCI {
	m := MeanCI{Mean: nan(), CI: nan()}
	if s.Mean != nil {
		m.Mean = *s.Mean
	}
	if s.CI95 != nil {
		m.CI = *s.CI95
	}
	return m
}

func nan() float64 { return math.NaN() }

// maxPlottedFlows bounds the series in a single-run dashboard: beyond a
// dozen lines a time-series panel is unreadable, and the CSV has them all.
const maxPlottedFlows = 12

// writeRunPlots draws a single run's dashboard (cwnd, RTT, throughput,
// queue over time) and an RTT CDF next to its CSV files, as PNG and SVG.
func writeRunPlots(dir string, r *experiment.Result, n *network.Network) error {
	s := n.Series
	t := make([]float64, len(s.T))
	for i, x := range s.T {
		t[i] = x.Seconds()
	}
	var cwnd, rtt, thr, good []plot.Series
	plotted := 0
	for i, f := range n.Flows {
		if plotted == maxPlottedFlows {
			break
		}
		fs := s.Flows[i]
		if len(fs.CwndBytes) == 0 {
			continue
		}
		plotted++
		name := f.Name + " (" + f.CC.Name + ")"
		x := t[fs.Offset : fs.Offset+len(fs.CwndBytes)]
		c := make([]float64, len(fs.CwndBytes))
		for k, v := range fs.CwndBytes {
			c[k] = float64(v) / 1000
		}
		rt := make([]float64, len(fs.RTTms))
		for k, v := range fs.RTTms {
			if v == 0 {
				v = nan() // no sample yet: a gap, not a zero RTT
			}
			rt[k] = v
		}
		cwnd = append(cwnd, plot.Series{Name: name, X: x, Y: c})
		rtt = append(rtt, plot.Series{Name: name, X: x, Y: rt})
		thr = append(thr, plot.Series{Name: name, X: x, Y: fs.CarriedMbps})
		good = append(good, plot.Series{Name: name, X: x, Y: fs.Mbps})
	}
	q := make([]float64, len(s.QueuePackets))
	for i, v := range s.QueuePackets {
		q[i] = float64(v)
	}
	events := linkChanges(n)
	title := fmt.Sprintf("%s (seed %d)", r.Scenario, r.Seed)
	if len(n.Flows) > plotted {
		title += fmt.Sprintf(": first %d of %d flows", plotted, len(n.Flows))
	}
	dash := plot.Stacked{
		Title: title,
		X:     plot.Axis{Label: "time (s)"},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "cwnd (KB)", IncludeZero: true}, Series: cwnd},
			{Y: plot.Axis{Label: "RTT (ms)", IncludeZero: true}, Series: rtt},
			{Y: plot.Axis{Label: "carried by the bottleneck (Mbit/s)", IncludeZero: true}, Series: thr},
			{Y: plot.Axis{Label: "in-order goodput (Mbit/s)", IncludeZero: true}, Series: good},
			{Y: plot.Axis{Label: "queue (packets)", IncludeZero: true}, Series: []plot.Series{{Name: "bottleneck", X: t, Y: q}}, Step: true},
		},
		Events: events,
	}
	if _, err := plot.SaveAll(dash, filepath.Join(dir, "timeseries"), "png", "svg"); err != nil {
		return fmt.Errorf("plotting: %w", err)
	}
	return nil
}

// linkChanges marks where the bottleneck's segments begin after the first:
// the link changes the run went through (the emulator's figures mark its
// scenario's schedule instead, cmd/cclab's scheduleEvents, as it has no
// simulated network).
func linkChanges(n *network.Network) []plot.Event {
	var events []plot.Event
	for _, seg := range n.Segments[1:] {
		at := seg.Start.Seconds()
		events = append(events, plot.Event{X: at, Label: fmt.Sprintf("link change at %.3g s", at)})
	}
	return events
}
