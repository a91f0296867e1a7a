package tcpnc

import (
	"context"
	"fmt"
	"time"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/internal/par"
)

// segmentBits is one 1448-byte segment of payload in bits.
const segmentBits = 1448 * 8

// WindowRow is one scheme at one erasure probability of the
// window-versus-throughput study (the slides' "TCP's window size is larger
// compared to its actual throughput; TCP sender is waiting for ACKs").
type WindowRow struct {
	P      float64 `json:"p"`
	Scheme string  `json:"scheme"` // "tcp" or "tcpnc"
	R      float64 `json:"R,omitempty"`
	// CwndPackets is the mean window TCP sends with, min(cwnd, the
	// receiver's 20-packet window), time average of 100 ms samples,
	// packets.
	CwndPackets float64 `json:"cwnd_packets"`
	// ThroughputMbps is the goodput; RTTMs the mean RTT.
	ThroughputMbps float64 `json:"throughput_mbps"`
	RTTMs          float64 `json:"rtt_mean_ms"`
	// UsedPackets is the window the goodput actually used, throughput x
	// mean RTT in packets; Efficiency is UsedPackets / CwndPackets.
	UsedPackets float64 `json:"used_packets"`
	Efficiency  float64 `json:"efficiency"`
}

// WindowStudy runs TCP and TCP/NC (R = WellChosenR(p)) at each erasure
// probability [cfg.Losses], cfg.Seeds runs each, and reports the mean
// window next to the window the throughput used.
func WindowStudy(ctx context.Context, cfg Config) ([]WindowRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	type job struct {
		li   int
		nc   bool
		seed int
	}
	var jobs []job
	for li := range cfg.Losses {
		for _, nc := range []bool{false, true} {
			for seed := 1; seed <= cfg.Seeds; seed++ {
				jobs = append(jobs, job{li, nc, seed})
			}
		}
	}
	type out struct{ cwnd, thr, rtt float64 }
	res := make([]out, len(jobs))
	errs := make([]error, len(jobs))
	err := par.Do(ctx, len(jobs), cfg.Jobs, cfg.Progress, func(_, i int) {
		j := jobs[i]
		p := cfg.Losses[j.li]
		r := 0.0
		if j.nc {
			r = WellChosenR(p)
		}
		s, err := cfg.scenario("nc-window", cfg.Rate, 1, p, r, j.seed)
		if err != nil {
			errs[i] = err
			return
		}
		s.Sample = scenario.Dur(100 * time.Millisecond)
		sum, n, err := experiment.Run(ctx, s)
		if err != nil {
			errs[i] = err
			return
		}
		fs := n.Series.Flows[0]
		var c float64
		for _, w := range fs.CwndBytes {
			// The window TCP sends with: the congestion window, capped
			// by the receiver's (ns-2's window_).
			c += min(float64(w)/1448, float64(cfg.Window))
		}
		if len(fs.CwndBytes) > 0 {
			c /= float64(len(fs.CwndBytes))
		}
		f := sum.Flows[0]
		res[i] = out{c, f.GoodputMbps, f.RTTMeanMs}
	})
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	var rows []WindowRow
	for li, p := range cfg.Losses {
		for k, nc := range []bool{false, true} {
			var c, thr, rtt []float64
			for s := range cfg.Seeds {
				o := res[(li*2+k)*cfg.Seeds+s]
				c, thr, rtt = append(c, o.cwnd), append(thr, o.thr), append(rtt, o.rtt)
			}
			row := WindowRow{P: p, Scheme: "tcp", CwndPackets: metrics.Summarize(c).Mean, ThroughputMbps: metrics.Summarize(thr).Mean, RTTMs: metrics.Summarize(rtt).Mean}
			if nc {
				row.Scheme, row.R = "tcpnc", WellChosenR(p)
			}
			row.UsedPackets = row.ThroughputMbps * 1e6 * row.RTTMs / 1e3 / segmentBits
			if row.CwndPackets > 0 {
				row.Efficiency = row.UsedPackets / row.CwndPackets
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// SharingSeries is the sharing experiment's throughput over time: two
// TCP/NC flows on cfg.SharedRate at cfg.SweepLoss with R = cfg.SharedR.
type SharingSeries struct {
	CapacityMbps float64     `json:"capacity_mbps"`
	P            float64     `json:"p"`
	R            float64     `json:"R"`
	T            []float64   `json:"t_s"`
	Mbps         [][]float64 `json:"mbps"` // per flow, per interval
	Names        []string    `json:"names"`
	MeanMbps     []float64   `json:"mean_mbps"`
	Jain         float64     `json:"jain"`
}

// SharingOverTime runs one seed of the sharing experiment and returns each flow's
// delivery rate per interval.
func SharingOverTime(cfg Config, seed int, interval time.Duration) (*SharingSeries, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, fmt.Errorf("tcpnc: sample interval %v must be positive", interval)
	}
	s, err := cfg.scenario("nc-share", cfg.SharedRate, 2, cfg.SweepLoss, cfg.SharedR, seed)
	if err != nil {
		return nil, err
	}
	s.Sample = scenario.Dur(interval)
	sum, n, err := experiment.Run(context.Background(), s)
	if err != nil {
		return nil, err
	}
	out := &SharingSeries{CapacityMbps: cfg.SharedRate.Mbps(), P: cfg.SweepLoss, R: cfg.SharedR, Jain: sum.JainOrZero()}
	for _, t := range n.Series.T {
		out.T = append(out.T, t.Seconds())
	}
	for i := range n.Flows {
		fs := n.Series.Flows[i]
		row := make([]float64, len(out.T))
		copy(row[fs.Offset:], fs.Mbps)
		out.Mbps = append(out.Mbps, row)
		out.Names = append(out.Names, fmt.Sprintf("NC%d", i))
		out.MeanMbps = append(out.MeanMbps, sum.Flows[i].GoodputMbps)
	}
	return out, nil
}
