package datacenter

import (
	"fmt"
	"math"
	"time"
)

// RewardConfig weighs the reward (paper section IV-C):
//
//	r_t = α·Throughput + (1 − α)·2/(1 + exp(|latency_estimate − latency|/τ))
//
// Throughput is the bottleneck's utilisation by useful bytes during the
// interval: the payload newly delivered in order by every TCP flow
// (controlled and background) over the payload the link could have carried
// ("the measured link utilization"), in [0, 1]. latency_estimate is a
// controlled flow's RTprop (BBR's min RTT estimate) at the end of the
// interval and latency the mean of the flow's RTT samples during it ("the
// difference between the actual RTT and the estimated RTprop during the
// interval"), averaged over the agent's flows as sigmoid terms. The paper
// writes 1/(1+exp(|Δ|)), which is 1/2 at Δ = 0; the factor 2 makes the
// term 1 for a perfect estimate so both terms span [0, 1]. The paper does
// not state the unit of Δ; τ is that unit, chosen for data-centre delays.
type RewardConfig struct {
	// Alpha weighs throughput against the delay term [0.75]. The paper
	// gives no value; across BBR settings the delay term varies about four
	// times more than the utilisation, and with α = 0.5 the shortest
	// windows win everywhere however much utilisation they cost, while
	// with 0.75 the best setting depends on the path (docs/datacenter.md).
	Alpha float64
	// Tau is the latency scale τ [1ms]: a gap of τ between RTprop and
	// the RTT gives a term of 2/(1+e) ≈ 0.54, a gap of 3τ one of 0.09.
	Tau time.Duration
	// Fairness λ, ours [0: off, the paper's reward], subtracts
	// λ·(1 − J) from every agent's reward each interval, J being Jain's
	// index of the agents' goodputs per active flow (FairnessIndex). The
	// paper's team reward is highest when one agent's flows give way to
	// the others' (docs/datacenter.md); this prices that in.
	Fairness float64
}

// MaxFairness bounds RewardConfig.Fairness: with J at least 1/K the
// penalty is then at most 10·(1 − 1/K), several times the reward's range.
const MaxFairness = 10

// FairnessIndex is Jain's index (Σx)²/(n·Σx²) of the per-flow goodputs
// goodput[i]/active[i] of the agents with an active flow; 1 when fewer
// than two agents have one or none delivered anything.
func FairnessIndex(goodput []float64, active []int) float64 {
	var sum, sq float64
	n := 0
	for i, g := range goodput {
		if active[i] == 0 {
			continue
		}
		x := g / float64(active[i])
		sum, sq, n = sum+x, sq+x*x, n+1
	}
	if j, ok := jain(sum, sq, n); ok {
		return j
	}
	return 1
}

// jain is Jain's index (Σx)²/(n·Σx²) from Σx, Σx² and n; not ok for fewer
// than two values or all of them zero.
func jain(sum, sq float64, n int) (float64, bool) {
	if n < 2 || sq == 0 {
		return 0, false
	}
	return sum * sum / (float64(n) * sq), true
}

func (c *RewardConfig) defaults() {
	if c.Alpha == 0 {
		c.Alpha = 0.75
	}
	if c.Tau == 0 {
		c.Tau = time.Millisecond
	}
}

func (c RewardConfig) validate() error {
	if !(c.Alpha >= 0 && c.Alpha <= 1) {
		return fmt.Errorf("datacenter: reward alpha %g must be in [0, 1]", c.Alpha)
	}
	if c.Tau <= 0 {
		return fmt.Errorf("datacenter: reward tau %v must be positive", c.Tau)
	}
	if !(c.Fairness >= 0 && c.Fairness <= MaxFairness) {
		return fmt.Errorf("datacenter: reward fairness weight %g must be in [0, %d]", c.Fairness, MaxFairness)
	}
	return nil
}

// DelayTerm is one flow's sigmoid term 2/(1 + exp(|estimate − rtt|/τ)), in
// (0, 1], 1 when the estimate equals the measured RTT.
func DelayTerm(estimate, rtt, tau time.Duration) float64 {
	d := math.Abs(float64(estimate-rtt)) / float64(tau)
	return 2 / (1 + math.Exp(d))
}

// Reward combines a utilisation u (in [0, 1]) and a mean delay term s.
func (c RewardConfig) Reward(u, s float64) float64 {
	return c.Alpha*u + (1-c.Alpha)*s
}
