package plot

import (
	"image/color"
	"strings"
	"unicode/utf8"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// OkabeIto is the Okabe-Ito colour-blind-safe palette in the order series
// use it. Yellow comes last because it is faint on white.
var OkabeIto = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
}

// dashPatterns give each line series a pattern of its own so series stay
// distinguishable in greyscale prints.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(7), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)},
	{vg.Points(12), vg.Points(4)},
	{vg.Points(4), vg.Points(2), vg.Points(1.5), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// markerShapes do for markers what dashPatterns do for lines.
var markerShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.SquareGlyph{},
	draw.TriangleGlyph{},
	draw.CrossGlyph{},
	draw.RingGlyph{},
	draw.PyramidGlyph{},
	draw.PlusGlyph{},
	draw.BoxGlyph{},
}

var (
	gridColor  = color.Gray{Y: 0xDD}
	mutedColor = color.Gray{Y: 0x55}
	faintColor = color.NRGBA{R: 0x88, G: 0x88, B: 0x88, A: 0x70}
)

const lineWidth = 1.6 // points

// seriesColor is the colour of the i-th series.
func seriesColor(i int) color.RGBA { return OkabeIto[i%len(OkabeIto)] }

// seriesLine is the line style of the i-th series. Each pass through the
// palette shifts the dash cycle by one, so the first 48 series all differ
// in (colour, dash).
func seriesLine(i int) draw.LineStyle {
	d := (i%len(OkabeIto) + i/len(OkabeIto)) % len(dashPatterns)
	return draw.LineStyle{Color: seriesColor(i), Width: vg.Points(lineWidth), Dashes: dashPatterns[d]}
}

// seriesGlyph is the marker style of the i-th series.
func seriesGlyph(i int) draw.GlyphStyle {
	s := (i%len(OkabeIto) + i/len(OkabeIto)) % len(markerShapes)
	return draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(3.5), Shape: markerShapes[s]}
}

// withAlpha returns c with alpha a (0–255), for faint fills and points.
func withAlpha(c color.Color, a uint8) color.NRGBA {
	r, g, b, _ := color.NRGBAModel.Convert(c).RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// Font sizes in points.
const (
	titleSize  = 13
	labelSize  = 11
	tickSize   = 9.5
	legendSize = 10
	noteSize   = 9
)

// textStyle is the package's one type face (Liberation Sans, whose metrics
// match Arial so SVG text keeps its layout in browsers) at size points.
func textStyle(size float64, bold bool) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{
		Color:   color.Black,
		Font:    font.From(f, vg.Points(size)),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: gplot.DefaultTextHandler,
	}
}

// fitText makes s fit in maxLines lines of at most width each: it wraps at
// spaces, cuts words that are too long on their own, and ends with "…" when
// text had to be dropped. Existing newlines are kept as line breaks.
func fitText(sty text.Style, s string, width vg.Length, maxLines int) string {
	s = strings.TrimSpace(s)
	if s == "" || maxLines < 1 {
		return ""
	}
	if sty.Width(s) <= width && !strings.Contains(s, "\n") {
		return s
	}
	var lines []string
	var cur string
	fits := func(t string) bool { return sty.Width(t) <= width }
	flush := func() {
		lines = append(lines, cur)
		cur = ""
	}
	for _, para := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(para) {
			cand := w
			if cur != "" {
				cand = cur + " " + w
			}
			if fits(cand) {
				cur = cand
				continue
			}
			if cur != "" {
				flush()
			}
			for !fits(w) && utf8.RuneCountInString(w) > 1 {
				head := longestFittingPrefix(sty, w, width)
				lines = append(lines, head)
				w = w[len(head):]
			}
			cur = w
		}
		flush()
	}
	if len(lines) > maxLines {
		last := strings.Join(lines[maxLines-1:], " ")
		lines = append(lines[:maxLines-1], ellipsize(sty, last, width))
	}
	return strings.Join(lines, "\n")
}

// longestFittingPrefix returns the longest prefix of w (at least one rune)
// that fits in width.
func longestFittingPrefix(sty text.Style, w string, width vg.Length) string {
	end := 0
	for i, r := range w {
		next := i + utf8.RuneLen(r)
		if end > 0 && sty.Width(w[:next]) > width {
			break
		}
		end = next
	}
	return w[:end]
}

// ellipsize shortens s to fit width, marking the cut with "…".
func ellipsize(sty text.Style, s string, width vg.Length) string {
	if sty.Width(s) <= width {
		return s
	}
	runes := []rune(s)
	for n := len(runes) - 1; n > 0; n-- {
		t := strings.TrimRight(string(runes[:n]), " ") + "…"
		if sty.Width(t) <= width {
			return t
		}
	}
	return "…"
}
