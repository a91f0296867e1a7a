package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// small keeps edge-case renders cheap; the normal cases use default sizes.
var small = Size{Width: 4, Height: 3, DPI: 50}

var (
	nan = math.NaN()
	inf = math.Inf(1)
)

// longText is longer than any figure is wide.
var longText = strings.Repeat("a very long label that keeps going ", 8)

// figureCases covers every figure type with normal data and with each edge
// case the package promises to survive.
func figureCases() map[string]Figure {
	ts := []float64{0, 1, 2, 3, 4, 5}
	ys := []float64{3, 4, 2, 5, 6, 4}
	pts := []Point{{X: 10, Y: 5, XErr: 1, YErr: 0.5, Label: "a"}, {X: 40, Y: 8, Label: "b"}}
	band := Band{Name: "agent", X: ts, Mean: ys, Low: []float64{2, 3, 1, 4, 5, 3}, High: []float64{4, 5, 3, 6, 7, 5}}
	return map[string]Figure{
		"timeseries": TimeSeries{Title: "cwnd", X: Axis{Label: "time (s)"}, Y: Axis{Label: "cwnd (KB)"},
			Series: []Series{{Name: "cubic", X: ts, Y: ys}, {Name: "reno", X: ts, Y: []float64{1, 2, 3, 4, 5, 6}}},
			Events: []Event{{X: 2.5, Label: "link switch at 2.5 s"}}, Step: true},
		"timeseries-empty":        TimeSeries{Title: "nothing", Size: small},
		"timeseries-empty-series": TimeSeries{Series: []Series{{Name: "idle"}}, Size: small},
		"timeseries-single-point": TimeSeries{Series: []Series{{Name: "one", X: []float64{3}, Y: []float64{7}}}, Size: small},
		"timeseries-nan-inf": TimeSeries{Series: []Series{{Name: "holes",
			X: []float64{0, 1, nan, 3, 4, inf}, Y: []float64{1, nan, 2, 3, -inf, 5}}}, Size: small},
		"timeseries-all-equal": TimeSeries{Series: []Series{{Name: "flat", X: []float64{5, 5, 5}, Y: []float64{2, 2, 2}}}, Size: small},
		"timeseries-long-labels": TimeSeries{Title: longText, X: Axis{Label: longText}, Y: Axis{Label: longText},
			Series: []Series{{Name: longText, X: ts, Y: ys}}, Events: []Event{{X: 1, Label: longText}}, Size: small},
		"timeseries-log-nonpositive": TimeSeries{Y: Axis{Log: true},
			Series: []Series{{Name: "s", X: ts, Y: []float64{0, -1, 10, 100, 1000, 1e4}}}, Size: small},
		"timeseries-many-series": TimeSeries{Series: manySeries(20), Size: small},
		"stacked": Stacked{Title: "run", X: Axis{Label: "time (s)"}, Events: []Event{{X: 2, Label: "switch"}},
			Panels: []Panel{
				{Y: Axis{Label: "cwnd (KB)"}, Series: []Series{{Name: "flow 1", X: ts, Y: ys}}, Step: true},
				{Y: Axis{Label: "RTT (ms)"}, Series: []Series{{Name: "flow 1", X: ts, Y: ys}}},
				{Y: Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: []Series{{Name: "flow 1", X: ts, Y: ys}}},
				{Y: Axis{Label: "queue (packets)"}, Series: []Series{{Name: "bottleneck", X: ts, Y: ys}}, Step: true},
			}},
		"stacked-tiny": Stacked{Title: longText, Panels: []Panel{{Y: Axis{Label: "y"}, Series: []Series{{Name: "s", X: ts, Y: ys}}}, {}},
			Size: Size{Width: 0.5, Height: 0.5, DPI: 50}},
		"stacked-empty-panel": Stacked{Panels: []Panel{{Y: Axis{Label: longText}}, {Series: []Series{{X: []float64{1}, Y: []float64{1}}}}}, Size: small},
		"cdf":                 CDF{Title: "RTT", X: Axis{Label: "RTT (ms)"}, Samples: []Sample{{Name: "cubic", Values: ys}, {Name: "bbr", Values: ts}}},
		"cdf-empty":           CDF{Samples: []Sample{{Name: "none"}, {Name: "all-nan", Values: []float64{nan, inf}}}, Size: small},
		"cdf-single":          CDF{Samples: []Sample{{Name: "one", Values: []float64{4}}}, Size: small},
		"cdf-equal":           CDF{X: Axis{Log: true}, Samples: []Sample{{Name: "same", Values: []float64{3, 3, 3, -1}}}, Size: small},
		"bars": Bars{Title: "transfer time", X: Axis{Label: "loss rate"}, Y: Axis{Label: "time (s)"},
			Groups: []string{"0%", "1%"}, Categories: []string{"MARLIN", "cubic", "reno"},
			Values: [][]Estimate{{{1, 0.1}, {1.2, 0.2}, {1.3, 0}}, {{2, 0.3}, {nan, 0}, {-0.5, 0.1}}}},
		"bars-empty":       Bars{Size: small},
		"bars-all-missing": Bars{Groups: []string{"g"}, Categories: []string{"c"}, Values: [][]Estimate{{{nan, nan}}}, Size: small},
		"bars-long-labels": Bars{Groups: []string{longText, longText}, Categories: []string{longText},
			Values: [][]Estimate{{{1, inf}}, {{1, 0.5}}}, Size: small},
		"pantheon": Pantheon("summary", []PointSeries{{Name: "cubic", Points: pts}, {Name: "bbr", Points: []Point{{X: 5, Y: 9}}}}),
		"scatter-edge": Scatter{X: Axis{Log: true, Reverse: true}, Y: Axis{Reverse: true},
			Series: []PointSeries{{Name: "odd", Points: []Point{{X: 0, Y: 1}, {X: nan, Y: 1}, {X: 2, Y: 2, XErr: 5, YErr: nan, Label: longText}}}, {Name: "empty"}}, Size: small},
		"pareto": Pareto{Title: "front", X: Axis{Label: "delay (ms)"}, Y: Axis{Label: "throughput (Mbit/s)"}, YGoal: Maximize,
			Points: []XY{{1, 1}, {2, 3}, {3, 2}, {4, 5}, {5, 4}}, Refs: []Ref{{"default alpha=2, beta=4", 3, 2}, {longText, nan, 1}}},
		"pareto-empty":  Pareto{Size: small},
		"pareto-single": Pareto{Points: []XY{{2, 2}}, Size: small},
		"model": ModelCurves{Title: "throughput vs loss", X: Axis{Label: "loss rate", Log: true}, Y: Axis{Label: "throughput (Mbit/s)"},
			Curves:   []Series{{Name: "model", X: []float64{1e-4, 1e-3, 1e-2, 1e-1}, Y: []float64{10, 8, 3, 1}}},
			Measured: []PointSeries{{Name: "simulation", Points: []Point{{X: 1e-3, Y: 7, YErr: 1}, {X: 1e-2, Y: 3.5, YErr: 0.4}}}}},
		"model-empty": ModelCurves{Curves: []Series{{Name: "c"}}, Measured: []PointSeries{{Name: "m"}}, Size: small},
		"learning": LearningCurve{Title: "return", X: Axis{Label: "step"}, Y: Axis{Label: "return"},
			Curves: []Band{band, {Name: "no band", X: ts, Mean: ys}}},
		"learning-gaps": LearningCurve{Curves: []Band{{Name: "gappy", X: ts, Mean: []float64{1, nan, 2, 3, 4, 5},
			Low: []float64{0, 0, nan, 2, 3, 4}, High: []float64{2, 2, 3, 4, 5, inf}}}, Size: small},
	}
}

