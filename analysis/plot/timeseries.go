package plot

import (
	"errors"
	"fmt"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// TimeSeries is a line plot of several named series sharing an x axis:
// cwnd or RTT over time, but equally hypervolume per generation.
type TimeSeries struct {
	Title  string
	X, Y   Axis
	Series []Series
	// Events draws a labelled vertical line at each event's x.
	Events []Event
	// Step draws each series as a staircase holding its value until the
	// next sample, the honest rendering of piecewise-constant values such
	// as cwnd or queue length.
	Step bool
	// Markers marks every point, for short series such as per-generation
	// values.
	Markers bool
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f TimeSeries) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f TimeSeries) Render(format string) ([]byte, error) { return render(f, format) }

func (f TimeSeries) build() (*figure, error) {
	for _, s := range f.Series {
		if err := checkSeries("time", s); err != nil {
			return nil, err
		}
	}
	fig, err := newFigure(f.Size, 7, 4.2)
	if err != nil {
		return nil, err
	}
	fig.setTitle(f.Title, "")
	pn := fig.addPanel(f.X, f.Y)
	var xe, ye extent
	for i, s := range f.Series {
		if err := fig.addLine(pn, i, s, lineOpts{step: f.Step, markers: f.Markers}, &xe, &ye); err != nil {
			return nil, err
		}
	}
	addEvents(pn, f.Events, true, &xe)
	return fig, pn.finish(xe, ye)
}

type lineOpts struct {
	step, markers bool
	// under, if set, is drawn beneath the line in the legend entry (a
	// learning curve's band swatch).
	under gplot.Thumbnailer
}

// addLine draws series s in the style of series number idx.
func (f *figure) addLine(pn *panel, idx int, s Series, o lineOpts, xe, ye *extent) error {
	lsty, gsty := seriesLine(idx), seriesGlyph(idx)
	drawn, marked := 0, false
	for _, seg := range segments(s.X, s.Y, pn.x.Log, pn.y.Log) {
		seg = thin(seg, thinBuckets, pn.x.Log)
		xe.addAll(seg, true)
		ye.addAll(seg, false)
		drawn += len(seg)
		if len(seg) >= 2 {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return fmt.Errorf("plot: series %q: %w", s.Name, err)
			}
			l.LineStyle = lsty
			if o.step {
				l.StepStyle = plotter.PostStep
			}
			pn.plot.Add(l)
		}
		// A lone point between gaps has no line to show it, so it gets a
		// marker whatever the options say.
		if len(seg) == 1 || o.markers {
			sc, err := plotter.NewScatter(seg)
			if err != nil {
				return fmt.Errorf("plot: series %q: %w", s.Name, err)
			}
			sc.GlyphStyle = gsty
			pn.plot.Add(sc)
			marked = true
		}
	}
	pn.drawn += drawn
	var thumbs []gplot.Thumbnailer
	if o.under != nil {
		thumbs = append(thumbs, o.under)
	}
	thumbs = append(thumbs, lineThumb{lsty})
	if marked {
		thumbs = append(thumbs, glyphThumb{gsty})
	}
	f.addLegend(pn, s.Name, drawn, thumbs...)
	return nil
}

// addEvents adds event lines to pn, with labels if withLabels. Events at
// x values the axis cannot show (NaN, or ≤ 0 on a log axis) are skipped.
func addEvents(pn *panel, events []Event, withLabels bool, xe *extent) {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	sty := textStyle(noteSize, false)
	slot := 0
	for _, ev := range evs {
		if !isFinite(ev.X) || (pn.x.Log && ev.X <= 0) {
			continue
		}
		xe.add(ev.X)
		label := ""
		if withLabels {
			label = ellipsize(sty, ev.Label, vg.Inch*2.5)
		}
		pn.plot.Add(eventLine{x: ev.X, label: label, slot: slot % 3})
		slot++
	}
}

// Panel is one panel of a Stacked figure.
type Panel struct {
	// Y labels the panel's quantity with its unit, e.g. "cwnd (KB)".
	Y      Axis
	Series []Series
	// Step draws the panel's series as staircases; see TimeSeries.Step.
	Step bool
}

// Stacked is a column of time-series panels sharing one time axis: the
// single-run dashboard (cwnd, RTT, throughput, queue) in one image. Only the
// bottom panel labels the x axis; all panels show the same x range, grid
// and event lines, and the top panel carries the event labels.
type Stacked struct {
	Title string
	// X is the shared axis, usually Axis{Label: "time (s)"}.
	X      Axis
	Panels []Panel
	Events []Event
	// Size defaults to 7 in wide and 0.9 + 1.75 in per panel high.
	Size Size
}

// Save implements Figure.
func (f Stacked) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f Stacked) Render(format string) ([]byte, error) { return render(f, format) }

func (f Stacked) build() (*figure, error) {
	if len(f.Panels) == 0 {
		return nil, errors.New("plot: stacked figure has no panels")
	}
	for i, p := range f.Panels {
		for _, s := range p.Series {
			if err := checkSeries(fmt.Sprintf("panel %d", i+1), s); err != nil {
				return nil, err
			}
		}
	}
	fig, err := newFigure(f.Size, 7, 0.9+1.75*float64(len(f.Panels)))
	if err != nil {
		return nil, err
	}
	fig.setTitle(f.Title, "")
	var xe extent
	yes := make([]extent, len(f.Panels))
	for i, p := range f.Panels {
		pn := fig.addPanel(f.X, p.Y)
		if i < len(f.Panels)-1 {
			pn.hideX()
		}
		for j, s := range p.Series {
			if err := fig.addLine(pn, j, s, lineOpts{step: p.Step}, &xe, &yes[i]); err != nil {
				return nil, err
			}
		}
		addEvents(pn, f.Events, i == 0, &xe)
	}
	xlo, xhi, err := axisRange(f.X, xe)
	if err != nil {
		return nil, err
	}
	for i, pn := range fig.panels {
		ylo, yhi, err := axisRange(pn.y, yes[i])
		if err != nil {
			return nil, err
		}
		pn.setRanges(xlo, xhi, ylo, yhi)
	}
	return fig, nil
}
