package marlin

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/learn/rl/sac"
)

// DemoBDP names the demonstrator of `marlin train --demo`: a sender that
// sets its window to the current link's nominal bandwidth-delay product
// (Mockets' fixed window, re-set when the link changes), the only
// demonstrator so far.
const DemoBDP = "bdp"

// MaxDemoScale bounds TrainConfig.DemoScale (WindowCap caps the window
// anyway: 64 UHF BDPs exceed it).
const MaxDemoScale = 64.0

// DemoAction returns the action that moves the window to the current
// link's nominal bandwidth-delay product times EnvConfig.DemoScale: the
// link's rate times the flow's nominal RTT on it, within [one segment,
// the window cap]. It reads the simulation, which the policy never sees, as
// the reward's target does; it is what `--demo bdp` shows the learner.
// For ActionBDP it is the action whose multiple of the policy's BDP
// estimate is that window. 0 before Reset.
func (e *Env) DemoAction() float64 {
	if e.net == nil {
		return 0
	}
	w := e.demoWindow()
	var ratio float64
	if e.cfg.Action == ActionBDP {
		ratio = float64(w) / float64(e.compact.bdp)
	} else {
		cw := e.flow.Sender.CC().CongestionWindow()
		if cw <= 0 {
			return 1
		}
		ratio = float64(w) / float64(cw)
	}
	var a float64
	switch e.cfg.Action {
	case ActionLog2:
		a = math.Log2(ratio)
	case ActionBDP:
		span := e.cfg.BDPSpan
		if span == 0 {
			span = DefaultBDPSpan
		}
		a = math.Log2(ratio) / span // BDPWindow's estimate x 2^(span a)
	default:
		a = ratio - 1
	}
	return math.Max(-1, math.Min(1, a))
}

// demoWindow is the window DemoAction aims at.
func (e *Env) demoWindow() units.Bytes {
	n := e.net
	rtt := n.NominalRTT(e.flow, n.CurrentSegment())
	w := float64(n.LinkRate().BytesIn(rtt))
	if k := e.cfg.DemoScale; k > 0 {
		w *= k
	}
	return min(max(units.Bytes(w), e.mss), e.cfg.windowCap())
}

// demonstrator is sac.Demonstrator over the training environments' cores.
type demonstrator []*Env

func (d demonstrator) Demonstrate(i int, act []float32) { act[0] = float32(d[i].DemoAction()) }

var _ sac.Demonstrator = demonstrator(nil)

// demoFor returns the named demonstrator over envs, nil for "".
func demoFor(name string, envs []*Env) (sac.Demonstrator, error) {
	switch name {
	case "":
		return nil, nil
	case DemoBDP:
		return demonstrator(envs), nil
	}
	return nil, fmt.Errorf("marlin: demonstrator %q: want %q", name, DemoBDP)
}
