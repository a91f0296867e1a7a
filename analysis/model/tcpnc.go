package model

import (
	"math"
)

// The TCP/NC model follows Kim, Médard and Barros (ValueTools 2011,
// arXiv:1008.0420), who build on Padhye et al.'s rounds: in a round TCP
// sends W packets, the coding layer turns them into R·W random linear
// combinations, and each combination that survives the erasure channel
// (probability 1-p) is innovative and acknowledges one newly seen packet
// (Sundararajan et al.). In expectation R(1-p)W acknowledgements per round
// come back:
//
//   - If R(1-p) >= 1 every packet of the round is seen within the round: the
//     erasures are masked, TCP sees no loss, and its window grows by 1/b per
//     round (congestion avoidance with b packets per ACK) up to Wmax. The
//     throughput is the average over rounds of E[W_r]/RTT.
//   - If R(1-p) < 1 a fraction 1-R(1-p) of TCP's packets is not seen in
//     time, and TCP reacts to that shortfall as to loss. We model TCP above
//     the coding layer as Padhye's TCP with the effective loss rate
//     p_eff = 1-R(1-p). This branch is our interpretation: the paper's
//     analysis assumes the redundancy is sufficient; docs/models.md
//     explains the choice.
//
// Redundancy costs capacity: every coded packet occupies the bottleneck, so
// with Capacity C TCP's packet rate is at most C/(8·MSS·R), and R = 1/(1-p)
// is the smallest R that masks the erasures (Kim et al.: "R >= 1/(1-p)
// theoretically optimal").

// roundsTolerance absorbs rounding in R(1-p) when R was computed as
// 1/(1-p), so that the optimal redundancy counts as masking the erasures.
const roundsTolerance = 1e-12

// nc is NCParams resolved after validation.
type nc struct {
	tcp
	r, s, pEff float64 // R, R(1-p), max(0, 1-R(1-p))
	rounds     float64 // number of rounds averaged over; +Inf for steady state
}

func (p NCParams) resolve() (nc, error) {
	t, err := p.TCPParams.resolve()
	if err != nil {
		return nc{}, err
	}
	if !finite(p.R) || p.R < 1 || p.R > 100 {
		return nc{}, paramErr("R", p.R, "[1, 100]", "the redundancy factor: coded packets per packet from TCP")
	}
	if p.Duration < 0 || (p.Duration > 0 && p.Duration < p.RTT) {
		return nc{}, paramErr("Duration", p.Duration, "{0} or [RTT, +inf)", "0 means steady state; otherwise at least one round")
	}
	n := nc{tcp: t, r: p.R, s: p.R * (1 - p.P), rounds: math.Inf(1)}
	// 1-R(1-p) written as Rp-(R-1), which is exactly p when R = 1.
	if pEff := p.R*p.P - (p.R - 1); pEff > roundsTolerance {
		n.pEff = pEff
	}
	if p.Duration > 0 {
		n.rounds = float64(p.Duration / p.RTT) // whole rounds, exact
	}
	return n, nil
}

// NCWindowGrowth returns Kim et al.'s expected growth of TCP's congestion
// window per round over the coding layer, between loss events, in packets
// per round: min(1, R(1-p))/b. Each of the expected R(1-p)W innovative
// combinations of a round acknowledges one packet (at most W), and
// congestion avoidance adds 1/W per acknowledged packet and 1/b per ACK.
func NCWindowGrowth(p NCParams) (float64, error) {
	n, err := p.resolve()
	if err != nil {
		return 0, err
	}
	return math.Min(1, n.s) / n.b, nil
}

// NCWindow returns E[W_r], the expected congestion window in round r >= 1
// when the erasures are masked (R(1-p) >= 1), in packets:
//
//	E[W_r] = min(Wmax, 1 + (r-1)/b)
//
// starting from one packet, without slow start (as in Padhye et al.'s
// rounds). Capacity, if set, caps it at Capacity·RTT/(8·MSS·R). It returns
// a *ParamError if R(1-p) < 1, where losses close the window and no such
// trajectory exists.
func NCWindow(p NCParams, round int) (float64, error) {
	n, err := p.resolve()
	if err != nil {
		return 0, err
	}
	if round < 1 {
		return 0, paramErr("round", round, "[1, +inf)", "rounds are numbered from 1")
	}
	if n.pEff > 0 {
		return 0, paramErr("R", n.r, "[1/(1-P), 100]", "the window trajectory exists only when R(1-P) >= 1 masks the erasures")
	}
	return math.Min(n.windowCap(), 1+float64(round-1)/n.b), nil
}