func manySeries(n int) []Series {
	out := make([]Series, n)
	for i := range out {
		out[i] = Series{Name: "series " + string(rune('A'+i)), X: []float64{0, 1}, Y: []float64{float64(i), float64(i + 1)}}
	}
	return out
}

func TestFiguresRenderPNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	for name, fig := range figureCases() {
		t.Run(name, func(t *testing.T) {
			for _, ext := range []string{"png", "svg"} {
				path := filepath.Join(dir, name+"."+ext)
				if err := fig.Save(path); err != nil {
					t.Fatalf("Save(%s): %v", path, err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if ext == "png" {
					checkPNG(t, data, fig)
				} else {
					checkSVG(t, data)
				}
			}
		})
	}
}

// checkPNG decodes data and checks the pixel size follows the figure size.
func checkPNG(t *testing.T, data []byte, fig Figure) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b, ok := fig.(builder)
	if !ok {
		t.Fatalf("%T does not build", fig)
	}
	f, err := b.build()
	if err != nil {
		t.Fatal(err)
	}
	wantW := int(math.Ceil(float64(f.width/vg.Inch) * float64(f.dpi)))
	if got := img.Bounds().Dx(); got < wantW-1 || got > wantW+1 {
		t.Errorf("PNG width = %d px, want %d", got, wantW)
	}
}

