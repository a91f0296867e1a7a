package plot

import (
	"fmt"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// groupWidth is the share of each group's slot filled by its bars.
const groupWidth = 0.8

// Bars is a grouped bar chart with confidence-interval error bars: one
// group per x position (e.g. loss level), one bar per category within each
// group (e.g. scheme), with categories told apart by colour, hatching and
// the legend. When no mean is negative the quantity is taken to be
// non-negative (a rate, a delay, a count) and the error bars stop at zero:
// a confidence interval reaching below zero says the sample is small, not
// that the value can be negative.
type Bars struct {
	Title string
	// X labels what the groups are, e.g. "random loss rate"; only its
	// Label is used.
	X Axis
	// Y must be linear; bars start at zero unless Y fixes the range.
	Y          Axis
	Groups     []string
	Categories []string
	// Values[g][k] is the estimate for group g and category k.
	Values [][]Estimate
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f Bars) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f Bars) Render(format string) ([]byte, error) { return render(f, format) }

func (f Bars) build() (*figure, error) {
	if f.Y.Log {
		return nil, fmt.Errorf("plot: bar chart %q: a log y axis has no zero for bars to start from", f.Title)
	}
	if len(f.Values) != len(f.Groups) {
		return nil, fmt.Errorf("plot: bar chart %q: %d rows of values for %d groups", f.Title, len(f.Values), len(f.Groups))
	}
	for g, row := range f.Values {
		if len(row) != len(f.Categories) {
			return nil, fmt.Errorf("plot: bar chart %q: group %q has %d values for %d categories", f.Title, f.Groups[g], len(row), len(f.Categories))
		}
		for k, e := range row {
			if e.CI < 0 {
				return nil, fmt.Errorf("plot: bar chart %q: group %q, category %q: negative CI %g", f.Title, f.Groups[g], f.Categories[k], e.CI)
			}
		}
	}
	fig, err := newFigure(f.Size, 7, 4.2)
	if err != nil {
		return nil, err
	}
	x := f.X
	x.Log, x.Reverse = false, false
	y := f.Y
	y.IncludeZero = true
	fig.setTitle(f.Title, "")
	pn := fig.addPanel(x, y)
	pn.gridX = nil // group positions are categories, not a scale

	nonNeg := true
	for _, row := range f.Values {
		for _, e := range row {
			nonNeg = nonNeg && !(e.Mean < 0)
		}
	}
	var ye extent
	for _, row := range f.Values {
		for _, e := range row {
			if !isFinite(e.Mean) {
				continue
			}
			pn.drawn++
			ye.add(e.Mean)
			if isFinite(e.CI) {
				ye.add(lowEnd(e, nonNeg))
				ye.add(e.Mean + e.CI)
			}
		}
	}
	if len(f.Categories) > 0 {
		pn.plot.Add(groupedBars{values: f.Values, nCat: len(f.Categories), width: groupWidth, clip: nonNeg})
	}
	for k, name := range f.Categories {
		if name == "" {
			name = fmt.Sprintf("category %d", k+1)
		}
		n := 0
		for _, row := range f.Values {
			if isFinite(row[k].Mean) {
				n++
			}
		}
		fig.addLegend(pn, name, n, fillThumb{color: seriesColor(k), pattern: k})
	}

	// Group names label the x axis; each gets its slot's width and up to
	// two lines.
	slotW := (fig.inner() - fig.legendWidth() - vg.Inch*0.8) / vg.Length(max(len(f.Groups), 1))
	sty := textStyle(tickSize, false)
	ticks := make(gplot.ConstantTicks, len(f.Groups))
	for g, name := range f.Groups {
		ticks[g] = gplot.Tick{Value: float64(g), Label: fitText(sty, name, slotW*0.95, 2)}
		if ticks[g].Label == "" {
			ticks[g].Label = " " // an empty label would turn the tick minor
		}
	}
	pn.plot.X.Tick.Marker = ticks
	pn.plot.X.Tick.Length = 0
	ylo, yhi, err := axisRange(y, ye)
	if err != nil {
		return nil, err
	}
	pn.setRanges(-0.5, math.Max(float64(len(f.Groups))-0.5, 0.5), ylo, yhi)
	return fig, nil
}
