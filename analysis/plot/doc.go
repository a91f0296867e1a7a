// Package plot draws the figures cclab puts in reports: time series, stacked
// single-run dashboards, CDFs, grouped bar charts with confidence intervals,
// scatter plots (including the Pantheon-style throughput versus delay plot),
// Pareto fronts, model-versus-simulation plots and learning curves.
//
// Every figure is a plain struct of slices and small structs, so callers do
// not depend on gonum/plot or on other cclab packages. A figure is written
// with Save (format chosen by the file extension, .png or .svg) or encoded in
// memory with Render.
//
// All figures share one look: Okabe-Ito colours (safe for the common forms of
// colour blindness), a distinct dash pattern or marker per series so the
// figure still reads in greyscale, a light grid, and the legend outside the
// data area on the right so it never hides data.
//
// Input handling is the same everywhere: NaN and ±Inf values are skipped
// (a line is broken where a point was skipped, so gaps stay visible), as are
// non-positive values on a logarithmic axis. A series with no drawable point
// keeps its legend entry, marked "(no data)"; a panel with no data at all
// says so in its centre. An axis whose data are all equal is widened so it
// never has zero height. Long titles and labels are wrapped or shortened
// with "…" to fit. Structural mistakes (x and y slices of different lengths,
// a bar table of the wrong shape, a negative error bar, an unsupported file
// extension) are reported as errors, never as panics.
//
// Output is deterministic: the same figure gives byte-identical PNG and SVG
// files.
package plot
