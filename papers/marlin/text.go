package marlin

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// rowHeader and rowStrings are a table of rows, as the text output and
// report.html show it.
var rowHeader = []string{"scheme", "UHF loss", "transfer time s", "retransmissions", "RTI", "unfinished"}

func rowStrings(x Row) []string {
	return []string{string(x.Scheme), fmt.Sprintf("%.0f%%", 100*x.Loss), fmt.Sprintf("%.2f ±%.2f", x.TransferTime, x.TransferTimeCI),
		fmt.Sprintf("%.1f ±%.1f", x.Retrans, x.RetransCI), rti(x), fmt.Sprint(x.Unfinished)}
}

// rti formats a row's RTI, "-" where it is undefined (no link switch).
func rti(x Row) string {
	if math.IsNaN(x.RTI) {
		return "-"
	}
	return fmt.Sprintf("%.3f ±%.3f", x.RTI, x.RTICI)
}

// ratio formats a goal's ratio, "undefined" where the baseline's figure
// is zero.
func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "undefined"
	}
	return fmt.Sprintf("%.2f", v)
}

// WriteText writes the evaluation as the tables cclab marlin eval prints.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "MARLIN evaluation: %d transfers of %s per scheme and loss level; policy %s (%d steps, %.0f s of training)\n", r.Runs, r.Bytes, r.Policy, r.PolicySteps, r.TrainingWallS)
	if r.Timeline != "" {
		fmt.Fprintf(w, "Each loss level's runs on a timeline of their own, drawn from: %s (every scheme on the same draws)\n", r.Timeline)
	}
	fmt.Fprintln(w)
	table := func(rows []Row) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(rowHeader, "\t")+"\t")
		for _, x := range rows {
			fmt.Fprintln(tw, strings.Join(rowStrings(x), "\t")+"\t")
		}
		tw.Flush()
	}
	table(r.Results)
	if g := r.Goals; g != nil {
		fmt.Fprintf(w, "\nAt 3%%: MARLIN/CUBIC transfer time %s (goal <= 0.70, paper 0.87), retransmissions %s (goal <= 0.20, paper 0.23), MARLIN/Mockets time %s (goal <= 1.4); lowest RTI at every loss level: %v\n",
			ratio(g.TimeVsCubic), ratio(g.RetransVsCubic), ratio(g.TimeVsMockets), g.LowestRTI)
		if len(g.DominatedBy) > 0 {
			fmt.Fprintf(w, "Baselines both faster and with fewer retransmissions than MARLIN: %s\n", strings.Join(g.DominatedBy, ", "))
		}
	}
	for _, u := range r.Unseen {
		kind := "Unseen"
		if u.HeldOut {
			kind = "Held-out"
		}
		fmt.Fprintf(w, "\n%s condition: %s\n", kind, u.Name)
		table(u.Results)
	}
}