// checkSVG parses data as XML and checks it is an <svg> document whose
// text has a sans-serif fallback font.
func checkSVG(t *testing.T, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element = %q, want svg", root)
	}
	if bytes.Contains(data, []byte("<text")) && !bytes.Contains(data, []byte("sans-serif")) {
		t.Errorf("SVG text has no sans-serif fallback font")
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	cases := figureCases()
	for _, name := range []string{"timeseries", "stacked", "bars", "pantheon", "learning"} {
		for _, format := range []string{PNG, SVG} {
			a, err := cases[name].Render(format)
			if err != nil {
				t.Fatalf("%s %s: %v", name, format, err)
			}
			b, err := cases[name].Render(format)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s %s: two renders differ (%d vs %d bytes)", name, format, len(a), len(b))
			}
		}
	}
}

func TestSaveMatchesRender(t *testing.T) {
	fig := figureCases()["cdf"]
	path := filepath.Join(t.TempDir(), "cdf.SVG")
	if err := fig.Save(path); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := fig.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(saved, rendered) {
		t.Errorf("Save wrote %d bytes, Render gave %d different bytes", len(saved), len(rendered))
	}
}

func TestSaveAll(t *testing.T) {
	stem := filepath.Join(t.TempDir(), "fig")
	paths, err := SaveAll(figureCases()["timeseries-single-point"], stem, "png", "svg")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != stem+".png" || paths[1] != stem+".svg" {
		t.Fatalf("SaveAll paths = %v, want [%s.png %s.svg]", paths, stem, stem)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (err %v)", p, err)
		}
	}
	if _, err := SaveAll(figureCases()["timeseries"], stem); err == nil {
		t.Error("SaveAll with no formats: got nil error, want one")
	}
}

