package tcpnc

import (
	"context"
	"fmt"
	"math"

	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/metrics"
	"github.com/cclab/cclab/internal/par"
)

// HopsRow is one per-hop erasure probability q of the multi-hop
// experiment: a daisy chain of Hops lossy links after the bottleneck, with
// end-to-end coding (no re-encoding at the intermediate nodes, the
// slides' focus), so the end-to-end erasure probability is
// p = 1 - (1-q)^Hops.
type HopsRow struct {
	Q    float64 `json:"q"`
	Hops int     `json:"hops"`
	// P is 1-(1-q)^Hops; MeasuredP the share of the TCP/NC runs' packets
	// erased on the chain.
	P         float64 `json:"p_model"`
	MeasuredP float64 `json:"p_measured"`
	R         float64 `json:"R"`
	// TCP and TCPNC are the goodputs over the chain; TCP1 and TCPNC1 over
	// one hop with erasure probability P (the model's reduction), Mbit/s.
	TCP    float64 `json:"tcp_mbps"`
	TCP1   float64 `json:"tcp_one_hop_mbps"`
	TCPNC  float64 `json:"tcpnc_mbps"`
	TCPNC1 float64 `json:"tcpnc_one_hop_mbps"`
}

// DefaultHopLosses are per-hop erasure probabilities whose 4-hop
// end-to-end loss spans the loss sweep (about 2-23%).
var DefaultHopLosses = []float64{0.005, 0.01, 0.02, 0.03, 0.05}

// HopsStudy runs TCP and TCP/NC (R = WellChosenR(p)) over hops lossy hops
// in series with per-hop erasure q, and over one hop with the end-to-end
// p, cfg.Seeds runs each.
func HopsStudy(ctx context.Context, cfg Config, qs []float64, hops int) ([]HopsRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hops < 1 || hops > 64 {
		return nil, fmt.Errorf("tcpnc: %d hops, want 1 to 64", hops)
	}
	if len(qs) == 0 {
		qs = DefaultHopLosses
	}
	for _, q := range qs {
		if !(q >= 0 && q < 1) {
			return nil, fmt.Errorf("tcpnc: per-hop loss %g must be in [0, 1)", q)
		}
	}
	// Per q: (chain, one hop) x (tcp, tcpnc) x seeds.
	type job struct{ qi, kind, seed int }
	var jobs []job
	for qi := range qs {
		for kind := range 4 {
			for seed := 1; seed <= cfg.Seeds; seed++ {
				jobs = append(jobs, job{qi, kind, seed})
			}
		}
	}
	type out struct{ goodput, lossRate float64 }
	res := make([]out, len(jobs))
	errs := make([]error, len(jobs))
	err := par.Do(ctx, len(jobs), cfg.Jobs, cfg.Progress, func(_, i int) {
		j := jobs[i]
		q := qs[j.qi]
		p := 1 - math.Pow(1-q, float64(hops))
		chain, nc := j.kind%2 == 0, j.kind >= 2
		loss, r := p, 0.0
		if chain {
			loss = q
		}
		if nc {
			r = WellChosenR(p)
		}
		s, err := cfg.scenario("nc-hops", cfg.Rate, 1, loss, r, j.seed)
		if err != nil {
			errs[i] = err
			return
		}
		if chain && loss > 0 {
			s.Flows[0].LossHops = hops
		}
		sum, n, err := experiment.Run(ctx, s)
		if err != nil {
			errs[i] = err
			return
		}
		f := n.Flows[0]
		res[i].goodput = sum.Flows[0].GoodputMbps
		if sent := f.Sender.Stats().SegmentsSent; f.Coding == nil && sent > 0 {
			res[i].lossRate = float64(f.LastHopLosses) / float64(sent)
		} else if f.Coding != nil && f.Coding.Coded > 0 {
			res[i].lossRate = float64(f.LastHopLosses) / float64(f.Coding.Coded)
		}
	})
	if err != nil {
		return nil, err
	}
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	var rows []HopsRow
	for qi, q := range qs {
		p := 1 - math.Pow(1-q, float64(hops))
		mean := func(kind int, loss bool) float64 {
			var x []float64
			for s := range cfg.Seeds {
				o := res[(qi*4+kind)*cfg.Seeds+s]
				if loss {
					x = append(x, o.lossRate)
				} else {
					x = append(x, o.goodput)
				}
			}
			return metrics.Summarize(x).Mean
		}
		rows = append(rows, HopsRow{Q: q, Hops: hops, P: p, MeasuredP: mean(2, true), R: WellChosenR(p),
			TCP: mean(0, false), TCP1: mean(1, false), TCPNC: mean(2, false), TCPNC1: mean(3, false)})
	}
	return rows, nil
}
