package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cclab/cclab/analysis/sweep"
)

// WriteAggregate prints mean ± 95% CI of the key metrics per combination.
func WriteAggregate(w io.Writer, m *sweep.Manifest, rs *sweep.Rows) {
	rows := rs.Sorted()
	agg := sweep.Aggregate(m, rows, sweep.Columns(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "combination\truns\t")
	for _, sm := range SummaryMetrics {
		fmt.Fprint(tw, sm.Header+"\t")
	}
	fmt.Fprintln(tw)
	for _, cs := range agg {
		fmt.Fprintf(tw, "%s\t%d\t", cs.Label(), cs.Runs)
		for _, sm := range SummaryMetrics {
			st, _ := cs.Stat(sm.Metric)
			fmt.Fprint(tw, MeanCIOf(st).String()+"\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "(mean ± 95% confidence half-width over runs; FCT over flows that finished)")
}