// windowCap is the largest window the masked regime reaches, packets.
func (n nc) windowCap() float64 {
	return math.Min(n.wmax, n.capRate/n.r*n.rtt)
}

// TCPNC returns the throughput of TCP over the network-coding layer (Kim,
// Médard, Barros 2011) for redundancy R and end-to-end erasure probability
// P. Goodput is TCP's packet rate (every packet seen is eventually decoded);
// SendRate counts coded packets, R per packet from TCP.
//
// With R(1-P) >= 1 the rate is E[W]/RTT averaged over the rounds of
// Duration (steady state: Wmax/RTT), which requires Wmax or Capacity. With
// R(1-P) < 1 it is Padhye's rate at p_eff = 1-R(1-P), whose goodput
// (1-p_eff) times TCP's sending rate equals the innovative combinations
// delivered, R(1-P) per packet from TCP.
func TCPNC(p NCParams) (Estimate, error) {
	n, err := p.resolve()
	if err != nil {
		return Estimate{}, err
	}
	e := Estimate{EffectiveLoss: n.pEff, MSS: p.MSS}
	if n.pEff > 0 {
		// TCP sees loss: Padhye at the effective loss rate, then the
		// capacity shared by R coded packets per TCP packet.
		tp := p.TCPParams
		tp.P, tp.Capacity = n.pEff, 0
		pe, err := Padhye(tp)
		if err != nil {
			return Estimate{}, err
		}
		lambda, limit, window := pe.SendRate, pe.Limit, pe.Window
		if c := n.capRate / n.r; c < lambda {
			lambda, limit, window = c, CapacityLimited, c*n.rtt
		}
		e.Goodput = lambda * (1 - n.pEff)
		e.SendRate = lambda * n.r
		e.Window, e.Limit = window, limit
		return e, nil
	}
	if n.uncapped {
		return Estimate{}, paramErr("Wmax", p.Wmax, "[1, +inf) packets",
			"with R(1-P) >= 1 TCP/NC sees no loss, so only Wmax or Capacity bounds its rate; set one")
	}
	wc := n.windowCap()
	e.Limit = WindowLimited
	if n.capRate/n.r*n.rtt < n.wmax {
		e.Limit = CapacityLimited
	}
	meanW := wc
	if !math.IsInf(n.rounds, 1) {
		meanW = meanRampWindow(wc, 1/n.b, n.rounds)
	}
	e.Goodput = meanW / n.rtt
	e.SendRate = e.Goodput * n.r
	e.Window = meanW
	return e, nil
}

// meanRampWindow is (1/n) sum_{r=1}^{n} min(wc, 1+(r-1)g): the mean of a
// window that starts at one packet, grows by g per round and stops at wc,
// over n rounds, in closed form so that long durations cost nothing.
func meanRampWindow(wc, g, n float64) float64 {
	if wc <= 1 {
		return wc
	}
	// Rounds r = 1..k have 1+(r-1)g < wc.
	k := math.Min(n, math.Ceil((wc-1)/g))
	sum := k + g*k*(k-1)/2 + (n-k)*wc
	return sum / n
}

// OptimalRedundancy returns 1/(1-p), the smallest redundancy factor that
// masks erasures of probability p (R(1-p) = 1; Kim et al.: "R >= 1/(1-p)
// theoretically optimal"; 1.107 at the slides' p = 0.0963).
func OptimalRedundancy(p float64) (float64, error) {
	if !finite(p) || p < 0 || p >= 1 {
		return 0, paramErr("P", p, "[0, 1)", "the erasure probability")
	}
	return 1 / (1 - p), nil
}

// EndToEndLoss returns the end-to-end erasure probability of a path of hops
// links that each erase a packet independently with probability q:
// 1-(1-q)^hops (Kim et al.'s slides: "end-to-end loss rate p = 1-(1-q)^4"
// for their four-link topology).
func EndToEndLoss(q float64, hops int) (float64, error) {
	if !finite(q) || q < 0 || q >= 1 {
		return 0, paramErr("q", q, "[0, 1)", "the per-link erasure probability")
	}
	if hops < 1 {
		return 0, paramErr("hops", hops, "[1, +inf)", "the number of links")
	}
	return -math.Expm1(float64(hops) * math.Log1p(-q)), nil
}
