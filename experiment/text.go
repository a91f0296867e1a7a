package experiment

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// maxTableFlows bounds the flow rows of the table: 100,000 flows printed
// 100,000 rows.
const maxTableFlows = 50

// WriteText writes the run as the tables cclab run prints.
func (r *Result) WriteText(w io.Writer) {
	r.WriteTextHeaded(w, fmt.Sprintf("scenario %s  seed %d  simulated %.3f s in %.3f s wall (%d events, %.1f M events/s)",
		r.Scenario, r.Seed, r.SimSeconds, r.WallSeconds, r.Events, float64(r.Events)/max(r.WallSeconds, 1e-9)/1e6))
}

// WriteTextHeaded writes the run's tables under header, the first line,
// which says how the run was made (the emulator's: emulated in real time,
// where the simulator's counts its events).
func (r *Result) WriteTextHeaded(w io.Writer, header string) {
	fmt.Fprintf(w, "%s\n\n", header)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flow\tcc\tdelivered\tgoodput Mbit/s\tFCT s\tretx\tRTOs\tRTT mean ms\tRTT p95 ms\tRTT max ms\tqdelay mean ms\tqdelay p95 ms\tRTI\t")
	more := 0
	for i, f := range r.Flows {
		if i == maxTableFlows && len(r.Flows) > maxTableFlows+1 {
			more = len(r.Flows) - i
			break
		}
		fct := "-"
		if f.FCT != nil {
			fct = strconv.FormatFloat(*f.FCT, 'f', 3, 64)
		}
		rti := "-"
		if f.RTI != nil {
			rti = strconv.FormatFloat(*f.RTI, 'f', 3, 64)
		}
		// An RTT never measured (no ACK arrived) is "-", not 0.00.
		ms := f2
		if f.RTTMaxMs == 0 {
			ms = func(float64) string { return "-" }
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			f.Name, f.CC, HumanBytes(f.BytesDelivered), f2(f.GoodputMbps), fct, f.Retransmissions, f.RTOs,
			ms(f.RTTMeanMs), ms(f.RTTP95Ms), ms(f.RTTMaxMs), ms(f.QdelayMeanMs), ms(f.QdelayP95Ms), rti)
	}
	tw.Flush()
	// After the table, not in it: as a cell it set the flow column's width.
	if more > 0 {
		fmt.Fprintf(w, "(%d more flows: see --json or --out)\n", more)
	}
	if len(r.Background) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "background\toffered Mbit/s\tsent Mbit/s\tdelivered Mbit/s\tcapacity share\tflows\tdrops\t")
		for _, b := range r.Background {
			offered := f2(b.OfferedMbps)
			if b.OfferedMbps == 0 && b.Flows > 0 {
				offered = "-" // a tcp entry offers what its controller allows
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%d\t%d\t\n", b.Name, offered, f2(b.SentMbps), f2(b.DeliveredMbps), 100*b.CapacityShare, b.Flows, b.Drops)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	for _, l := range r.Links {
		marks := ""
		if l.Marks != nil {
			marks = fmt.Sprintf(", %d ECN marks", *l.Marks)
		}
		fmt.Fprintf(w, "%s: utilisation %.1f%%, %d queue drops%s, %d random losses, background share %.1f%%\n",
			l.Name, 100*l.Utilization, l.Drops, marks, l.Losses, 100*l.BackgroundShare)
	}
	var ecn []string
	for _, f := range r.Flows {
		if f.ECNReductions != nil {
			ecn = append(ecn, fmt.Sprintf("%s %d", f.Name, *f.ECNReductions))
		}
	}
	switch total, _ := r.ECNReductions(); {
	case len(ecn) > maxTableFlows:
		fmt.Fprintf(w, "ECN window reductions: %d over %d flows\n", total, len(ecn))
	case len(ecn) > 0:
		fmt.Fprintf(w, "ECN window reductions: %s\n", strings.Join(ecn, ", "))
	}
	if r.Jain != nil {
		fmt.Fprintf(w, "Jain's fairness index %.4f", *r.Jain)
	} else {
		fmt.Fprint(w, "Jain's fairness index - (no flow delivered)")
	}
	if r.RTI != nil {
		fmt.Fprintf(w, "   RTT Transition Impact %.4f", *r.RTI)
	}
	fmt.Fprintln(w)
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// HumanBytes formats a byte count for tables: bytes, KB or MB.
func HumanBytes(b int64) string {
	switch {
	case b >= 10_000_000:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 10_000:
		return fmt.Sprintf("%.1f KB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}
