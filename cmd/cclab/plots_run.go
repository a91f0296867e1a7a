package main

import (
	"fmt"
	"path/filepath"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/analysis/plot"
)

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
	var events []plot.Event
	for _, seg := range n.Segments[1:] {
		events = append(events, plot.Event{X: seg.Start.Seconds(), Label: fmt.Sprintf("link change at %.3g s", seg.Start.Seconds())})
	}
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
		return fmt.Errorf("--out: plotting: %w", err)
	}
	return nil
}
