package plot

import (
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// grid draws light lines at the labelled ticks of the panel's grid tickers.
// These are separate from the axes' tickers so a stacked panel whose x tick
// labels are hidden still gets the same vertical lines as the labelled
// bottom panel.
type grid struct {
	pn *panel
}

// Plot implements gplot.Plotter.
func (g grid) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: gridColor, Width: vg.Points(0.6)}
	if g.pn.gridX != nil {
		for _, t := range g.pn.gridX.Ticks(p.X.Min, p.X.Max) {
			if x := trX(t.Value); !t.IsMinor() && c.ContainsX(x) {
				c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
			}
		}
	}
	if g.pn.gridY != nil {
		for _, t := range g.pn.gridY.Ticks(p.Y.Min, p.Y.Max) {
			if y := trY(t.Value); !t.IsMinor() && c.ContainsY(y) {
				c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
			}
		}
	}
}

// noData says "no data" in the centre of an empty panel, so an empty
// figure is not mistaken for a rendering failure.
type noData struct{}

// Plot implements gplot.Plotter.
func (noData) Plot(c draw.Canvas, _ *gplot.Plot) {
	sty := textStyle(labelSize+1, false)
	sty.Color = mutedColor
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), "no data")
}

// eventLine marks one event: a dashed vertical line and, unless label is
// empty, its label near the top. slot staggers the labels of nearby events
// vertically so they do not print over each other.
type eventLine struct {
	x     float64
	label string
	slot  int
}

// Plot implements gplot.Plotter.
func (e eventLine) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(e.x)
	if !c.ContainsX(x) {
		return
	}
	c.StrokeLine2(draw.LineStyle{Color: mutedColor, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
		x, c.Min.Y, x, c.Max.Y)
	if e.label == "" {
		return
	}
	sty := textStyle(noteSize, false)
	sty.Color = mutedColor
	sty.YAlign = draw.YTop
	off := vg.Points(3)
	if x > c.Center().X {
		sty.XAlign = draw.XRight
		off = -off
	}
	lineH := sty.Height(e.label) + vg.Points(2)
	pt := vg.Point{X: x + off, Y: c.Max.Y - vg.Points(2) - vg.Length(e.slot)*lineH}
	r := sty.Rectangle(e.label)
	bg := vg.Rectangle{Min: pt.Add(r.Min), Max: pt.Add(r.Max)}
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 210})
	c.Fill(bg.Path())
	c.FillText(sty, pt, e.label)
}

// lineThumb is a legend thumbnail showing a line style.
type lineThumb struct{ draw.LineStyle }

// Thumbnail implements gplot.Thumbnailer.
func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.LineStyle, c.Min.X, y, c.Max.X, y)
}

// glyphThumb is a legend thumbnail showing a marker.
type glyphThumb struct{ draw.GlyphStyle }

// Thumbnail implements gplot.Thumbnailer.
func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.GlyphStyle, c.Center()) }

// errThumb is a legend thumbnail showing a vertical error bar.
type errThumb struct{ color color.Color }

// Thumbnail implements gplot.Thumbnailer.
func (t errThumb) Thumbnail(c *draw.Canvas) {
	x := c.Center().X
	h := (c.Max.Y - c.Min.Y) / 2
	drawWhisker(c, errStyle(t.color), x, c.Center().Y-h, c.Center().Y+h, true)
}

// fillThumb is a legend thumbnail showing a bar's fill and hatching.
type fillThumb struct {
	color   color.Color
	pattern int
}

// Thumbnail implements gplot.Thumbnailer.
func (t fillThumb) Thumbnail(c *draw.Canvas) {
	r := vg.Rectangle{
		Min: vg.Point{X: c.Min.X + vg.Points(2), Y: c.Min.Y},
		Max: vg.Point{X: c.Max.X - vg.Points(2), Y: c.Max.Y},
	}
	drawBar(c, r, t.color, t.pattern)
}

// bandThumb is a legend thumbnail showing a shaded band.
type bandThumb struct{ color color.Color }

// Thumbnail implements gplot.Thumbnailer.
func (t bandThumb) Thumbnail(c *draw.Canvas) {
	c.SetColor(t.color)
	c.Fill(c.Rectangle.Path())
}

func errStyle(col color.Color) draw.LineStyle {
	return draw.LineStyle{Color: col, Width: vg.Points(1.1)}
}

