package tcpnc

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/analysis/report"
)

// The secondary studies' outputs live here rather than in the command so
// that `cclab nc window|sharing|hops` only parse flags, and the tables and
// figures of docs/tcpnc.md come from one place.

// saveStudy writes name.json and the figure as name.png and name.svg to
// dir, creating it.
func saveStudy(dir, name string, v any, fig plot.TimeSeries) error {
	if err := report.WriteJSON(filepath.Join(dir, name+".json"), v); err != nil {
		return err
	}
	_, err := plot.SaveAll(fig, filepath.Join(dir, name), "png", "svg")
	return err
}

// SaveWindow writes window.json and the window-against-throughput figure
// (window.png, window.svg) to dir.
func SaveWindow(dir string, rows []WindowRow) error {
	var series []plot.Series
	for _, sc := range []string{"tcp", "tcpnc"} {
		w := plot.Series{Name: sc + " mean window"}
		u := plot.Series{Name: sc + " window used (throughput x RTT)"}
		for _, r := range rows {
			if r.Scheme == sc {
				w.X, w.Y = append(w.X, r.P), append(w.Y, r.CwndPackets)
				u.X, u.Y = append(u.X, r.P), append(u.Y, r.UsedPackets)
			}
		}
		series = append(series, w, u)
	}
	fig := plot.TimeSeries{Title: "TCP and TCP/NC: window against the window the throughput used", X: plot.Axis{Label: "erasure probability p"},
		Y: plot.Axis{Label: "packets", IncludeZero: true}, Series: series, Markers: true}
	return saveStudy(dir, "window", rows, fig)
}

// WriteWindowText writes the window study's table as `cclab nc window`
// prints it; cfg is the configuration the rows were run with.
func WriteWindowText(w io.Writer, rows []WindowRow, cfg Config) {
	fmt.Fprintf(w, "Window against throughput: 0.5 Mbit/s, 50 ms one-way, 20-packet window%s, %d runs of %v per point\n", SACKNote(cfg.NoSACK), cfg.Seeds, cfg.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "p\tscheme\tR\tmean cwnd pkts\tthroughput Mbit/s\tRTT ms\tused pkts\tused/cwnd\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%g\t%s\t%.2f\t%.2f\t%.3f\t%.1f\t%.2f\t%.2f\t\n", r.P, r.Scheme, r.R, r.CwndPackets, r.ThroughputMbps, r.RTTMs, r.UsedPackets, r.Efficiency)
	}
	tw.Flush()
}

// Save writes sharing.json and the throughput-over-time figure
// (sharing.png, sharing.svg) to dir.
func (s *SharingSeries) Save(dir string) error {
	var series []plot.Series
	for i, n := range s.Names {
		series = append(series, plot.Series{Name: n, X: s.T, Y: s.Mbps[i]})
	}
	fig := plot.TimeSeries{Title: fmt.Sprintf("Two TCP/NC flows on %.2f Mbit/s, p = %g, R = %g", s.CapacityMbps, s.P, s.R),
		X: plot.Axis{Label: "time (s)"}, Y: plot.Axis{Label: "throughput (Mbit/s)", IncludeZero: true}, Series: series}
	return saveStudy(dir, "sharing", s, fig)
}

// WriteText writes the sharing run's one-line summary as `cclab nc
// sharing` prints it.
func (s *SharingSeries) WriteText(w io.Writer, seed int, dur time.Duration) {
	fmt.Fprintf(w, "Two TCP/NC flows on %.2f Mbit/s at p = %g, R = %g, seed %d, %v: ", s.CapacityMbps, s.P, s.R, seed, dur)
	for i, n := range s.Names {
		fmt.Fprintf(w, "%s %.3f Mbit/s, ", n, s.MeanMbps[i])
	}
	fmt.Fprintf(w, "Jain %.4f\n", s.Jain)
}

// SaveHops writes hops.json and the goodput-over-a-chain figure (hops.png,
// hops.svg) to dir; hops is the chain's length the rows were run with.
func SaveHops(dir string, rows []HopsRow, hops int) error {
	names := []string{"TCP, chain", "TCP, one hop at p", "TCP/NC, chain", "TCP/NC, one hop at p"}
	series := make([]plot.Series, len(names))
	for i := range series {
		series[i].Name = names[i]
	}
	for _, r := range rows {
		for i, v := range []float64{r.TCP, r.TCP1, r.TCPNC, r.TCPNC1} {
			series[i].X, series[i].Y = append(series[i].X, r.P), append(series[i].Y, v)
		}
	}
	fig := plot.TimeSeries{Title: fmt.Sprintf("TCP and TCP/NC over %d lossy hops (end-to-end p = 1-(1-q)^%d)", hops, hops),
		X: plot.Axis{Label: "end-to-end erasure probability p"}, Y: plot.Axis{Label: "goodput (Mbit/s)", IncludeZero: true}, Series: series, Markers: true}
	return saveStudy(dir, "hops", rows, fig)
}

// WriteHopsText writes the chain study's table as `cclab nc hops` prints
// it; cfg and hops are what the rows were run with.
func WriteHopsText(w io.Writer, rows []HopsRow, cfg Config, hops int) {
	fmt.Fprintf(w, "TCP and TCP/NC over %d lossy hops in series (no re-encoding)%s, %d runs of %v per point; Mbit/s\n", hops, SACKNote(cfg.NoSACK), cfg.Seeds, cfg.Duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "q\tp = 1-(1-q)^n\tp measured\tR\tTCP chain\tTCP 1 hop\tTCP/NC chain\tTCP/NC 1 hop\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%g\t%.4f\t%.4f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", r.Q, r.P, r.MeasuredP, r.R, r.TCP, r.TCP1, r.TCPNC, r.TCPNC1)
	}
	tw.Flush()
}
