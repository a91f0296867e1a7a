// Package report builds one self-contained HTML file from headings,
// paragraphs, tables and figures. Images are embedded as data: URIs and the
// style sheet is inline, so the file opens anywhere without fetching
// anything and needs no scripts.
//
// All text is escaped by html/template. The output depends only on what was
// added, in order: the same calls give byte-identical files.
//
// Methods that can fail (a table of the wrong shape, an unreadable figure)
// record the first error, skip the element, and leave later calls working;
// Err, Render, WriteTo and WriteFile report it. Callers can therefore build a
// report without checking every call.
package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Renderer is anything that can encode itself as an image; the figures of
// package cclab/plot satisfy it.
type Renderer interface {
	Render(format string) ([]byte, error)
}

// Report is an HTML report under construction. The zero value is not
// usable; call New.
type Report struct {
	title   string
	blocks  []block
	figures int
	tables  int
	heads   int
	err     error
}

// block is one element of the body. Exactly one group of fields is set,
// according to Kind; the template switches on Kind.
type block struct {
	Kind    string
	Text    string
	ID      string
	Items   []string
	Caption string
	Number  int
	Header  []string
	Rows    [][]cell
	Cols    int
	// Src is the whole src="data:…" attribute. It is built from a MIME
	// type and base64 text only, so it is safe verbatim, and passing it as
	// an attribute keeps html/template from escaping every "+" as "&#43;",
	// which would grow the figure data by about 6%.
	Src template.HTMLAttr
}

type cell struct {
	Text    string
	Numeric bool
}

// New starts a report with the given title.
func New(title string) *Report {
	return &Report{title: title}
}

// Err returns the first error recorded while building the report.
func (r *Report) Err() error { return r.err }

func (r *Report) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Heading starts a section; sections are listed in a table of contents
// when there are at least two.
func (r *Report) Heading(text string) {
	r.heads++
	r.blocks = append(r.blocks, block{Kind: "h2", Text: text, ID: fmt.Sprintf("sec-%d", r.heads)})
}

// Subheading starts a subsection.
func (r *Report) Subheading(text string) {
	r.blocks = append(r.blocks, block{Kind: "h3", Text: text})
}

// Paragraph adds a paragraph of plain text.
func (r *Report) Paragraph(text string) {
	r.blocks = append(r.blocks, block{Kind: "p", Text: text})
}

// Pre adds preformatted text, e.g. the command line that reproduces a run.
func (r *Report) Pre(text string) {
	r.blocks = append(r.blocks, block{Kind: "pre", Text: text})
}

// List adds a bulleted list.
func (r *Report) List(items ...string) {
	r.blocks = append(r.blocks, block{Kind: "ul", Items: items})
}

// Table adds a numbered table. Every row must have one cell per header
// column. Cells are formatted with FormatCell; numeric cells are
// right-aligned.
func (r *Report) Table(caption string, header []string, rows [][]any) {
	if len(header) == 0 {
		r.fail(fmt.Errorf("report: table %q: no header columns", caption))
		return
	}
	out := make([][]cell, len(rows))
	for i, row := range rows {
		if len(row) != len(header) {
			r.fail(fmt.Errorf("report: table %q: row %d has %d cells, want %d", caption, i+1, len(row), len(header)))
			return
		}
		out[i] = make([]cell, len(row))
		for j, v := range row {
			text, num := FormatCell(v)
			out[i][j] = cell{Text: text, Numeric: num}
		}
	}
	r.tables++
	r.blocks = append(r.blocks, block{Kind: "table", Caption: caption, Number: r.tables,
		Header: header, Rows: out, Cols: len(header)})
}

// Figure embeds the PNG or SVG image file at path, read now, with a
// numbered caption.
func (r *Report) Figure(caption, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		r.fail(fmt.Errorf("report: figure %q: %w", caption, err))
		return
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	r.FigureBytes(caption, format, data)
}

// FigureBytes embeds image data of the given format ("png" or "svg") with
// a numbered caption.
func (r *Report) FigureBytes(caption, format string, data []byte) {
	var mime string
	switch strings.ToLower(format) {
	case "png":
		if _, err := png.DecodeConfig(bytes.NewReader(data)); err != nil {
			r.fail(fmt.Errorf("report: figure %q: not a valid PNG: %w", caption, err))
			return
		}
		mime = "image/png"
	case "svg":
		if !bytes.Contains(data, []byte("<svg")) {
			r.fail(fmt.Errorf("report: figure %q: not an SVG image (no <svg element)", caption))
			return
		}
		mime = "image/svg+xml"
	default:
		r.fail(fmt.Errorf("report: figure %q: unsupported image format %q (want png or svg)", caption, format))
		return
	}
	r.figures++
	// An SVG shown through <img> cannot run scripts or reach the page,
	// which is why SVGs are not inlined as markup.
	src := template.HTMLAttr(`src="data:` + mime + ";base64," + base64.StdEncoding.EncodeToString(data) + `"`)
	r.blocks = append(r.blocks, block{Kind: "figure", Caption: caption, Number: r.figures, Src: src})
}

// Plot renders fig as PNG and embeds it with a numbered caption.
func (r *Report) Plot(caption string, fig Renderer) {
	r.PlotAs(caption, "png", fig)
}

// PlotAs is Plot with an explicit format, "png" or "svg". SVG is smaller
// and sharper for sparse figures; PNG stays small for dense ones such as
// long time series.
func (r *Report) PlotAs(caption, format string, fig Renderer) {
	if fig == nil {
		r.fail(fmt.Errorf("report: figure %q: nil figure", caption))
		return
	}
	data, err := fig.Render(format)
	if err != nil {
		r.fail(fmt.Errorf("report: figure %q: %w", caption, err))
		return
	}
	r.FigureBytes(caption, format, data)
}

type tocEntry struct {
	ID, Text string
}

type page struct {
	Title  string
	CSS    template.CSS
	TOC    []tocEntry
	Blocks []block
}

// Render returns the HTML document, or the first error recorded while
// building it.
func (r *Report) Render() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	pg := page{Title: r.title, CSS: template.CSS(styleSheet), Blocks: r.blocks}
	if r.heads >= 2 {
		for _, b := range r.blocks {
			if b.Kind == "h2" {
				pg.TOC = append(pg.TOC, tocEntry{ID: b.ID, Text: b.Text})
			}
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, pg); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteTo writes the HTML document to w.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	data, err := r.Render()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}

// WriteFile writes the HTML document to path. It writes a temporary file
// beside path and renames it, so a reader never sees half a report.
func (r *Report) WriteFile(path string) (err error) {
	data, err := r.Render()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