// drawWhisker draws an error bar along one direction, capped at the ends
// that are inside the canvas; vertical selects the direction. The bar is
// clipped to the canvas, so an uncapped end tells the reader the interval
// goes on past the axis.
func drawWhisker(c *draw.Canvas, sty draw.LineStyle, at, from, to vg.Length, vertical bool) {
	capHalf := vg.Points(3)
	if vertical {
		c.StrokeLines(sty, c.ClipLinesXY([]vg.Point{{X: at, Y: from}, {X: at, Y: to}})...)
		for _, y := range []vg.Length{from, to} {
			if c.ContainsY(y) {
				c.StrokeLine2(sty, at-capHalf, y, at+capHalf, y)
			}
		}
		return
	}
	c.StrokeLines(sty, c.ClipLinesXY([]vg.Point{{X: from, Y: at}, {X: to, Y: at}})...)
	for _, x := range []vg.Length{from, to} {
		if c.ContainsX(x) {
			c.StrokeLine2(sty, x, at-capHalf, x, at+capHalf)
		}
	}
}

// errorBars draws x and y error bars around points.
type errorBars struct {
	pts   []Point
	color color.Color
	xlog  bool
	ylog  bool
}

// Plot implements gplot.Plotter.
func (e errorBars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := errStyle(e.color)
	// An end a log axis cannot show (≤ 0) is drawn past the axis edge, so
	// it is clipped there and left uncapped.
	beyond := func(a *gplot.Axis, tr func(float64) vg.Length, lo float64, ok bool) vg.Length {
		if ok {
			return tr(lo)
		}
		edge := tr(a.Min)
		return edge + (edge-tr(a.Max))*0.01
	}
	for _, pt := range e.pts {
		if lo, hi, loOK, ok := errSpan(pt.Y, pt.YErr, e.ylog); ok {
			drawWhisker(&c, sty, trX(pt.X), beyond(&p.Y, trY, lo, loOK), trY(hi), true)
		}
		if lo, hi, loOK, ok := errSpan(pt.X, pt.XErr, e.xlog); ok {
			drawWhisker(&c, sty, trY(pt.Y), beyond(&p.X, trX, lo, loOK), trX(hi), false)
		}
	}
}

// errSpan is the interval v±h; ok is false when there is no error bar,
// loOK false when the lower end is ≤ 0 on a log axis and cannot be placed.
func errSpan(v, h float64, log bool) (lo, hi float64, loOK, ok bool) {
	if !isFinite(h) || h <= 0 {
		return 0, 0, false, false
	}
	lo, hi = v-h, v+h
	return lo, hi, !log || lo > 0, true
}

// pointLabels writes a label up and to the right of each point.
type pointLabels struct {
	pts []Point
}

// Plot implements gplot.Plotter.
func (l pointLabels) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(noteSize, false)
	maxW := min(vg.Inch*1.8, (c.Max.X-c.Min.X)/2-vg.Points(10))
	for _, pt := range l.pts {
		if pt.Label == "" {
			continue
		}
		label := ellipsize(sty, pt.Label, maxW)
		at := vg.Point{X: trX(pt.X) + vg.Points(5), Y: trY(pt.Y) + vg.Points(3)}
		if !c.Contains(vg.Point{X: trX(pt.X), Y: trY(pt.Y)}) {
			continue
		}
		s := sty
		// Keep labels inside the data area: flip to the left of points
		// near the right edge, below points near the top.
		if at.X+sty.Width(label) > c.Max.X {
			s.XAlign = draw.XRight
			at.X -= vg.Points(10)
		}
		if at.Y+sty.Height(label) > c.Max.Y {
			s.YAlign = draw.YTop
			at.Y -= vg.Points(6)
		}
		c.FillText(s, at, label)
	}
}

// Estimate is a mean with a symmetric confidence-interval half-width, e.g.
// mean ± 95% CI. A NaN Mean marks a missing result; a zero or NaN CI draws
// no error bar.
type Estimate struct {
	Mean, CI float64
}

// groupedBars draws values[g][k] as bar k of group g, centred on x = g.
type groupedBars struct {
	values [][]Estimate
	nCat   int
	width  float64 // width of a whole group in x units
	// clip stops error bars at zero (a non-negative quantity).
	clip bool
}

// lowEnd is the lower end of e's error bar, not below zero when clip.
func lowEnd(e Estimate, clip bool) float64 {
	if clip {
		return math.Max(0, e.Mean-e.CI)
	}
	return e.Mean - e.CI
}

