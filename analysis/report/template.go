package report

import "html/template"

// The markup is kept XHTML-compatible (void elements self-closed, no named
// entities, no ">" or "&" in the style sheet) so tests can check it is
// well-formed with encoding/xml.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{- if .TOC}}
<nav>
<h2>Contents</h2>
<ol>
{{- range .TOC}}
<li><a href="#{{.ID}}">{{.Text}}</a></li>
{{- end}}
</ol>
</nav>
{{- end}}
{{- range .Blocks}}
{{- if eq .Kind "h2"}}
<h2 id="{{.ID}}">{{.Text}}</h2>
{{- else if eq .Kind "h3"}}
<h3>{{.Text}}</h3>
{{- else if eq .Kind "p"}}
<p>{{.Text}}</p>
{{- else if eq .Kind "pre"}}
<pre>{{.Text}}</pre>
{{- else if eq .Kind "ul"}}
<ul>
{{- range .Items}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- else if eq .Kind "table"}}
<table id="table-{{.Number}}">
<caption>Table {{.Number}}. {{.Caption}}</caption>
<thead>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
</thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Numeric}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- else}}
<tr><td colspan="{{.Cols}}" class="empty">no rows</td></tr>
{{- end}}
</tbody>
</table>
{{- else if eq .Kind "figure"}}
<figure id="figure-{{.Number}}">
<img {{.Src}} alt="{{.Caption}}" />
<figcaption>Figure {{.Number}}. {{.Caption}}</figcaption>
</figure>
{{- end}}
{{- end}}
</body>
</html>
`))

const styleSheet = `
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; line-height: 1.5;
  color: #222; background: #fff; max-width: 62rem; margin: 2rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.8rem; margin-bottom: 0.5rem; }
h2 { font-size: 1.35rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin-top: 1.6rem; }
nav ol { padding-left: 1.5rem; }
nav h2 { border: none; margin-top: 1rem; }
pre { background: #f5f5f5; padding: 0.6rem 0.8rem; overflow-x: auto; font-size: 0.9rem; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.92rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.empty { color: #777; font-style: italic; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.92rem; color: #444; margin-top: 0.3rem; }
`
