package vegas

import (
	"fmt"
	"io"
	"strings"

	"github.com/cclab/cclab/analysis/tune"
)

// alphaBeta returns a point's alpha and beta whichever controller they
// were tuned on: the parameters are named after it (vegas.alpha,
// vegas_ns3.alpha; Spec renames them).
func alphaBeta(p *tune.PointJSON) (alpha, beta float64) {
	for k, v := range p.Params {
		switch {
		case strings.HasSuffix(k, ".alpha"):
			alpha = v
		case strings.HasSuffix(k, ".beta"):
			beta = v
		}
	}
	return alpha, beta
}

// WriteText writes the goal's verdict for a trace mode.
func (g Goal) WriteText(w io.Writer, mode string) {
	verdict := "NOT MET"
	if g.Met {
		verdict = "MET"
	}
	fmt.Fprintf(w, "goal (%s mode): a Pareto point with >= %.2f Mbit/s more held-out goodput than the default at no more mean queueing delay: %s\n", mode, g.GainWanted, verdict)
	if g.Best != nil {
		a, b := alphaBeta(g.Best)
		fmt.Fprintf(w, "  best at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s, mean queueing delay %+.3f ms\n",
			a, b, *g.GainMbps, *g.QdelayDiffMs)
	} else {
		fmt.Fprintln(w, "  no Pareto point has less or equal held-out mean queueing delay than the default")
	}
	fmt.Fprintf(w, "  largest held-out goodput gain at any delay: %+.3f Mbit/s; points meeting the paper's criterion (> 4 Mbit/s, < 60 ms): %d\n", g.MaxGainMbps, g.Paper)
}

// WriteText writes the exhaustive check's findings.
func (g *Grid) WriteText(w io.Writer) {
	fmt.Fprintf(w, "  exhaustive check (%d points, %d more simulations, %.0f s): the tuned Pareto set has %.1f%% of the true training front's hypervolume (%d points)\n",
		g.Points, g.Simulations, g.WallSeconds, 100*g.HypervolumeRatio, g.TrainFront)
	if g.FrontBest != nil {
		a, b := alphaBeta(g.FrontBest)
		fmt.Fprintf(w, "  best point of the true training front on the held-out pieces at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s\n",
			a, b, *g.FrontGain)
	}
	if g.OracleBest != nil {
		a, b := alphaBeta(g.OracleBest)
		fmt.Fprintf(w, "  best of all points chosen on the held-out pieces themselves at no more delay: alpha=%g beta=%g, goodput %+.3f Mbit/s\n",
			a, b, *g.OracleGain)
	}
	fmt.Fprintf(w, "  largest held-out goodput gain of any point at any delay: %+.3f Mbit/s\n", g.MaxGain)
}
