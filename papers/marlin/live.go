package marlin

import (
	"math"
	"time"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/transport/tcp"
)

// LiveObserver builds the MARLIN observation of a live flow (transport/udp
// on the real clock) exactly as Env builds it in the simulator: the 14
// features measured over each step from the sender's state and RTT
// samples, their 7 running statistics, stacked over History steps with
// zero padding (env.NewStack(core, History, true)). Only the sender's own
// measurements enter the observation; the reward's link target is not
// observable on a real path and is not computed.
type LiveObserver struct {
	meter stepMeter
	one   []float32
	stack []float32
}

// NewLiveObserver returns an observer whose first step starts at start.
func NewLiveObserver(start clock.Time) *LiveObserver {
	o := &LiveObserver{
		one:   make([]float32, NumFeatures*NumStats),
		stack: make([]float32, ObservationSize),
	}
	o.meter.reset(start)
	return o
}

// OnRTT records an RTT sample (hook it to the sender's OnRTT).
func (o *LiveObserver) OnRTT(rtt time.Duration) { o.meter.onRTT(rtt) }

// Observe closes the step ending at now and returns the stacked
// observation (owned by o, valid until the next call) and the step's raw
// feature values by name.
func (o *LiveObserver) Observe(now clock.Time, st tcp.FlowState) ([]float32, [NumFeatures]float64) {
	v, _ := o.meter.measure(now, st, o.one)
	d := len(o.one)
	copy(o.stack, o.stack[d:])
	copy(o.stack[(History-1)*d:], o.one)
	return o.stack, v
}

// LiveAckInterval is the Mockets-style SACK timer the MARLIN flow uses
// (experiment/network.DefaultSACKTimeout).
const LiveAckInterval = 20 * time.Millisecond

// WindowFor applies a MARLIN action to the current window as Env.Step
// does: scale by 1+a (ActionLinear) or 2^a (ActionLog2), a clipped to
// [-1, 1] and NaN taken as 0, at least one MSS and at most WindowCap. A
// live flow must scale the way its policy was trained (PolicyAction): a
// log2 policy's -1 halves the window, a linear one's collapses it.
func WindowFor(action string, a float32, cwnd, mss units.Bytes) units.Bytes {
	return windowFor(action, a, cwnd, mss, WindowCap)
}

// windowFor is WindowFor with the cap limit in place of WindowCap.
func windowFor(action string, a float32, cwnd, mss, limit units.Bytes) units.Bytes {
	x := float64(a)
	if math.IsNaN(x) {
		x = 0
	}
	x = math.Max(-1, math.Min(1, x))
	scale := 1 + x
	if action == ActionLog2 {
		scale = math.Exp2(x)
	}
	// Clamped before the conversion: a window near the int64 limit (a
	// remote host's) grown would wrap round to a negative one.
	w := math.Ceil(float64(cwnd) * scale)
	if w >= float64(limit) {
		return limit
	}
	return min(max(units.Bytes(w), mss), limit)
}
