package marlin

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

// WriteDir writes the evaluation into dir: marlin.json, the paper's
// figures 3 and 4 (PNG and SVG) and report.html.
func (r *Report) WriteDir(dir string) error {
	if err := report.WriteJSON(filepath.Join(dir, "marlin.json"), r); err != nil {
		return err
	}
	figs, err := figures(r)
	if err != nil {
		return err
	}
	rep := report.New("MARLIN evaluation")
	rep.Paragraph(fmt.Sprintf("%d transfers of %s per scheme and loss level on the SATCOM-to-UHF scenario; policy %s.", r.Runs, r.Bytes, r.Policy))
	if r.Timeline != "" {
		rep.Paragraph("Each loss level's runs on a timeline of their own, drawn from: " + r.Timeline + " (every scheme on the same draws); the unseen conditions keep theirs.")
	}
	for _, f := range figs {
		if _, err := plot.SaveAll(f.fig, filepath.Join(dir, f.name), "png", "svg"); err != nil {
			return err
		}
		rep.Plot(f.caption, f.fig)
	}
	rep.Table("Every scheme and loss level (mean ± 95% CI)", rowHeader, rowCells(r.Results))
	for _, c := range r.Unseen {
		kind := "Unseen condition"
		if c.HeldOut {
			kind = "Held-out condition"
		}
		rep.Table(kind+": "+c.Name, rowHeader, rowCells(c.Results))
	}
	return rep.WriteFile(filepath.Join(dir, "report.html"))
}

// rowCells is a table of rows for report.html, the text output's cells.
func rowCells(rows []Row) [][]any {
	out := make([][]any, len(rows))
	for i, x := range rows {
		cells := rowStrings(x)
		out[i] = make([]any, len(cells))
		for j, c := range cells {
			out[i][j] = c
		}
	}
	return out
}

type namedFigure struct {
	name, caption string
	fig           plot.Figure
}

// figures draws the paper's figures 3 (transfer time and RTI per
// loss level) and 4 (retransmissions at the highest loss).
func figures(r *Report) ([]namedFigure, error) {
	var losses []float64
	schemes := []Scheme{}
	seen := map[Scheme]bool{}
	for _, x := range r.Results {
		if !seen[x.Scheme] {
			seen[x.Scheme] = true
			schemes = append(schemes, x.Scheme)
		}
		found := false
		for _, l := range losses {
			found = found || l == x.Loss
		}
		if !found {
			losses = append(losses, x.Loss)
		}
	}
	get := func(s Scheme, l float64) (Row, bool) {
		for _, x := range r.Results {
			if x.Scheme == s && x.Loss == l {
				return x, true
			}
		}
		return Row{}, false
	}
	groups := make([]string, len(losses))
	for i, l := range losses {
		groups[i] = fmt.Sprintf("%.0f%% UHF loss", 100*l)
	}
	cats := make([]string, len(schemes))
	for i, s := range schemes {
		cats[i] = string(s)
	}
	bars := func(v func(Row) plot.Estimate) [][]plot.Estimate {
		out := make([][]plot.Estimate, len(losses))
		for i, l := range losses {
			out[i] = make([]plot.Estimate, len(schemes))
			for j, s := range schemes {
				if x, ok := get(s, l); ok {
					out[i][j] = v(x)
				} else {
					out[i][j] = plot.Estimate{Mean: math.NaN()}
				}
			}
		}
		return out
	}
	tt := plot.Bars{Title: "Mean transfer time of 600 KB (95% CI)", Y: plot.Axis{Label: "transfer time (s)", IncludeZero: true},
		Groups: groups, Categories: cats, Values: bars(func(x Row) plot.Estimate { return plot.Estimate{Mean: x.TransferTime, CI: x.TransferTimeCI} })}
	rti := plot.Bars{Title: "RTT Transition Impact (95% CI; 0 is flawless)", Y: plot.Axis{Label: "RTI", IncludeZero: true},
		Groups: groups, Categories: cats, Values: bars(func(x Row) plot.Estimate { return plot.Estimate{Mean: x.RTI, CI: x.RTICI} })}
	hi := losses[len(losses)-1]
	var rcats []string
	var rvals []plot.Estimate
	for _, s := range schemes {
		if x, ok := get(s, hi); ok {
			rcats = append(rcats, string(s))
			rvals = append(rvals, plot.Estimate{Mean: x.Retrans, CI: x.RetransCI})
		}
	}
	rx := plot.Bars{Title: fmt.Sprintf("Retransmissions per transfer at %.0f%% UHF loss (95%% CI)", 100*hi), Y: plot.Axis{Label: "retransmissions", IncludeZero: true},
		Groups: []string{fmt.Sprintf("%.0f%% loss", 100*hi)}, Categories: rcats, Values: [][]plot.Estimate{rvals}}
	return []namedFigure{
		{"fig3_transfer_time", "Figure 3 (left): mean transfer time", tt},
		{"fig3_rti", "Figure 3 (right): RTT Transition Impact", rti},
		{"fig4_retransmissions", "Figure 4: retransmissions", rx},
	}, nil
}
