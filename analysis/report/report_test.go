package report

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tinyPNG is a valid 3×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.NRGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const tinySVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>`

// element is a parsed HTML element: name, attributes and direct text.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parse checks doc is well-formed (as XML; the markup is kept
// XHTML-compatible for this) and returns its elements in document order.
func parse(t *testing.T, doc []byte) []*element {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte("<!DOCTYPE html>\n")) {
		t.Fatalf("document does not start with <!DOCTYPE html>")
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	var out []*element
	var stack []*element
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &element{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%d elements left open", len(stack))
	}
	if len(out) == 0 || out[0].name != "html" {
		t.Fatalf("root element is not html")
	}
	return out
}

func named(els []*element, name string) []*element {
	var out []*element
	for _, e := range els {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

// fakeFigure stands in for a plot figure.
type fakeFigure struct {
	data map[string][]byte
	err  error
}

func (f fakeFigure) Render(format string) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	d, ok := f.data[format]
	if !ok {
		return nil, errors.New("unsupported format " + format)
	}
	return d, nil
}

func buildFull(t *testing.T) (*Report, []byte) {
	t.Helper()
	pngData := tinyPNG(t)
	dir := t.TempDir()
	svgPath := filepath.Join(dir, "f.svg")
	if err := os.WriteFile(svgPath, []byte(tinySVG), 0o644); err != nil {
		t.Fatal(err)
	}
	r := New("cclab report")
	r.Heading("Setup")
	r.Paragraph("Three schemes on one link.")
	r.Pre("cclab run --scheme cubic --seed 1")
	r.List("cubic", "bbr")
	r.Heading("Results")
	r.Subheading("Throughput")
	r.Table("Mean throughput", []string{"scheme", "Mbit/s", "runs", "time", "note"}, [][]any{
		{"cubic", 9.87654, 10, 1500 * time.Millisecond, nil},
		{"bbr", MeanCI{Mean: 9.4321, CI: 0.123}, int64(10), 2 * time.Second, true},
		{"vegas", math.NaN(), uint8(3), time.Duration(0), "lost"},
	})
	r.Table("Empty", []string{"a"}, nil)
	r.FigureBytes("A PNG", "png", pngData)
	r.Figure("An SVG file", svgPath)
	r.Plot("A rendered figure", fakeFigure{data: map[string][]byte{"png": pngData}})
	r.PlotAs("The same as SVG", "svg", fakeFigure{data: map[string][]byte{"svg": []byte(tinySVG)}})
	doc, err := r.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return r, doc
}

func TestReportStructure(t *testing.T) {
	_, doc := buildFull(t)
	els := parse(t, doc)

	if got := named(els, "title"); len(got) != 1 || got[0].text != "cclab report" {
		t.Errorf("title elements = %v, want one saying %q", got, "cclab report")
	}
	if got := named(els, "h1"); len(got) != 1 {
		t.Errorf("%d h1 elements, want 1", len(got))
	}
	var h2 []string
	for _, e := range named(els, "h2") {
		h2 = append(h2, e.text)
	}
	if want := []string{"Contents", "Setup", "Results"}; !slices.Equal(h2, want) {
		t.Errorf("h2 headings = %q, want %q", h2, want)
	}
	// Every contents link points at a heading id.
	ids := map[string]bool{}
	for _, e := range els {
		if id := e.attrs["id"]; id != "" {
			if ids[id] {
				t.Errorf("duplicate id %q", id)
			}
			ids[id] = true
		}
	}
	links := named(els, "a")
	if len(links) != 2 {
		t.Errorf("%d contents links, want 2", len(links))
	}
	for _, a := range links {
		if !ids[strings.TrimPrefix(a.attrs["href"], "#")] {
			t.Errorf("link %q points at no id", a.attrs["href"])
		}
	}

	if got := len(named(els, "table")); got != 2 {
		t.Errorf("%d tables, want 2", got)
	}
	var caps []string
	for _, e := range named(els, "caption") {
		caps = append(caps, e.text)
	}
	if want := []string{"Table 1. Mean throughput", "Table 2. Empty"}; !slices.Equal(caps, want) {
		t.Errorf("table captions = %q, want %q", caps, want)
	}
	var cells []string
	var numeric []string
	for _, e := range named(els, "td") {
		cells = append(cells, e.text)
		if e.attrs["class"] == "num" {
			numeric = append(numeric, e.text)
		}
	}
	wantCells := []string{
		"cubic", "9.877", "10", "1.5s", "",
		"bbr", "9.43 ± 0.12", "10", "2s", "true",
		"vegas", "n/a", "3", "0s", "lost",
		"no rows",
	}
	if !slices.Equal(cells, wantCells) {
		t.Errorf("table cells = %q, want %q", cells, wantCells)
	}
	if want := []string{"9.877", "10", "1.5s", "9.43 ± 0.12", "10", "2s", "n/a", "3", "0s"}; !slices.Equal(numeric, want) {
		t.Errorf("right-aligned cells = %q, want %q", numeric, want)
	}

	var figcaps []string
	for _, e := range named(els, "figcaption") {
		figcaps = append(figcaps, e.text)
	}
	wantCaps := []string{"Figure 1. A PNG", "Figure 2. An SVG file", "Figure 3. A rendered figure", "Figure 4. The same as SVG"}
	if !slices.Equal(figcaps, wantCaps) {
		t.Errorf("figure captions = %q, want %q", figcaps, wantCaps)
	}
}

func TestFiguresAreEmbedded(t *testing.T) {
	_, doc := buildFull(t)
	imgs := named(parse(t, doc), "img")
	if len(imgs) != 4 {
		t.Fatalf("%d img elements, want 4", len(imgs))
	}
	wantMIME := []string{"image/png", "image/svg+xml", "image/png", "image/svg+xml"}
	wantData := [][]byte{tinyPNG(t), []byte(tinySVG), tinyPNG(t), []byte(tinySVG)}
	for i, img := range imgs {
		src := img.attrs["src"]
		prefix := "data:" + wantMIME[i] + ";base64,"
		if !strings.HasPrefix(src, prefix) {
			t.Errorf("img %d src starts %.40q, want prefix %q", i+1, src, prefix)
			continue
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, prefix))
		if err != nil {
			t.Errorf("img %d: base64: %v", i+1, err)
			continue
		}
		if !bytes.Equal(data, wantData[i]) {
			t.Errorf("img %d: embedded %d bytes differ from the %d given", i+1, len(data), len(wantData[i]))
		}
		if img.attrs["alt"] == "" {
			t.Errorf("img %d has no alt text", i+1)
		}
	}
}

func TestSelfContained(t *testing.T) {
	_, doc := buildFull(t)
	els := parse(t, doc)
	for _, name := range []string{"script", "link", "iframe", "object"} {
		if n := len(named(els, name)); n != 0 {
			t.Errorf("%d <%s> elements, want none", n, name)
		}
	}
	for _, e := range els {
		for k, v := range e.attrs {
			if (k == "src" || k == "href") && !strings.HasPrefix(v, "data:") && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q> refers outside the file", e.name, k, v)
			}
		}
	}
	if bytes.Contains(doc, []byte("url(")) || bytes.Contains(doc, []byte("@import")) {
		t.Errorf("style sheet fetches something")
	}
}

func TestHostileTextIsEscaped(t *testing.T) {
	evil := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(1)>`,
		`a & b < c > d 'quoted' "double"`,
		`</title></style><b>bold</b>`,
	}
	r := New(evil[3])
	for _, s := range evil {
		r.Heading(s)
		r.Subheading(s)
		r.Paragraph(s)
		r.Pre(s)
		r.List(s, s)
		r.Table(s, []string{s}, [][]any{{s}})
		r.FigureBytes(s, "png", tinyPNG(t))
	}
	doc, err := r.Render()
	if err != nil {
		t.Fatal(err)
	}
	els := parse(t, doc)
	for _, name := range []string{"script", "b"} {
		if n := len(named(els, name)); n != 0 {
			t.Errorf("hostile text created %d <%s> elements", n, name)
		}
	}
	if n := len(named(els, "img")); n != len(evil) {
		t.Errorf("%d img elements, want %d (only the real figures)", n, len(evil))
	}
	for _, e := range named(els, "img") {
		if _, ok := e.attrs["onerror"]; ok {
			t.Errorf("img has an onerror attribute")
		}
	}
	// The text survives escaping unchanged.
	var ps []string
	for _, e := range named(els, "p") {
		ps = append(ps, e.text)
	}
	if !slices.Equal(ps, evil) {
		t.Errorf("paragraph texts = %q, want %q", ps, evil)
	}
	if got := named(els, "title")[0].text; got != evil[3] {
		t.Errorf("title text = %q, want %q", got, evil[3])
	}
}

