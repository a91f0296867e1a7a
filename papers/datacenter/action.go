package datacenter

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl/space"
)

// Params are the two BBR parameters the agents set (paper section V: M = 2,
// a_t[1] the RTprop window and a_t[2] the BtlBw window).
type Params struct {
	// MinRTTWindow is BBR's min_rtt_window (RTprop filter), seconds.
	MinRTTWindow float64
	// BwWindowRounds is BBR's bw_window_rounds (BtlBw filter), round
	// trips.
	BwWindowRounds int
}

// DefaultParams are BBR's (and Linux's) defaults: a 10 s RTprop window
// and a 10-round BtlBw window.
var DefaultParams = Params{MinRTTWindow: 10, BwWindowRounds: 10}

// String formats p as "rtprop 10s / btlbw 10 rounds".
func (p Params) String() string {
	return fmt.Sprintf("rtprop %gs / btlbw %d rounds", p.MinRTTWindow, p.BwWindowRounds)
}

// The action ranges: BBR accepts min_rtt_window in [0.1, 600] s and
// bw_window_rounds in [1, 100]; windows longer than an episode (3 s) act
// like 10 s, and the BtlBw window beyond a few tens of rounds only delays
// the reaction to capacity drops, so the agents choose within these.
const (
	MinRTTWindowLo = 0.1
	MinRTTWindowHi = 10
	BwRoundsLo     = 1
	BwRoundsHi     = 25
)

// GridMinRTT and GridBwRounds span the discrete action grid (and the static
// grid search): roughly log-spaced over the action ranges, including BBR's
// defaults. Twelve settings keep DQN's and PPO's exploration short; finer
// grids did not change which settings win (docs/datacenter.md).
var (
	GridMinRTT   = []float64{0.1, 0.3, 1, 10}
	GridBwRounds = []int{1, 3, 10}
)

// ActionKind selects the action space.
type ActionKind int

// Action spaces.
const (
	// Discrete: one of len(GridMinRTT)×len(GridBwRounds) = 12 settings,
	// index i·len(GridBwRounds) + j for (GridMinRTT[i], GridBwRounds[j]).
	Discrete ActionKind = iota
	// Continuous: two values in [−1, 1], mapped log-linearly onto
	// [MinRTTWindowLo, MinRTTWindowHi] s and [BwRoundsLo, BwRoundsHi]
	// rounds (the latter rounded to an integer).
	Continuous
)

// ParseActionKind parses "discrete" or "continuous".
func ParseActionKind(s string) (ActionKind, error) {
	switch s {
	case "discrete":
		return Discrete, nil
	case "continuous":
		return Continuous, nil
	}
	return 0, fmt.Errorf("action space %q: want discrete or continuous", s)
}

// String names the kind.
func (k ActionKind) String() string {
	if k == Continuous {
		return "continuous"
	}
	return "discrete"
}

// Space returns the action space of one agent.
func (k ActionKind) Space() space.Space {
	if k == Continuous {
		return space.Uniform(-1, 1, 2)
	}
	return space.NewDiscrete(len(GridMinRTT) * len(GridBwRounds))
}

// GridParams returns the parameters of discrete action i (clamped to the
// grid).
func GridParams(i int) Params {
	n := len(GridMinRTT) * len(GridBwRounds)
	i = min(max(i, 0), n-1)
	return Params{MinRTTWindow: GridMinRTT[i/len(GridBwRounds)], BwWindowRounds: GridBwRounds[i%len(GridBwRounds)]}
}

// GridIndex returns the discrete action holding p, or -1.
func GridIndex(p Params) int {
	for i := range len(GridMinRTT) * len(GridBwRounds) {
		if GridParams(i) == p {
			return i
		}
	}
	return -1
}

// Decode maps an action of this kind to parameters. NaN components map to
// the middle of the range; values outside [−1, 1] are clamped.
func (k ActionKind) Decode(a []float32) Params {
	if k == Discrete {
		x := float64(a[0])
		if math.IsNaN(x) {
			x = 0
		}
		return GridParams(int(math.Round(x)))
	}
	u := func(v float32) float64 {
		x := float64(v)
		if math.IsNaN(x) {
			x = 0
		}
		return (math.Max(-1, math.Min(1, x)) + 1) / 2
	}
	// The window is rounded to 0.1 ms so that the range ends come out
	// exact.
	return Params{
		MinRTTWindow:   math.Round(logUniform(u(a[0]), MinRTTWindowLo, MinRTTWindowHi)*1e4) / 1e4,
		BwWindowRounds: int(math.Round(logUniform(u(a[1]), BwRoundsLo, BwRoundsHi))),
	}
}

// Encode returns the action of this kind that decodes to p (the nearest
// for a discrete space), for scripted agents and tests.
func (k ActionKind) Encode(p Params) []float32 {
	if k == Discrete {
		best, bestD := 0, math.Inf(1)
		for i := range len(GridMinRTT) * len(GridBwRounds) {
			g := GridParams(i)
			d := math.Abs(math.Log(g.MinRTTWindow/p.MinRTTWindow)) + math.Abs(math.Log(float64(g.BwWindowRounds)/float64(p.BwWindowRounds)))
			if d < bestD {
				best, bestD = i, d
			}
		}
		return []float32{float32(best)}
	}
	inv := func(v, lo, hi float64) float32 {
		v = math.Max(lo, math.Min(hi, v))
		return float32(2*math.Log(v/lo)/math.Log(hi/lo) - 1)
	}
	return []float32{inv(p.MinRTTWindow, MinRTTWindowLo, MinRTTWindowHi), inv(float64(p.BwWindowRounds), BwRoundsLo, BwRoundsHi)}
}
