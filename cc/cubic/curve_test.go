package cubic

import (
	"math"
	"testing"
	"time"
)

// wCubic is RFC 9438 eq. 1 written out directly, with K from eq. 2, as the
// reference for Curve.
func wCubic(c, wMax, cwndEpoch, tSeconds float64) float64 {
	k := math.Cbrt((wMax - cwndEpoch) / c)
	d := tSeconds - k
	return c*d*d*d + wMax
}

func TestCurveMatchesFormula(t *testing.T) {
	tests := []struct {
		c, wMax, cwndEpoch float64
	}{
		{0.4, 100, 70},
		{0.4, 1000, 700},
		{0.4, 83.25, 70}, // fast convergence lowered W_max below 100
		{4, 50, 35},
		{0.04, 10, 7},
	}
	for _, tt := range tests {
		cv := NewCurve(tt.c, tt.wMax, tt.cwndEpoch)
		for _, ts := range []float64{0, 0.1, 1, 2.5, 4.2, 10, 30} {
			got := cv.Window(time.Duration(ts * float64(time.Second)))
			want := wCubic(tt.c, tt.wMax, tt.cwndEpoch, ts)
			// K is stored in whole nanoseconds: |dW| <= 3*C*(t-K)^2 * 1 ns.
			if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("NewCurve(%g, %g, %g).Window(%gs) = %.9f, want %.9f", tt.c, tt.wMax, tt.cwndEpoch, ts, got, want)
			}
		}
		// The curve starts at the stage's window and reaches W_max at K.
		if got := cv.Window(0); math.Abs(got-tt.cwndEpoch) > 1e-6 {
			t.Errorf("NewCurve(%g, %g, %g).Window(0) = %.9f, want cwnd_epoch %g", tt.c, tt.wMax, tt.cwndEpoch, got, tt.cwndEpoch)
		}
		if got := cv.Window(cv.K); got != tt.wMax {
			t.Errorf("NewCurve(%g, %g, %g).Window(K) = %.9f, want W_max %g", tt.c, tt.wMax, tt.cwndEpoch, got, tt.wMax)
		}
	}
}

// With cwnd_epoch = beta*W_max (no fast convergence), eq. 2 is the form
// K = cbrt(W_max*(1-beta)/C).
func TestCurveKAfterPlainReduction(t *testing.T) {
	for _, wMax := range []float64{10, 100, 1234.5} {
		const beta, c = 0.7, 0.4
		cv := NewCurve(c, wMax, beta*wMax)
		want := math.Cbrt(wMax * (1 - beta) / c)
		if got := cv.K.Seconds(); math.Abs(got-want) > 1e-9 {
			t.Errorf("K(W_max=%g) = %.9fs, want %.9fs", wMax, got, want)
		}
	}
}

// RFC 9438 §4.8 and §4.10: with nothing to recover (after a timeout, or a
// slow start that ended without loss) K = 0 and W_max = cwnd_epoch.
func TestCurveWithoutReduction(t *testing.T) {
	for _, tt := range []struct{ wMax, cwndEpoch float64 }{{0, 40}, {40, 40}, {30, 40}} {
		cv := NewCurve(0.4, tt.wMax, tt.cwndEpoch)
		if cv.K != 0 || cv.WMax != tt.cwndEpoch {
			t.Errorf("NewCurve(0.4, %g, %g) = K %v, W_max %g; want K 0, W_max %g", tt.wMax, tt.cwndEpoch, cv.K, cv.WMax, tt.cwndEpoch)
		}
		if got, want := cv.Window(2*time.Second), tt.cwndEpoch+0.4*8; math.Abs(got-want) > 1e-9 {
			t.Errorf("Window(2s) = %g, want cwnd_epoch + C*2^3 = %g", got, want)
		}
	}
}

func TestTargetBounds(t *testing.T) {
	tests := []struct{ w, cwnd, want float64 }{
		{50, 60, 60},  // W_cubic(t+RTT) < cwnd: target = cwnd
		{80, 60, 80},  // within bounds
		{90, 60, 90},  // exactly 1.5*cwnd
		{200, 60, 90}, // above 1.5*cwnd: capped
		{60, 60, 60},  // equal
		{10.5, 10, 10.5},
	}
	for _, tt := range tests {
		if got := Target(tt.w, tt.cwnd); got != tt.want {
			t.Errorf("Target(%g, %g) = %g, want %g", tt.w, tt.cwnd, got, tt.want)
		}
	}
}

func TestAlphaCubic(t *testing.T) {
	tests := []struct{ beta, want float64 }{
		{0.7, 3 * 0.3 / 1.7}, // RFC 9438 §4.3: about 0.529
		{0.5, 1},             // Reno's own AIMD(1, 0.5)
		{0.8, 3 * 0.2 / 1.8},
	}
	for _, tt := range tests {
		if got := AlphaCubic(tt.beta); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("AlphaCubic(%g) = %.17g, want %.17g", tt.beta, got, tt.want)
		}
	}
}

func TestWMaxAfterLoss(t *testing.T) {
	tests := []struct {
		cwnd, wMax, beta float64
		fc               bool
		want             float64
	}{
		{90, 100, 0.7, true, 90 * 1.7 / 2}, // below the old plateau: release bandwidth
		{90, 100, 0.7, false, 90},
		{110, 100, 0.7, true, 110}, // above: remember cwnd
		{100, 100, 0.7, true, 100}, // equal is not "less than"
		{50, 0, 0.7, true, 50},     // first loss
	}
	for _, tt := range tests {
		if got := WMaxAfterLoss(tt.cwnd, tt.wMax, tt.beta, tt.fc); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("WMaxAfterLoss(cwnd %g, W_max %g, beta %g, fc %v) = %g, want %g", tt.cwnd, tt.wMax, tt.beta, tt.fc, got, tt.want)
		}
	}
}
