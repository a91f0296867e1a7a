package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is implemented by every figure type in this package.
type Figure interface {
	// Save renders the figure to path. The extension picks the format:
	// ".png" or ".svg" (case-insensitive).
	Save(path string) error
	// Render returns the figure encoded as "png" or "svg".
	Render(format string) ([]byte, error)
}

// Size is the output size of a figure. Zero fields take the figure type's
// default.
type Size struct {
	// Width and Height are in inches.
	Width, Height float64
	// DPI is the PNG resolution in pixels per inch (SVG is resolution
	// independent); the default is 110.
	DPI int
}

// Axis describes one axis of a figure.
type Axis struct {
	// Label names the quantity and its unit, e.g. "RTT (ms)". A reversed
	// axis gets "— axis reversed" appended so readers are not misled.
	Label string
	// Log selects a base-10 logarithmic scale; values ≤ 0 are skipped.
	Log bool
	// Reverse makes values decrease along the axis (right to left, or top
	// to bottom).
	Reverse bool
	// Min and Max fix the axis range when Min < Max; otherwise the range
	// fits the data.
	Min, Max float64
	// IncludeZero extends a fitted linear range to contain zero, which
	// keeps throughput and window plots honest about proportions.
	IncludeZero bool
}

// Series is a named sequence of (X[i], Y[i]) points.
type Series struct {
	Name string
	X, Y []float64
}

// Event marks an instant on the x axis with a vertical line and a label,
// e.g. {10, "link switch at 10 s"}.
type Event struct {
	X     float64
	Label string
}

// Point is one measured point of a scatter or model plot.
type Point struct {
	X, Y float64
	// XErr and YErr are error-bar half-widths (e.g. a 95% confidence
	// interval); zero or NaN draws no bar.
	XErr, YErr float64
	// Label, if set, is written next to the point.
	Label string
}

// PointSeries is a named set of points sharing one colour and marker.
type PointSeries struct {
	Name   string
	Points []Point
}

const (
	defaultDPI = 110
	maxInches  = 100
	maxDPI     = 600
)

// PNG and SVG name the supported output formats, for Render and SaveAll.
const (
	PNG = "png"
	SVG = "svg"
)

// builder is what the figure types share: turning their plain data into a
// laid-out figure, or explaining why the data cannot be drawn.
type builder interface {
	build() (*figure, error)
}

func save(b builder, path string) error {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if ext != PNG && ext != SVG {
		return fmt.Errorf("plot: cannot save %q: unsupported extension %q (want .png or .svg)", path, filepath.Ext(path))
	}
	data, err := render(b, ext)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

func render(b builder, format string) ([]byte, error) {
	format = strings.ToLower(format)
	if format != PNG && format != SVG {
		return nil, fmt.Errorf("plot: unsupported format %q (want %q or %q)", format, PNG, SVG)
	}
	fig, err := b.build()
	if err != nil {
		return nil, err
	}
	return fig.encode(format)
}

// SaveAll writes f once per format as stem.<format> (for example
// "out/cwnd" with "png", "svg") and returns the paths written.
func SaveAll(f Figure, stem string, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		return nil, fmt.Errorf("plot: SaveAll %q: no formats given", stem)
	}
	paths := make([]string, 0, len(formats))
	for _, format := range formats {
		p := stem + "." + strings.ToLower(format)
		if err := f.Save(p); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// resolveSize applies defaults and rejects sizes no reader wants: a
// negative, zero-area or poster-sized figure is a caller bug.
func resolveSize(s Size, defW, defH float64) (w, h vg.Length, dpi int, err error) {
	wi, hi := s.Width, s.Height
	if wi == 0 {
		wi = defW
	}
	if hi == 0 {
		hi = defH
	}
	if !(wi > 0 && hi > 0 && wi <= maxInches && hi <= maxInches) {
		return 0, 0, 0, fmt.Errorf("plot: size %gx%g in: want width and height in (0, %d] inches", wi, hi, maxInches)
	}
	dpi = s.DPI
	if dpi == 0 {
		dpi = defaultDPI
	}
	if dpi < 0 || dpi > maxDPI {
		return 0, 0, 0, fmt.Errorf("plot: DPI %d: want 1 to %d", s.DPI, maxDPI)
	}
	return vg.Length(wi) * vg.Inch, vg.Length(hi) * vg.Inch, dpi, nil
}

// svgFontFamily is what gonum writes for our font. Browsers without
// Liberation Sans would fall back to a serif face with different metrics,
// so the output names metric-compatible fallbacks.
const (
	svgFontFamily    = "font-family:Liberation Sans;"
	svgFontFallbacks = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"
)

func (f *figure) encode(format string) (data []byte, err error) {
	// gonum/plot panics on some inputs we try to rule out beforehand; a
	// panic that still gets through must reach the caller as an error.
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("plot: rendering failed: %v", r)
		}
	}()
	var buf bytes.Buffer
	switch format {
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(f.dpi),
			vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		if err := enc.Encode(&buf, c.Image()); err != nil {
			return nil, fmt.Errorf("plot: encoding PNG: %w", err)
		}
	case SVG:
		c := vgsvg.New(f.width, f.height)
		f.draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("plot: encoding SVG: %w", err)
		}
		return bytes.ReplaceAll(buf.Bytes(), []byte(svgFontFamily), []byte(svgFontFallbacks)), nil
	default:
		return nil, fmt.Errorf("plot: unsupported format %q", format)
	}
	return buf.Bytes(), nil
}

// isFinite reports whether v is an ordinary number.
func isFinite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}
