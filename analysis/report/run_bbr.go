package report

import (
	"encoding/csv"
	"fmt"
	"path/filepath"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment/network"
)

// writeBBROutputs writes the BBR flows' model estimates of a run with time
// series: bbr.csv (t_s, flow, btlbw_mbps, rtprop_ms, rtt_ms,
// throughput_mbps) and bbr_estimates.png/svg, RTprop against the measured
// RTT and BtlBw against the throughput (the data-centre paper's Figure 2).
// Runs without BBR flows write nothing.
func writeBBROutputs(dir string, n *network.Network) error {
	s := n.Series
	var idx []int
	for i := range n.Flows {
		if len(s.Flows[i].BtlBwMbps) > 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	err := WriteCSV(filepath.Join(dir, "bbr.csv"), []string{"t_s", "flow", "btlbw_mbps", "rtprop_ms", "rtt_ms", "throughput_mbps"}, func(w *csv.Writer) error {
		for _, i := range idx {
			f, fs := n.Flows[i], s.Flows[i]
			for k := range fs.BtlBwMbps {
				t := s.T[fs.Offset+k]
				if t < f.Start || t > f.Stop {
					continue
				}
				if err := w.Write([]string{clock.FormatSeconds(t), f.Name, Ftoa(fs.BtlBwMbps[k]), Ftoa(fs.RTpropMs[k]), Ftoa(fs.RTTms[k]), Ftoa(fs.Mbps[k])}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var rtt, bw []plot.Series
	for n2, i := range idx {
		if n2 == maxPlottedFlows {
			break
		}
		f, fs := n.Flows[i], s.Flows[i]
		x := make([]float64, len(fs.BtlBwMbps))
		for k := range x {
			x[k] = s.T[fs.Offset+k].Seconds()
		}
		gap := func(v []float64) []float64 {
			out := make([]float64, len(v))
			for k, y := range v {
				if y == 0 {
					y = nan() // no sample yet
				}
				out[k] = y
			}
			return out
		}
		rtt = append(rtt, plot.Series{Name: f.Name + " RTT", X: x, Y: gap(fs.RTTms)}, plot.Series{Name: f.Name + " RTprop estimate", X: x, Y: gap(fs.RTpropMs)})
		bw = append(bw, plot.Series{Name: f.Name + " throughput", X: x, Y: fs.Mbps}, plot.Series{Name: f.Name + " BtlBw estimate", X: x, Y: fs.BtlBwMbps})
	}
	events := linkChanges(n)
	return PlotBBR(dir, n.Scenario().Name+": BBR's model estimates", rtt, bw, events)
}

// PlotBBR draws bbr_estimates.png/svg in dir: RTT series (measured and
// RTprop) over rate series (throughput and BtlBw), with events marked. The
// simulator's runs and the emulator's kernel BBR (cclab emu --out) draw the
// same figure.
func PlotBBR(dir, title string, rtt, bw []plot.Series, events []plot.Event) error {
	fig := plot.Stacked{
		Title: title,
		X:     plot.Axis{Label: "time (s)"},
		Panels: []plot.Panel{
			{Y: plot.Axis{Label: "RTT (ms)", IncludeZero: true}, Series: rtt},
			{Y: plot.Axis{Label: "rate (Mbit/s)", IncludeZero: true}, Series: bw},
		},
		Events: events,
	}
	if _, err := plot.SaveAll(fig, filepath.Join(dir, "bbr_estimates"), "png", "svg"); err != nil {
		return fmt.Errorf("plotting: %w", err)
	}
	return nil
}
