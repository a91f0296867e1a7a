package plot

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
)

// cdfPoints bounds the steps drawn per CDF; beyond it, evenly spaced ranks
// are kept, which moves the curve by at most 1/cdfPoints vertically.
const cdfPoints = 2000

// Sample is a named set of observations for a CDF.
type Sample struct {
	Name   string
	Values []float64
}

// CDF plots the empirical cumulative distribution of one or more samples.
// The y axis is the fraction of observations ≤ x, from 0 to 1. Legend
// entries give each sample's size after NaN/Inf (and, on a log axis,
// non-positive) values are dropped.
type CDF struct {
	Title string
	// X labels the observed quantity with its unit, e.g. "RTT (ms)".
	X       Axis
	Samples []Sample
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f CDF) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f CDF) Render(format string) ([]byte, error) { return render(f, format) }

func (f CDF) build() (*figure, error) {
	fig, err := newFigure(f.Size, 7, 4.2)
	if err != nil {
		return nil, err
	}
	yAxis := Axis{Label: "fraction of observations ≤ x", Min: 0, Max: 1}
	fig.setTitle(f.Title, "")
	pn := fig.addPanel(f.X, yAxis)
	var xe, ye extent
	for i, s := range f.Samples {
		vals := make([]float64, 0, len(s.Values))
		for _, v := range s.Values {
			if drawable(v, 1, f.X.Log, false) {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		pts := ecdf(vals)
		name := s.Name
		if name != "" {
			name = fmt.Sprintf("%s (n=%d)", name, len(vals))
		}
		// The ECDF is already thinned by rank; drawing it through addLine
		// keeps styling and legend handling in one place.
		xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
		for j, p := range pts {
			xs[j], ys[j] = p.X, p.Y
		}
		if err := fig.addLine(pn, i, Series{Name: name, X: xs, Y: ys}, lineOpts{step: true}, &xe, &ye); err != nil {
			return nil, err
		}
	}
	return fig, pn.finish(xe, ye)
}

// ecdf returns the staircase vertices of the empirical CDF of sorted vals:
// it starts at (min, 0) and rises to (v, rank/n) at each kept value.
func ecdf(vals []float64) plotter.XYs {
	n := len(vals)
	if n == 0 {
		return nil
	}
	pts := plotter.XYs{{X: vals[0], Y: 0}}
	if n <= cdfPoints {
		for i, v := range vals {
			pts = append(pts, plotter.XY{X: v, Y: float64(i+1) / float64(n)})
		}
		return pts
	}
	prev := -1
	for j := 0; j < cdfPoints; j++ {
		i := int(math.Round(float64(j) * float64(n-1) / float64(cdfPoints-1)))
		if i == prev {
			continue
		}
		pts = append(pts, plotter.XY{X: vals[i], Y: float64(i+1) / float64(n)})
		prev = i
	}
	return pts
}
