package plot

import (
	"fmt"

	"gonum.org/v1/plot/plotter"
)

// Band is a mean curve with a shaded band from Low to High around it, e.g.
// mean episode return over seeds with a 95% CI or 10th–90th percentile
// band. Low and High are absolute values, not offsets; leave both nil for
// no band.
type Band struct {
	Name               string
	X, Mean, Low, High []float64
}

// LearningCurve plots one or more Bands: return (or loss) against training
// step.
type LearningCurve struct {
	Title  string
	X, Y   Axis
	Curves []Band
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f LearningCurve) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f LearningCurve) Render(format string) ([]byte, error) { return render(f, format) }

func (b Band) check() error {
	n := len(b.X)
	if len(b.Mean) != n {
		return fmt.Errorf("plot: band %q: %d x values but %d means", b.Name, n, len(b.Mean))
	}
	if (b.Low == nil) != (b.High == nil) {
		return fmt.Errorf("plot: band %q: give both Low and High, or neither", b.Name)
	}
	if b.Low != nil && (len(b.Low) != n || len(b.High) != n) {
		return fmt.Errorf("plot: band %q: %d x values but %d low and %d high values", b.Name, n, len(b.Low), len(b.High))
	}
	for i := range b.Low {
		if b.Low[i] > b.High[i] {
			return fmt.Errorf("plot: band %q: at index %d low %g > high %g", b.Name, i, b.Low[i], b.High[i])
		}
	}
	return nil
}

func (f LearningCurve) build() (*figure, error) {
	for _, b := range f.Curves {
		if err := b.check(); err != nil {
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
	// Bands go first so no band covers another curve's mean line.
	hasBand := make([]bool, len(f.Curves))
	for i, b := range f.Curves {
		if b.Low == nil {
			continue
		}
		fill := withAlpha(seriesColor(i), 0x40)
		for _, seg := range bandSegments(b, f.X.Log, f.Y.Log) {
			lo := thin(seg.lo, thinBuckets, f.X.Log)
			hi := thin(seg.hi, thinBuckets, f.X.Log)
			ring := make(plotter.XYs, 0, len(lo)+len(hi))
			ring = append(ring, hi...)
			for j := len(lo) - 1; j >= 0; j-- {
				ring = append(ring, lo[j])
			}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, fmt.Errorf("plot: band %q: %w", b.Name, err)
			}
			poly.Color = fill
			poly.LineStyle.Width = 0
			pn.plot.Add(poly)
			xe.addAll(ring, true)
			ye.addAll(ring, false)
			hasBand[i] = true
		}
	}
	for i, b := range f.Curves {
		var o lineOpts
		if hasBand[i] {
			o.under = bandThumb{withAlpha(seriesColor(i), 0x40)}
		}
		if err := fig.addLine(pn, i, Series{Name: b.Name, X: b.X, Y: b.Mean}, o, &xe, &ye); err != nil {
			return nil, err
		}
	}
	return fig, pn.finish(xe, ye)
}

type bandSeg struct{ lo, hi plotter.XYs }

// bandSegments splits a band into runs where x, low and high are all
// drawable, so a gap in the data is a gap in the band.
func bandSegments(b Band, xlog, ylog bool) []bandSeg {
	var segs []bandSeg
	var cur bandSeg
	for i := range b.X {
		if drawable(b.X[i], b.Low[i], xlog, ylog) && drawable(b.X[i], b.High[i], xlog, ylog) {
			cur.lo = append(cur.lo, plotter.XY{X: b.X[i], Y: b.Low[i]})
			cur.hi = append(cur.hi, plotter.XY{X: b.X[i], Y: b.High[i]})
			continue
		}
		if len(cur.lo) > 0 {
			segs = append(segs, cur)
			cur = bandSeg{}
		}
	}
	if len(cur.lo) > 0 {
		segs = append(segs, cur)
	}
	return segs
}
