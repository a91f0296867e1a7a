package tcpnc

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the study as the tables cclab nc study prints.
func (r *Result) WriteText(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "TCP/NC study: %v bottleneck, %v one-way, %d-packet queue, %s%s with a %d-packet window; erasures on the last hop; %d runs of %v per point (%d runs, %.1f s)\n\n",
		c.Rate, c.Delay, c.Queue, c.CC, SACKNote(c.NoSACK), c.Window, c.Seeds, c.Duration, r.Runs, r.WallSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tTCP Mbit/s\tPadhye\tMathis\tR\tTCP/NC Mbit/s\tTCP/NC model\t")
	for _, x := range r.LossSweep {
		fmt.Fprintf(tw, "%.4g\t%.3f ±%.3f\t%.3f\t%.3f\t%.2f\t%.3f ±%.3f\t%.3f\t\n", x.P, x.TCP, x.TCPCI, x.Padhye, x.Mathis, x.R, x.TCPNC, x.TCPNCCI, x.ModelTCPNC)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRedundancy sweep at p = %.4g (1/(1-p) = %.3f): knee at R = %.2f\n", c.SweepLoss, r.OptimalR, r.KneeR)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "R\tTCP/NC Mbit/s\tmodel\t")
	for _, x := range r.RedundancySweep {
		fmt.Fprintf(tw, "%.2f\t%.3f ±%.3f\t%.3f\t\n", x.R, x.TCPNC, x.TCPNCCI, x.Model)
	}
	tw.Flush()
	s := r.Sharing
	fmt.Fprintf(w, "\nSharing %.2f Mbit/s at p = %.4g, R = %.2f: %s %.3f, %s %.3f Mbit/s, Jain %.4f\n",
		s.CapacityMbps, s.P, s.R, s.Flows[0].Name, s.Flows[0].Mbps, s.Flows[1].Name, s.Flows[1].Mbps, s.Jain)
	fmt.Fprintln(w, "\nModel against simulation over the lossy points (|model-sim|/sim):")
	for _, a := range r.Agreement {
		fmt.Fprintf(w, "  %-7s mean %.1f%%, worst %.1f%% at p = %.4g (%d points)\n", a.Model, 100*a.Mean, 100*a.Max, a.WorstAt, a.Points)
	}
}

// SACKNote names the TCP variant in headings (" (TCP without SACK,
// Reno-style)", or nothing for the default), so a Reno-style run's output
// cannot be mistaken for the SACK default's.
func SACKNote(noSACK bool) string {
	if noSACK {
		return " (TCP without SACK, Reno-style)"
	}
	return ""
}
