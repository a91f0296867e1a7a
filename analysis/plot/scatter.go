package plot

import (
	"fmt"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Scatter plots named sets of points, each with optional x and y error bars
// and a label per point. Either axis may be reversed or logarithmic.
type Scatter struct {
	Title  string
	X, Y   Axis
	Series []PointSeries
	// Note is a short hint printed under the title, e.g. which direction
	// is better.
	Note string
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f Scatter) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f Scatter) Render(format string) ([]byte, error) { return render(f, format) }

// Pantheon returns the Pantheon-style summary scatter: one series per
// scheme, average throughput (Mbit/s) up the y axis against 95th-percentile
// queueing delay (ms) along an x axis reversed so that better schemes sit
// up and to the right. Give each point's mean and, in XErr/YErr, its
// confidence-interval half-widths over runs.
func Pantheon(title string, schemes []PointSeries) Scatter {
	return Scatter{
		Title:  title,
		X:      Axis{Label: "95th-percentile queueing delay (ms)", Reverse: true, IncludeZero: true},
		Y:      Axis{Label: "average throughput (Mbit/s)", IncludeZero: true},
		Series: schemes,
		Note:   "better: up and to the right",
		Size:   Size{Width: 7, Height: 5},
	}
}

func (f Scatter) build() (*figure, error) {
	fig, err := newFigure(f.Size, 7, 4.2)
	if err != nil {
		return nil, err
	}
	fig.setTitle(f.Title, f.Note)
	pn := fig.addPanel(f.X, f.Y)
	pn.margin = 0.04
	var xe, ye extent
	for i, s := range f.Series {
		if err := fig.addPoints(pn, i, s, &xe, &ye); err != nil {
			return nil, err
		}
	}
	return fig, pn.finish(xe, ye)
}

// addPoints draws a point series as markers of series number idx, with
// error bars in the same colour and labels beside the points.
func (f *figure) addPoints(pn *panel, idx int, s PointSeries, xe, ye *extent) error {
	gsty := seriesGlyph(idx)
	// Larger than on lines: here the marker is the data, and open shapes
	// must stay visible between error-bar caps.
	gsty.Radius = vg.Points(4.5)
	var pts []Point
	var xys plotter.XYs
	hasErr := false
	for _, p := range s.Points {
		if !drawable(p.X, p.Y, pn.x.Log, pn.y.Log) {
			continue
		}
		pts = append(pts, p)
		xys = append(xys, plotter.XY{X: p.X, Y: p.Y})
		xe.add(p.X)
		ye.add(p.Y)
		// A lower end a log axis cannot show does not stretch the axis;
		// the bar runs off its edge instead.
		if lo, hi, loOK, ok := errSpan(p.X, p.XErr, pn.x.Log); ok {
			if loOK {
				xe.add(lo)
			}
			xe.add(hi)
			hasErr = true
		}
		if lo, hi, loOK, ok := errSpan(p.Y, p.YErr, pn.y.Log); ok {
			if loOK {
				ye.add(lo)
			}
			ye.add(hi)
			hasErr = true
		}
	}
	if len(pts) > 0 {
		if hasErr {
			pn.plot.Add(errorBars{pts: pts, color: gsty.Color, xlog: pn.x.Log, ylog: pn.y.Log})
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("plot: series %q: %w", s.Name, err)
		}
		sc.GlyphStyle = gsty
		pn.plot.Add(sc, pointLabels{pts: pts})
	}
	pn.drawn += len(pts)
	thumbs := []gplot.Thumbnailer{glyphThumb{gsty}}
	if hasErr {
		thumbs = append([]gplot.Thumbnailer{errThumb{gsty.Color}}, thumbs...)
	}
	f.addLegend(pn, s.Name, len(pts), thumbs...)
	return nil
}
