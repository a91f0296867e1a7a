package tcpnc

import (
	"context"
	"math"
	"testing"
	"time"

	_ "github.com/cclab/cclab/cc/all"
)

// TestStudyReproducesSlides runs a reduced study (shorter runs, fewer seeds
// and points) and checks the slides' findings.
func TestStudyReproducesSlides(t *testing.T) {
	cfg := Config{
		Duration:     120 * time.Second,
		Seeds:        3,
		Losses:       []float64{0.01, 0.05, 0.0963, 0.2},
		Redundancies: []float64{1.0, 1.04, 1.08, 1.1, 1.11, 1.12, 1.13, 1.15, 1.2, 1.3},
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// TCP collapses super-linearly with p; TCP/NC degrades about in
	// proportion to 1-p.
	first, last := res.LossSweep[0], res.LossSweep[len(res.LossSweep)-1]
	linear := (1 - last.P) / (1 - first.P)
	tcpKeeps, ncKeeps := last.TCP/first.TCP, last.TCPNC/first.TCPNC
	if tcpKeeps > 0.6*linear {
		t.Errorf("TCP keeps %.2f of its rate from p=%g to p=%g; want far below proportional (%.2f)", tcpKeeps, first.P, last.P, linear)
	}
	if math.Abs(ncKeeps-linear) > 0.15 {
		t.Errorf("TCP/NC keeps %.2f of its rate from p=%g to p=%g; want about proportional (%.2f)", ncKeeps, first.P, last.P, linear)
	}
	// TCP/NC is above TCP wherever TCP loses more than the redundancy
	// costs. At p=0.01 TCP with Linux's loss recovery (RACK, TLP, Linux's
	// RTO) stays within 3% of the link, so TCP/NC, which spends 1/R of the
	// link on payload, may be below it by that overhead (and 1% more); the
	// old RFC 6298 RTO gave TCP spurious timeouts that put it below.
	for _, row := range res.LossSweep {
		floor := row.TCP
		if row.P <= 0.01 {
			floor = 0.99 * row.TCP / row.R
		}
		if row.TCPNC < floor {
			t.Errorf("p=%g: TCP/NC %.3f below TCP %.3f Mbit/s (floor %.3f)", row.P, row.TCPNC, row.TCP, floor)
		}
	}
	// The knee within 0.03 of 1/(1-p).
	if d := math.Abs(res.KneeR - res.OptimalR); d > 0.03 {
		t.Errorf("knee at R=%.2f, 1/(1-p)=%.3f: off by %.3f, want within 0.03", res.KneeR, res.OptimalR, d)
	}
	// Too much redundancy wastes capacity: R=1.3 below the best.
	best := 0.0
	for _, r := range res.RedundancySweep {
		best = max(best, r.TCPNC)
	}
	if lastR := res.RedundancySweep[len(res.RedundancySweep)-1]; lastR.TCPNC > 0.97*best {
		t.Errorf("R=%.2f keeps %.3f of the best %.3f Mbit/s; want the waste visible", lastR.R, lastR.TCPNC, best)
	}
	// Two flows share 0.9 Mbit/s fairly, about 0.37 Mbit/s each.
	sh := res.Sharing
	if sh.Jain < 0.95 {
		t.Errorf("Jain's index %.3f, want above 0.95", sh.Jain)
	}
	for _, f := range sh.Flows {
		if f.Mbps < 0.3 || f.Mbps > 0.43 {
			t.Errorf("%s gets %.3f Mbit/s, want about 0.37", f.Name, f.Mbps)
		}
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{{Seeds: -1}, {SweepLoss: 1.5}, {SharedR: 0.5}, {Losses: []float64{-0.1}}, {Redundancies: []float64{0.9}}} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}