// Plot implements gplot.Plotter.
func (b groupedBars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	base := math.Min(math.Max(0, p.Y.Min), p.Y.Max)
	slot := b.width / float64(b.nCat)
	for g, row := range b.values {
		for k, e := range row {
			x0 := float64(g) - b.width/2 + float64(k)*slot
			left, right := trX(x0)+vg.Points(0.6), trX(x0+slot)-vg.Points(0.6)
			y0 := trY(base)
			if !isFinite(e.Mean) {
				sty := textStyle(noteSize-1, false)
				sty.Color = mutedColor
				sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
				c.FillText(sty, vg.Point{X: (left + right) / 2, Y: y0 + vg.Points(2)}, "n/a")
				continue
			}
			y1 := trY(math.Min(math.Max(e.Mean, p.Y.Min), p.Y.Max))
			r := vg.Rectangle{Min: vg.Point{X: left, Y: min(y0, y1)}, Max: vg.Point{X: right, Y: max(y0, y1)}}
			drawBar(&c, r, seriesColor(k), k)
			if isFinite(e.CI) && e.CI > 0 {
				drawWhisker(&c, errStyle(color.Black), (left+right)/2, trY(lowEnd(e, b.clip)), trY(e.Mean+e.CI), true)
			}
		}
	}
}

// hatchPatterns is how many distinct bar hatchings exist; with the fill
// colour they keep categories apart in greyscale.
const hatchPatterns = 7

// drawBar fills r with col, hatches it with pattern and outlines it.
func drawBar(c *draw.Canvas, r vg.Rectangle, col color.Color, pattern int) {
	if r.Max.X <= r.Min.X || r.Max.Y < r.Min.Y {
		return
	}
	c.SetColor(col)
	c.Fill(r.Path())
	hatch(c, r, pattern%hatchPatterns)
	c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}, []vg.Point{
		r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}, r.Min,
	})
}

// hatch draws pattern inside r: 0 plain, 1 "/", 2 "\", 3 horizontal,
// 4 vertical, 5 crossed diagonals, 6 square grid.
func hatch(c *draw.Canvas, r vg.Rectangle, pattern int) {
	sty := draw.LineStyle{Color: color.NRGBA{A: 140}, Width: vg.Points(0.6)}
	const gap = 4.5 // points between hatch lines
	w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	var dirs []vg.Point
	switch pattern {
	case 1:
		dirs = []vg.Point{{X: 1, Y: 1}}
	case 2:
		dirs = []vg.Point{{X: 1, Y: -1}}
	case 3:
		dirs = []vg.Point{{X: 1, Y: 0}}
	case 4:
		dirs = []vg.Point{{X: 0, Y: 1}}
	case 5:
		dirs = []vg.Point{{X: 1, Y: 1}, {X: 1, Y: -1}}
	case 6:
		dirs = []vg.Point{{X: 1, Y: 0}, {X: 0, Y: 1}}
	}
	span := w + h
	// All lines go into one path: one SVG element per bar instead of one
	// per line keeps SVG files small.
	var path vg.Path
	for _, d := range dirs {
		// Lines are d-directed through points spaced along the normal,
		// long enough to cross r, then clipped to it.
		n := vg.Point{X: -d.Y, Y: d.X}
		norm := vg.Length(math.Hypot(float64(n.X), float64(n.Y)))
		n = vg.Point{X: n.X / norm, Y: n.Y / norm}
		center := vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}
		for off := -span; off <= span; off += vg.Points(gap) {
			o := center.Add(n.Scale(off))
			if a, b, ok := clipSegment(o.Add(d.Scale(-span)), o.Add(d.Scale(span)), r); ok {
				path.Move(a)
				path.Line(b)
			}
		}
	}
	if len(path) > 0 {
		c.SetLineStyle(sty)
		c.Stroke(path)
	}
}

// clipSegment clips segment ab to rectangle r (Liang–Barsky).
func clipSegment(a, b vg.Point, r vg.Rectangle) (vg.Point, vg.Point, bool) {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	edges := [4][2]float64{
		{-dx, float64(a.X - r.Min.X)},
		{dx, float64(r.Max.X - a.X)},
		{-dy, float64(a.Y - r.Min.Y)},
		{dy, float64(r.Max.Y - a.Y)},
	}
	for _, e := range edges {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return a, b, false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = math.Max(t0, t)
		} else {
			t1 = math.Min(t1, t)
		}
		if t0 > t1 {
			return a, b, false
		}
	}
	at := func(t float64) vg.Point {
		return vg.Point{X: a.X + vg.Length(t*dx), Y: a.Y + vg.Length(t*dy)}
	}
	return at(t0), at(t1), true
}
