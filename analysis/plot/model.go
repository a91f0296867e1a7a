package plot

// ModelCurves overlays analytical model curves (lines) with measured points
// (markers with error bars), e.g. throughput versus loss rate from a
// formula and from simulation. Curves[i] and Measured[i] share a colour, so
// list a model and its simulation in the same position to pair them.
type ModelCurves struct {
	Title string
	// X is often logarithmic (loss rates); set X.Log.
	X, Y     Axis
	Curves   []Series
	Measured []PointSeries
	// Size defaults to 7×4.2 in.
	Size Size
}

// Save implements Figure.
func (f ModelCurves) Save(path string) error { return save(f, path) }

// Render implements Figure.
func (f ModelCurves) Render(format string) ([]byte, error) { return render(f, format) }

func (f ModelCurves) build() (*figure, error) {
	for _, s := range f.Curves {
		if err := checkSeries("model", s); err != nil {
			return nil, err
		}
	}
	fig, err := newFigure(f.Size, 7, 4.2)
	if err != nil {
		return nil, err
	}
	fig.setTitle(f.Title, "")
	pn := fig.addPanel(f.X, f.Y)
	pn.margin = 0.03
	var xe, ye extent
	for i, s := range f.Curves {
		if err := fig.addLine(pn, i, s, lineOpts{}, &xe, &ye); err != nil {
			return nil, err
		}
	}
	for i, s := range f.Measured {
		if err := fig.addPoints(pn, i, s, &xe, &ye); err != nil {
			return nil, err
		}
	}
	return fig, pn.finish(xe, ye)
}
