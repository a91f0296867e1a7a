package experiment

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// WriteText writes the run as the tables cclab run prints.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "scenario %s  seed %d  simulated %.3f s in %.3f s wall (%d events, %.1f M events/s)\n\n",
		r.Scenario, r.Seed, r.SimSeconds, r.WallSeconds, r.Events, float64(r.Events)/max(r.WallSeconds, 1e-9)/1e6)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flow\tcc\tdelivered\tgoodput Mbit/s\tFCT s\tretx\tRTOs\tRTT mean ms\tRTT p95 ms\tRTT max ms\tqdelay mean ms\tqdelay p95 ms\tRTI\t")
	for _, f := range r.Flows {
		fct := "-"
		if f.FCT != nil {
			fct = strconv.FormatFloat(*f.FCT, 'f', 3, 64)
		}
		rti := "-"
		if f.RTI != nil {
			rti = strconv.FormatFloat(*f.RTI, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			f.Name, f.CC, HumanBytes(f.BytesDelivered), f2(f.GoodputMbps), fct, f.Retransmissions, f.RTOs,
			f2(f.RTTMeanMs), f2(f.RTTP95Ms), f2(f.RTTMaxMs), f2(f.QdelayMeanMs), f2(f.QdelayP95Ms), rti)
	}
	tw.Flush()
	if len(r.Background) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "background\toffered Mbit/s\tsent Mbit/s\tdelivered Mbit/s\tcapacity share\tflows\tdrops\t")
		for _, b := range r.Background {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%d\t%d\t\n", b.Name, f2(b.OfferedMbps), f2(b.SentMbps), f2(b.DeliveredMbps), 100*b.CapacityShare, b.Flows, b.Drops)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	for _, l := range r.Links {
		fmt.Fprintf(w, "%s: utilisation %.1f%%, %d queue drops, %d random losses, background share %.1f%%\n",
			l.Name, 100*l.Utilization, l.Drops, l.Losses, 100*l.BackgroundShare)
	}
	fmt.Fprintf(w, "Jain's fairness index %.4f", r.Jain)
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
