package cubic

import (
	"math"
	"time"
)

// This file holds CUBIC's window function and its companions as pure
// functions of their arguments, apart from the window state machine in
// cubic.go. Windows here are in segments (float64), as in RFC 9438; the
// controller converts to and from bytes.

// Curve is the cubic window function of one congestion-avoidance stage,
// RFC 9438 §4.2 eq. 1: W_cubic(t) = C*(t-K)^3 + W_max.
type Curve struct {
	// C scales the cubic's aggressiveness, segments/s^3 (RFC 9438 §4.1.1:
	// 0.4).
	C float64
	// WMax is the plateau (inflection point) of the curve, segments.
	WMax float64
	// K is the time the curve takes from the stage's initial window back to
	// WMax.
	K time.Duration
}

// NewCurve returns the curve for a stage that starts with cwndEpoch segments
// after a reduction from wMax segments, with K from RFC 9438 §4.2 eq. 2:
// K = cbrt((W_max - cwnd_epoch)/C). When there is no reduction to recover
// from (cwndEpoch >= wMax: after a timeout, §4.8, or after a slow start that
// ended without loss, §4.10) the curve starts at its plateau: K = 0 and
// W_max = cwnd_epoch. (Linux bictcp_update: bic_K = 0, origin = cwnd.)
func NewCurve(c, wMax, cwndEpoch float64) Curve {
	if cwndEpoch >= wMax {
		return Curve{C: c, WMax: cwndEpoch}
	}
	k := math.Cbrt((wMax - cwndEpoch) / c) // seconds
	return Curve{C: c, WMax: wMax, K: time.Duration(k * float64(time.Second))}
}

// Window is W_cubic(t), segments, where t is the time since the stage began.
func (cv Curve) Window(t time.Duration) float64 {
	d := (t - cv.K).Seconds()
	return cv.C*d*d*d + cv.WMax
}

// Target bounds the window the cubic aims for one RTT ahead (RFC 9438 §4.2):
// cwnd if W_cubic(t+RTT) < cwnd, 1.5*cwnd if it exceeds 1.5*cwnd, otherwise
// W_cubic(t+RTT). The bounds keep the increase rate non-negative and below
// slow start's. All values in segments.
func Target(wCubicNextRTT, cwnd float64) float64 {
	return min(max(wCubicNextRTT, cwnd), 1.5*cwnd)
}

// AlphaCubic is the additive increase of the Reno-friendly estimate,
// segments per RTT: RFC 9438 §4.3, alpha_cubic = 3*(1-beta)/(1+beta), which
// gives AIMD(alpha, beta) the same average window as Reno's AIMD(1, 0.5).
func AlphaCubic(beta float64) float64 {
	return 3 * (1 - beta) / (1 + beta)
}

// WMaxAfterLoss is the plateau remembered at a congestion event, RFC 9438
// §4.7: with fast convergence, a flow whose window fell short of the
// previous plateau (cwnd < W_max) releases bandwidth by lowering the new
// plateau to cwnd*(1+beta)/2; otherwise W_max = cwnd. Segments.
func WMaxAfterLoss(cwnd, wMax, beta float64, fastConvergence bool) float64 {
	if fastConvergence && cwnd < wMax {
		return cwnd * (1 + beta) / 2
	}
	return cwnd
}
