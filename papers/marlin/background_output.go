package marlin

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

// Save writes background.json and the paper's Figure 2 (background.png,
// background.svg) to dir, creating it.
func (p *Pattern) Save(dir string) error {
	if err := report.WriteJSON(filepath.Join(dir, "background.json"), p); err != nil {
		return err
	}
	return p.saveFigure(filepath.Join(dir, "background"))
}

// WriteText writes the mean of each background component as `cclab marlin
// background` prints it; interval and duration are what p was sampled
// with.
func (p *Pattern) WriteText(w io.Writer, interval, duration time.Duration) {
	fmt.Fprintf(w, "Background traffic of %s (mean delivered over the bottleneck; %v samples, %v)\n", p.Scenario, interval, duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "component\tkind\tmean Mbit/s\t")
	for _, c := range p.Components {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t\n", c.Name, c.Kind, c.MeanMbps)
	}
	tw.Flush()
}

// saveFigure draws the paper's Figure 2: one panel per link period (before
// and after the first change), one period of 8 s each.
func (p *Pattern) saveFigure(stem string) error {
	end := p.T[len(p.T)-1]
	switchAt := end
	if len(p.Changes) > 0 {
		switchAt = p.Changes[0]
	}
	windows := [][2]float64{{0, min(8, switchAt)}}
	if switchAt < end {
		windows = append(windows, [2]float64{switchAt, min(switchAt+8, end)})
	}
	labels := []string{"(a) SATCOM link", "(b) UHF link"}
	var panels []plot.Panel
	for wi, win := range windows {
		t, m := p.Window(win[0], win[1])
		var series []plot.Series
		for k, c := range p.Components {
			x := make([]float64, len(t))
			for i := range t {
				x[i] = t[i] - win[0]
			}
			series = append(series, plot.Series{Name: c.Name, X: x, Y: m[k]})
		}
		panels = append(panels, plot.Panel{Y: plot.Axis{Label: labels[wi] + " (Mbit/s)", IncludeZero: true}, Step: true, Series: series})
	}
	fig := plot.Stacked{Title: "Background traffic patterns of " + p.Scenario + " (UDP: emitted; TCP: delivered)", X: plot.Axis{Label: "time within the period (s)"}, Panels: panels}
	_, err := plot.SaveAll(fig, stem, "png", "svg")
	return err
}
