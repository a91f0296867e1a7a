package plot

import (
	"cmp"
	"fmt"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Goal says which direction of an objective is better.
type Goal int

// Minimize and Maximize are the two Goals.
const (
	Minimize Goal = iota
	Maximize
)

// XY is a point in objective space.
type XY struct{ X, Y float64 }

// Ref is a labelled reference point, e.g. the default parameters.
type Ref struct {
	Label string
	X, Y  float64
}

// Pareto plots the outcome of a two-objective search: every evaluated point
// faint, the non-dominated ones highlighted and joined in x order, and
// reference points marked and labelled (e.g. "default alpha=2, beta=4").
type Pareto struct {
	Title string
	X, Y  Axis
	// XGoal and YGoal give the better direction of each objective; the
	// zero value minimises.
	XGoal, YGoal Goal
	// Points are all evaluated points; non-finite ones are skipped.
	Points []XY
	// Front, if non-nil, lists the indices into Points to highlight, for
	// searches with more objectives than the two shown. When nil the
	// front is computed from Points with ParetoFront.
	Front []int
	Refs  []Ref
	// Size defaults to 7×4.6 in.
	Size Size
}

// Save implements Figure.
func (f Pareto) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f Pareto) Render(format string) ([]byte, error) { return render(f, format) }

// better reports whether a is strictly better than b under goal g.
func better(a, b float64, g Goal) bool {
	if g == Maximize {
		return a > b
	}
	return a < b
}

// ParetoFront returns the indices of the non-dominated points, sorted by
// increasing X. A point is dominated when another is at least as good in
// both objectives and strictly better in one; identical points do not
// dominate each other, so duplicates on the front are all kept. Points with
// a NaN or infinite coordinate are ignored.
func ParetoFront(points []XY, xGoal, yGoal Goal) []int {
	idx := make([]int, 0, len(points))
	for i, p := range points {
		if isFinite(p.X) && isFinite(p.Y) {
			idx = append(idx, i)
		}
	}
	// Best x first, ties broken by best y: a point is then dominated
	// exactly when an earlier point has a better y, or the same y at a
	// better x.
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := points[a], points[b]
		switch {
		case better(pa.X, pb.X, xGoal):
			return -1
		case better(pb.X, pa.X, xGoal):
			return 1
		case better(pa.Y, pb.Y, yGoal):
			return -1
		case better(pb.Y, pa.Y, yGoal):
			return 1
		}
		return 0
	})
	var front []int
	var best XY
	for _, i := range idx {
		p := points[i]
		switch {
		case len(front) == 0, better(p.Y, best.Y, yGoal):
			best = p
			front = append(front, i)
		case p == best:
			front = append(front, i)
		}
	}
	slices.SortStableFunc(front, func(a, b int) int { return cmp.Compare(points[a].X, points[b].X) })
	return front
}

func (f Pareto) build() (*figure, error) {
	for _, i := range f.Front {
		if i < 0 || i >= len(f.Points) {
			return nil, fmt.Errorf("plot: Pareto %q: front index %d out of range [0, %d)", f.Title, i, len(f.Points))
		}
	}
	fig, err := newFigure(f.Size, 7, 4.6)
	if err != nil {
		return nil, err
	}
	fig.setTitle(f.Title, "")
	pn := fig.addPanel(f.X, f.Y)
	pn.margin = 0.04
	var xe, ye extent
	ok := func(p XY) bool { return drawable(p.X, p.Y, f.X.Log, f.Y.Log) }

	var all plotter.XYs
	for _, p := range f.Points {
		if ok(p) {
			all = append(all, plotter.XY{X: p.X, Y: p.Y})
		}
	}
	xe.addAll(all, true)
	ye.addAll(all, false)
	faint := draw.GlyphStyle{Color: faintColor, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	if len(all) > 0 {
		sc, err := plotter.NewScatter(all)
		if err != nil {
			return nil, fmt.Errorf("plot: Pareto %q: %w", f.Title, err)
		}
		sc.GlyphStyle = faint
		pn.plot.Add(sc)
	}
	pn.drawn += len(all)
	fig.addLegend(pn, fmt.Sprintf("all evaluated (n=%d)", len(all)), len(all), glyphThumb{faint})

	frontIdx := f.Front
	if frontIdx == nil {
		frontIdx = ParetoFront(f.Points, f.XGoal, f.YGoal)
	}
	var front plotter.XYs
	for _, i := range frontIdx {
		if p := f.Points[i]; ok(p) {
			front = append(front, plotter.XY{X: p.X, Y: p.Y})
		}
	}
	slices.SortStableFunc(front, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	lsty, gsty := seriesLine(0), seriesGlyph(0)
	if len(front) >= 2 {
		l, err := plotter.NewLine(front)
		if err != nil {
			return nil, fmt.Errorf("plot: Pareto %q: %w", f.Title, err)
		}
		l.LineStyle = lsty
		pn.plot.Add(l)
	}
	if len(front) > 0 {
		sc, err := plotter.NewScatter(front)
		if err != nil {
			return nil, fmt.Errorf("plot: Pareto %q: %w", f.Title, err)
		}
		sc.GlyphStyle = gsty
		pn.plot.Add(sc)
	}
	fig.addLegend(pn, fmt.Sprintf("non-dominated (n=%d)", len(front)), len(front), lineThumb{lsty}, glyphThumb{gsty})

	for i, r := range f.Refs {
		s := PointSeries{Name: r.Label, Points: []Point{{X: r.X, Y: r.Y, Label: r.Label}}}
		if err := fig.addRef(pn, i, s, &xe, &ye); err != nil {
			return nil, err
		}
	}
	return fig, pn.finish(xe, ye)
}

// refShapes are filled shapes unlike the front's circles, so reference
// points stand out.
var refShapes = []draw.GlyphDrawer{draw.PyramidGlyph{}, draw.BoxGlyph{}}

// addRef draws reference point number i in a style no front point has.
func (f *figure) addRef(pn *panel, i int, s PointSeries, xe, ye *extent) error {
	sty := draw.GlyphStyle{Color: seriesColor(i + 1), Radius: vg.Points(5.5), Shape: refShapes[i%len(refShapes)]}
	p := s.Points[0]
	drawn := 0
	if drawable(p.X, p.Y, pn.x.Log, pn.y.Log) {
		sc, err := plotter.NewScatter(plotter.XYs{{X: p.X, Y: p.Y}})
		if err != nil {
			return fmt.Errorf("plot: reference %q: %w", s.Name, err)
		}
		sc.GlyphStyle = sty
		// The label comes from the legend; a second copy beside the marker
		// helps only when it is short.
		pts := s.Points
		if textStyle(noteSize, false).Width(p.Label) > vg.Inch*1.5 {
			pts = nil
		}
		pn.plot.Add(sc, pointLabels{pts: pts})
		xe.add(p.X)
		ye.add(p.Y)
		drawn = 1
	}
	pn.drawn += drawn
	f.addLegend(pn, s.Name, drawn, gplot.Thumbnailer(glyphThumb{sty}))
	return nil
}