func TestDeterministic(t *testing.T) {
	_, a := buildFull(t)
	_, b := buildFull(t)
	if !bytes.Equal(a, b) {
		t.Errorf("two identical reports differ (%d vs %d bytes)", len(a), len(b))
	}
}

func TestNoContentsForOneSection(t *testing.T) {
	r := New("t")
	r.Heading("Only")
	doc, err := r.Render()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(named(parse(t, doc), "nav")); n != 0 {
		t.Errorf("%d contents blocks for one section, want 0", n)
	}
}

func TestWriteFile(t *testing.T) {
	r, doc := buildFull(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, doc) {
		t.Errorf("file has %d bytes, Render gave %d different bytes", len(got), len(doc))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %q, want only report.html", names)
	}
	var buf bytes.Buffer
	n, err := r.WriteTo(&buf)
	if err != nil || n != int64(len(doc)) || !bytes.Equal(buf.Bytes(), doc) {
		t.Errorf("WriteTo wrote %d bytes (err %v), want the %d bytes of Render", n, err, len(doc))
	}
	if err := r.WriteFile(filepath.Join(dir, "missing", "r.html")); err == nil {
		t.Errorf("WriteFile into a missing directory: got nil error")
	}
}

func TestErrorsAreReported(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		add  func(r *Report)
		want string
	}{
		"row length":   {func(r *Report) { r.Table("t", []string{"a", "b"}, [][]any{{1}}) }, "row 1 has 1 cells, want 2"},
		"no header":    {func(r *Report) { r.Table("t", nil, nil) }, "no header columns"},
		"missing file": {func(r *Report) { r.Figure("f", filepath.Join(dir, "nope.png")) }, "nope.png"},
		"bad png":      {func(r *Report) { r.FigureBytes("f", "png", []byte("not a png")) }, "not a valid PNG"},
		"bad svg":      {func(r *Report) { r.FigureBytes("f", "svg", []byte("<html></html>")) }, "not an SVG"},
		"format":       {func(r *Report) { r.FigureBytes("f", "gif", []byte("GIF89a")) }, `unsupported image format "gif"`},
		"render":       {func(r *Report) { r.Plot("f", fakeFigure{err: errors.New("boom")}) }, "boom"},
		"nil figure":   {func(r *Report) { r.Plot("f", nil) }, "nil figure"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := New("t")
			c.add(r)
			r.Paragraph("later content is still accepted")
			r.Table("bad again", []string{"x"}, [][]any{{1, 2}})
			if r.Err() == nil || !strings.Contains(r.Err().Error(), c.want) {
				t.Fatalf("Err() = %v, want it to contain %q (the first error)", r.Err(), c.want)
			}
			if _, err := r.Render(); err == nil {
				t.Errorf("Render: got nil error")
			}
			path := filepath.Join(dir, name+".html")
			if err := r.WriteFile(path); err == nil {
				t.Errorf("WriteFile: got nil error")
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("WriteFile failed but created %s", path)
			}
		})
	}
}

