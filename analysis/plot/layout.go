package plot

import (
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Layout constants, in points.
const (
	outerMargin   = 8
	legendGap     = 10
	thumbWidth    = 26
	legendTextGap = 5
	labelPadding  = 4
	titlePadding  = 6
	panelGap      = 8
)

// figure is a laid-out figure: one or more panels stacked top to bottom,
// each with its legend in a strip to the right of the panels.
type figure struct {
	title, subtitle string
	panels          []*panel
	width, height   vg.Length
	dpi             int
}

// panel is one set of axes plus the legend entries that describe it.
type panel struct {
	plot   *gplot.Plot
	legend []legendItem
	drawn  int // data points drawn, to say "no data" when there are none
	x, y   Axis
	// xLabel and yLabel are the axis labels as given (with the reversed
	// note); draw fits them to the room they get.
	xLabel, yLabel string
	// margin widens fitted (not fixed) axis ranges by this fraction of
	// their span on each side, so markers and error bars at the extremes
	// are not cut by the axes.
	margin float64
	// gridX and gridY are the tickers the grid follows; nil means no grid
	// lines in that direction.
	gridX, gridY gplot.Ticker
}

type legendItem struct {
	name   string
	thumbs []gplot.Thumbnailer
}

func newFigure(s Size, defW, defH float64) (*figure, error) {
	w, h, dpi, err := resolveSize(s, defW, defH)
	if err != nil {
		return nil, err
	}
	return &figure{width: w, height: h, dpi: dpi}, nil
}

// inner is the drawable width inside the outer margins.
func (f *figure) inner() vg.Length { return f.width - 2*vg.Points(outerMargin) }

// maxLegendText bounds legend text so a long name cannot squeeze the data
// area to nothing.
func (f *figure) maxLegendText() vg.Length { return f.inner() * 0.26 }

// setTitle sets the figure title and an optional smaller subtitle (a
// hint such as which direction is better). Like axis labels, they are
// fitted to the space they get when the figure is drawn.
func (f *figure) setTitle(title, subtitle string) {
	f.title, f.subtitle = title, subtitle
}

func titleStyle() text.Style {
	sty := textStyle(titleSize, true)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	return sty
}

func subtitleStyle() text.Style {
	sty := textStyle(noteSize+0.5, false)
	sty.Color = mutedColor
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	return sty
}

// addPanel appends a panel with styled axes and a grid.
func (f *figure) addPanel(x, y Axis) *panel {
	p := gplot.New()
	p.BackgroundColor = nil // the figure paints one background for all panels
	styleAxis(&p.X, x)
	styleAxis(&p.Y, y)
	pn := &panel{plot: p, x: x, y: y, gridX: tickerFor(x, false), gridY: tickerFor(y, false),
		xLabel: axisLabel(x), yLabel: axisLabel(y)}
	p.Add(grid{pn})
	f.panels = append(f.panels, pn)
	return pn
}

// axisLabel is the label as drawn; a reversed axis says so.
func axisLabel(a Axis) string {
	if a.Reverse && a.Label != "" {
		return a.Label + " — axis reversed"
	}
	if a.Reverse {
		return "axis reversed"
	}
	return a.Label
}

func tickerFor(a Axis, hideLabels bool) gplot.Ticker {
	if a.Log {
		return logTicks{hideLabels: hideLabels}
	}
	return linearTicks{hideLabels: hideLabels}
}

func labelStyle() text.Style {
	sty := textStyle(labelSize, false)
	sty.XAlign = draw.XCenter
	return sty
}

// styleAxis sets up a gonum axis. Axis labels are left to figure.draw:
// gonum reserves space for a y label around the arithmetic midpoint of the
// range, which on a log axis sits near the top and shrinks the plot.
func styleAxis(ax *gplot.Axis, a Axis) {
	ax.Tick.Label.Font = textStyle(tickSize, false).Font
	ax.Tick.Length = vg.Points(5)
	ax.Padding = vg.Points(4)
	ax.Tick.Marker = tickerFor(a, false)
	var scale gplot.Normalizer = gplot.LinearScale{}
	if a.Log {
		scale = gplot.LogScale{}
	}
	if a.Reverse {
		scale = gplot.InvertedScale{Normalizer: scale}
	}
	ax.Scale = scale
}

// hideX removes the x tick labels, for all but the bottom panel of a
// stack; the tick marks and grid stay aligned with the bottom axis. Only
// the bottom panel's x label is drawn.
func (pn *panel) hideX() {
	pn.plot.X.Tick.Marker = tickerFor(pn.x, true)
}

// addLegend records a legend entry; unnamed series get none. A series with
// nothing drawn keeps its entry, marked, so a missing result is visible.
func (f *figure) addLegend(pn *panel, name string, drawn int, thumbs ...gplot.Thumbnailer) {
	if name == "" {
		return
	}
	sty := textStyle(legendSize, false)
	suffix := ""
	if drawn == 0 {
		suffix = " (no data)"
	}
	name = fitText(sty, name+suffix, f.maxLegendText(), 2)
	pn.legend = append(pn.legend, legendItem{name: name, thumbs: thumbs})
}

// finish sets the axis ranges from the data extents and marks an empty
// panel.
func (pn *panel) finish(xe, ye extent) error {
	xlo, xhi, err := axisRange(pn.x, xe)
	if err != nil {
		return err
	}
	ylo, yhi, err := axisRange(pn.y, ye)
	if err != nil {
		return err
	}
	if pn.margin > 0 && xe.n > 0 {
		xlo, xhi = widen(pn.x, xlo, xhi, pn.margin)
	}
	if pn.margin > 0 && ye.n > 0 {
		ylo, yhi = widen(pn.y, ylo, yhi, pn.margin)
	}
	pn.setRanges(xlo, xhi, ylo, yhi)
	return nil
}

// widen adds frac of the span to each end of a fitted range. A range
// starting at zero keeps its zero, since IncludeZero asked for it.
func widen(a Axis, lo, hi, frac float64) (float64, float64) {
	if a.Min < a.Max {
		return lo, hi
	}
	if a.Log {
		f := math.Pow(hi/lo, frac)
		return lo / f, hi * f
	}
	d := (hi - lo) * frac
	if lo != 0 || !a.IncludeZero {
		lo -= d
	}
	if hi != 0 || !a.IncludeZero {
		hi += d
	}
	return lo, hi
}

func (pn *panel) setRanges(xlo, xhi, ylo, yhi float64) {
	pn.plot.X.Min, pn.plot.X.Max = xlo, xhi
	pn.plot.Y.Min, pn.plot.Y.Max = ylo, yhi
	if pn.drawn == 0 {
		pn.plot.Add(noData{})
	}
}

// legendWidth is the width of the legend strip, zero if no panel has a
// legend.
func (f *figure) legendWidth() vg.Length {
	var w vg.Length
	sty := textStyle(legendSize, false)
	for _, pn := range f.panels {
		for _, it := range pn.legend {
			w = max(w, sty.Width(it.name))
		}
	}
	if w == 0 {
		return 0
	}
	return vg.Points(legendGap+thumbWidth+legendTextGap+2) + w
}

func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, vg.Points(outerMargin), -vg.Points(outerMargin), vg.Points(outerMargin), -vg.Points(outerMargin))
	area := c
	area.Max.X -= f.legendWidth()
	// Titles centre over the axes rather than the whole image, as readers
	// expect; with a wide legend strip the two differ visibly.
	for _, t := range []struct {
		text  string
		sty   text.Style
		lines int
	}{{f.title, titleStyle(), 3}, {f.subtitle, subtitleStyle(), 2}} {
		txt := fitText(t.sty, t.text, area.Max.X-area.Min.X, t.lines)
		if txt == "" {
			continue
		}
		c.FillText(t.sty, vg.Point{X: area.Center().X, Y: c.Max.Y}, txt)
		c.Max.Y -= t.sty.Height(txt) + vg.Points(titlePadding)
	}
	area.Max.Y = c.Max.Y

	// Axis labels are drawn here rather than by gonum, which reserves
	// space for a y label around the arithmetic midpoint of the range; on
	// a log axis that sits near the top and shrinks the plot.
	lsty := labelStyle()
	bottom := f.panels[len(f.panels)-1]
	xLabel := fitText(lsty, bottom.xLabel, (area.Max.X-area.Min.X)*0.85, 2)
	var xLabelH vg.Length
	if xLabel != "" {
		xLabelH = lsty.Height(xLabel) + vg.Points(labelPadding)
	}
	area.Min.Y += xLabelH
	yRoom := ((area.Max.Y-area.Min.Y)/vg.Length(len(f.panels)) - vg.Points(panelGap)) * 0.9
	yLabels := make([]string, len(f.panels))
	var yLabelW vg.Length
	for i, pn := range f.panels {
		yLabels[i] = fitText(lsty, pn.yLabel, yRoom, 2)
		if yLabels[i] != "" {
			yLabelW = max(yLabelW, lsty.Height(yLabels[i])+vg.Points(labelPadding))
		}
	}
	area.Min.X += yLabelW

	var tiles [][]draw.Canvas
	if len(f.panels) == 1 {
		tiles = [][]draw.Canvas{{area}}
	} else {
		rows := make([][]*gplot.Plot, len(f.panels))
		for i, pn := range f.panels {
			rows[i] = []*gplot.Plot{pn.plot}
		}
		tiles = gplot.Align(rows, draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Points(panelGap)}, area)
	}
	for i, pn := range f.panels {
		pn.plot.Draw(tiles[i][0])
		dc := pn.plot.DataCanvas(tiles[i][0])
		if yLabels[i] != "" {
			// Rotated a quarter turn, "top" is the label's left edge.
			sty := lsty
			sty.Rotation = math.Pi / 2
			sty.YAlign = draw.YTop
			y := clampCentre(dc.Center().Y, lsty.Width(yLabels[i]), c.Min.Y, c.Max.Y)
			c.FillText(sty, vg.Point{X: area.Min.X - yLabelW, Y: y}, yLabels[i])
		}
		if pn == bottom && xLabel != "" {
			sty := lsty
			sty.YAlign = draw.YBottom
			x := clampCentre(dc.Center().X, lsty.Width(xLabel), c.Min.X, c.Max.X)
			c.FillText(sty, vg.Point{X: x, Y: c.Min.Y + lsty.FontExtents().Descent}, xLabel)
		}
		if len(pn.legend) == 0 {
			continue
		}
		strip := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: area.Max.X + vg.Points(legendGap), Y: dc.Min.Y},
			Max: vg.Point{X: c.Max.X, Y: dc.Max.Y},
		}}
		drawLegend(strip, pn.legend)
	}
}

