package deepcc

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the evaluation as the tables cclab deepcc eval prints.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "DeepCC evaluation: %d runs of %.0f s per held-out trace (one-way delay %.0f ms, %d-packet DropTail queue)\npolicy: %s, %d steps, %.0f s of training\n",
		r.Runs, r.Duration, r.DelayMs, r.Queue, r.Policy, r.PolicySteps, r.TrainingWallS)
	for _, t := range r.Traces {
		fmt.Fprintf(w, "\n%s (mean capacity %.2f Mbit/s over the runs)\n", t.Name, t.CapacityMbps)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scheme\tgoal\tthroughput Mbit/s\tp95 qdelay ms\tmean qdelay ms\tloss %\t")
		for _, s := range t.Schemes {
			g := ""
			if s.Goal != nil {
				g = s.Goal.String()
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f ±%.2f\t%.1f ±%.1f\t%.1f\t%.2f\t\n", s.Scheme, g, s.ThroughputMbps, s.ThroughputCI, s.DelayP95Ms, s.DelayP95CI, s.DelayMeanMs, 100*s.Loss)
		}
		tw.Flush()
		if c := t.HighThroughput; c != nil {
			fmt.Fprintf(w, "high-throughput mode (%s) vs CUBIC: %.2fx throughput, %.0f%% lower p95 queueing delay\n", c.Goal, c.ThroughputRatio, 100*c.DelayReduction)
		}
		if c := t.Comparable; c != nil {
			fmt.Fprintf(w, "lowest delay at >= %.0f%% of CUBIC's throughput: %s, %.2fx throughput, %.0f%% lower p95 queueing delay\n", 100*ComparableShare, c.Goal, c.ThroughputRatio, 100*c.DelayReduction)
		}
	}
	if len(r.TCR) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTarget completion ratio (targets per trace: throughput >= %v x mean capacity, p95 queueing delay <= %v ms, loss <= %.0f%%; %d runs each)\n",
		TargetThroughputShares, TargetDelaysMs, 100*TargetLoss, r.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "scheme\t")
	for _, t := range r.Traces {
		fmt.Fprintf(tw, "%s\t", t.Name)
	}
	fmt.Fprintln(tw, "all\t")
	for i, s := range r.TCR {
		fmt.Fprintf(tw, "%s\t", s.Scheme)
		for _, t := range r.Traces {
			fmt.Fprintf(tw, "%s\t", t.TCR[i].Completion)
		}
		fmt.Fprintf(tw, "%s\t\n", s.Completion)
	}
	fmt.Fprint(tw, "(met by any scheme)\t")
	for _, t := range r.Traces {
		fmt.Fprintf(tw, "%s\t", t.Reachable)
	}
	fmt.Fprintf(tw, "%s\t\n", r.Reachable)
	tw.Flush()
}