func TestFormatFloat(t *testing.T) {
	cases := map[float64]string{
		0:           "0",
		1:           "1.000",
		9.87654:     "9.877",
		9.99996:     "10.00",
		123.456:     "123.5",
		-0.5:        "-0.5000",
		0.00123456:  "0.001235",
		1234567:     "1234567",
		0.0001:      "1.000e-04",
		2.5e10:      "2.500e+10",
		math.NaN():  "n/a",
		math.Inf(1): "∞",
	}
	for v, want := range cases {
		if got := FormatFloat(v); got != want {
			t.Errorf("FormatFloat(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestMeanCI(t *testing.T) {
	cases := []struct {
		m    MeanCI
		want string
	}{
		{MeanCI{9.4321, 0.123}, "9.43 ± 0.12"},
		{MeanCI{1234.5, 56}, "1234 ± 56"},
		{MeanCI{0.01234, 0.0005}, "0.01234 ± 0.00050"},
		{MeanCI{12.5, 0}, "12.50"},
		{MeanCI{math.NaN(), 1}, "n/a"},
		{MeanCI{5, math.NaN()}, "5.000"},
		{MeanCI{1e10, 1e9}, "1.000e+10 ± 1.000e+09"},
	}
	for _, c := range cases {
		if got := c.m.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.m, got, c.want)
		}
	}
}