// clampCentre moves the centre of a span of length w so the span stays
// within [lo, hi] when it can.
func clampCentre(centre, w, lo, hi vg.Length) vg.Length {
	centre = min(centre, hi-w/2)
	return max(centre, lo+w/2)
}

// drawLegend draws entries top-down in strip, each a thumbnail beside its
// (possibly two-line) text, shrinking the type down to 6 pt when the
// entries would not fit the strip's height.
func drawLegend(strip draw.Canvas, items []legendItem) {
	height := func(sty text.Style) vg.Length {
		var h vg.Length
		for _, it := range items {
			h += sty.Height(it.name) + sty.Height("M")*0.35
		}
		return h
	}
	size := float64(legendSize)
	for size > 6 && height(textStyle(size, false)) > strip.Max.Y-strip.Min.Y {
		size -= 0.5
	}
	sty := textStyle(size, false)
	sty.YAlign = draw.YTop
	lineH := sty.Height("Mg")
	y := strip.Max.Y
	for _, it := range items {
		icon := draw.Canvas{Canvas: strip.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: strip.Min.X, Y: y - lineH},
			Max: vg.Point{X: strip.Min.X + vg.Points(thumbWidth), Y: y},
		}}
		for _, t := range it.thumbs {
			t.Thumbnail(&icon)
		}
		strip.FillText(sty, vg.Point{X: strip.Min.X + vg.Points(thumbWidth+legendTextGap), Y: y}, it.name)
		y -= sty.Height(it.name) + sty.Height("M")*0.35
	}
}