func TestBadInputIsAnError(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		fig  Figure
		path string
		want string
	}{
		"extension":    {TimeSeries{}, filepath.Join(dir, "a.pdf"), "unsupported extension"},
		"no-extension": {TimeSeries{}, filepath.Join(dir, "a"), "unsupported extension"},
		"lengths": {TimeSeries{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}},
			filepath.Join(dir, "b.png"), "2 x values but 1 y values"},
		"stacked-lengths": {Stacked{Panels: []Panel{{Series: []Series{{X: []float64{1}}}}}}, filepath.Join(dir, "c.png"), "1 x values but 0 y values"},
		"stacked-none":    {Stacked{}, filepath.Join(dir, "d.png"), "no panels"},
		"bars-rows":       {Bars{Groups: []string{"a", "b"}, Values: [][]Estimate{{}}}, filepath.Join(dir, "e.png"), "1 rows of values for 2 groups"},
		"bars-cols": {Bars{Groups: []string{"a"}, Categories: []string{"x", "y"}, Values: [][]Estimate{{{1, 0}}}},
			filepath.Join(dir, "f.png"), "has 1 values for 2 categories"},
		"bars-ci":  {Bars{Groups: []string{"a"}, Categories: []string{"x"}, Values: [][]Estimate{{{1, -1}}}}, filepath.Join(dir, "g.png"), "negative CI"},
		"bars-log": {Bars{Y: Axis{Log: true}}, filepath.Join(dir, "h.png"), "log y axis"},
		"size":     {TimeSeries{Size: Size{Width: -1}}, filepath.Join(dir, "i.png"), "want width and height"},
		"dpi":      {TimeSeries{Size: Size{DPI: 5000}}, filepath.Join(dir, "j.png"), "DPI 5000"},
		"log-limits": {TimeSeries{Y: Axis{Log: true, Min: -1, Max: 10}, Series: []Series{{X: []float64{1}, Y: []float64{1}}}},
			filepath.Join(dir, "k.png"), "must be positive"},
		"inf-limits":  {TimeSeries{Y: Axis{Min: -inf, Max: 10}}, filepath.Join(dir, "l.png"), "must be finite"},
		"front-index": {Pareto{Points: []XY{{1, 1}}, Front: []int{3}}, filepath.Join(dir, "m.png"), "front index 3 out of range"},
		"band-shape": {LearningCurve{Curves: []Band{{Name: "b", X: []float64{1, 2}, Mean: []float64{1, 2}, Low: []float64{1}}}},
			filepath.Join(dir, "n.png"), "give both Low and High"},
		"band-order": {LearningCurve{Curves: []Band{{Name: "b", X: []float64{1}, Mean: []float64{1}, Low: []float64{2}, High: []float64{0}}}},
			filepath.Join(dir, "o.png"), "low 2 > high 0"},
		"model-lengths": {ModelCurves{Curves: []Series{{Name: "m", X: []float64{1}}}}, filepath.Join(dir, "p.png"), "model series"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := c.fig.Save(c.path)
			if err == nil {
				t.Fatalf("Save: got nil error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Save error = %q, want it to contain %q", err, c.want)
			}
			if _, statErr := os.Stat(c.path); statErr == nil {
				t.Errorf("Save failed but left a file at %s", c.path)
			}
		})
	}
	if _, err := (TimeSeries{}).Render("gif"); err == nil || !strings.Contains(err.Error(), `unsupported format "gif"`) {
		t.Errorf("Render(gif) error = %v, want unsupported format", err)
	}
}

func TestHostileTextIsEscapedInSVG(t *testing.T) {
	evil := `<script>alert("x")</script> & "quotes"`
	fig := TimeSeries{Title: evil, X: Axis{Label: evil}, Y: Axis{Label: evil},
		Series: []Series{{Name: evil, X: []float64{0, 1}, Y: []float64{0, 1}}}, Events: []Event{{X: 0.5, Label: evil}}}
	data, err := fig.Render(SVG)
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, data)
	if bytes.Contains(data, []byte("<script")) {
		t.Errorf("SVG contains a raw <script element")
	}
	if !bytes.Contains(data, []byte("&lt;script&gt;")) {
		t.Errorf("SVG does not contain the escaped title text")
	}
}

func TestLongSeriesStaySmall(t *testing.T) {
	n := 200000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) * 1e-3
		y[i] = math.Sin(float64(i) / 500)
	}
	data, err := TimeSeries{Series: []Series{{Name: "long", X: x, Y: y}}}.Render(SVG)
	if err != nil {
		t.Fatal(err)
	}
	// Unthinned, 200k points would take several MB of path data.
	if len(data) > 150<<10 {
		t.Errorf("SVG of a 200k-point series is %d bytes, want ≤ %d", len(data), 150<<10)
	}
}
