package model

import "math"

// Mathis returns the square-root law of Mathis et al. (1997, §2):
//
//	BW = (MSS/RTT) * C/sqrt(p),  C = sqrt(3/(2b))
//
// C = sqrt(3/2) ≈ 1.22 is the paper's constant for periodic loss with every
// segment acknowledged (the sawtooth between W/2 and W, one loss per
// cycle of 3W²/8 packets); with b packets per ACK the window grows b times
// slower and C = sqrt(3/(2b)) (0.87 for delayed ACKs, the paper's value).
// The rate is additionally capped by Wmax/RTT and Capacity when they are
// set. P = 0 is accepted only with a cap.
func Mathis(p TCPParams) (Estimate, error) {
	t, err := p.resolve()
	if err != nil {
		return Estimate{}, err
	}
	if t.p == 0 {
		if t.uncapped {
			return Estimate{}, errNoBound("P", t.p, "the square-root law diverges at P = 0")
		}
		return t.capped(math.Inf(1), math.Inf(1)), nil
	}
	w := math.Sqrt(3 / (2 * t.b * t.p)) // mean window, packets
	return t.capped(w/t.rtt, w), nil
}

// padhyeWindow is E[W_u] of Padhye et al. (1998, §2.1), the mean
// unconstrained window at the end of a triple-duplicate period, packets:
//
//	E[W] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2)
func padhyeWindow(p, b float64) float64 {
	k := (2 + b) / (3 * b)
	return k + math.Sqrt(8*(1-p)/(3*b*p)+k*k)
}

// timeoutProbability is Q̂(w) of Padhye et al. (1998, §2.2): the
// probability that a loss in a window of w packets is detected by a timeout
// rather than by three duplicate ACKs,
//
//	Q̂(w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)).
//
// Powers of (1-p) are computed as exp(n log1p(-p)) so that the differences
// 1-(1-p)^n keep their precision for tiny p, where Q̂ tends to 3/w.
func timeoutProbability(p, w float64) float64 {
	l := math.Log1p(-p)
	pow := func(n float64) float64 { return math.Exp(n * l) }
	oneMinus := func(n float64) float64 { return -math.Expm1(n * l) } // 1-(1-p)^n
	q := oneMinus(3) * (1 + pow(3)*oneMinus(w-3)) / oneMinus(w)
	return math.Min(1, q)
}

// backoff is f(p) of Padhye et al. (1998, §2.2): the expected duration of a
// timeout sequence in units of T0, times (1-p), with exponential back-off
// doubling the timer up to 64 T0,
//
//	f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6.
func backoff(p float64) float64 {
	return 1 + p*(1+p*(2+p*(4+p*(8+p*(16+p*32)))))
}

// Padhye returns the full model of Padhye et al. (1998 §2.3, "the impact
// of window limitation"; ToN 2000 §II-C): TCP Reno's send rate with triple-duplicate and timeout loss
// indications, exponential back-off and the receiver window cap. With
// W = E[W_u] (padhyeWindow), Q = Q̂(W) and f = f(p):
//
//	if W < Wmax:  B = ((1-p)/p + W + Q/(1-p)) / (RTT(bW/2 + 1) + Q T0 f/(1-p))
//	otherwise:    B = ((1-p)/p + Wmax + Q̂(Wmax)/(1-p))
//	                  / (RTT(b Wmax/8 + (1-p)/(p Wmax) + 2) + Q̂(Wmax) T0 f/(1-p))
//
// in packets/s; Capacity caps it further. At P = 0 the model's limit is
// Wmax/RTT (no loss ever closes the window), which needs Wmax or Capacity.
func Padhye(p TCPParams) (Estimate, error) {
	t, err := p.resolve()
	if err != nil {
		return Estimate{}, err
	}
	if t.p == 0 {
		if t.uncapped {
			return Estimate{}, errNoBound("P", t.p, "with no loss the window grows without bound")
		}
		return t.capped(math.Inf(1), math.Inf(1)), nil
	}
	pp, b, rtt, t0 := t.p, t.b, t.rtt, t.t0
	f := backoff(pp)
	w := padhyeWindow(pp, b)
	if w < t.wmax {
		q := timeoutProbability(pp, w)
		rate := ((1-pp)/pp + w + q/(1-pp)) / (rtt*(b*w/2+1) + q*t0*f/(1-pp))
		return t.capped(rate, w), nil
	}
	wm := t.wmax
	q := timeoutProbability(pp, wm)
	rate := ((1-pp)/pp + wm + q/(1-pp)) / (rtt*(b*wm/8+(1-pp)/(pp*wm)+2) + q*t0*f/(1-pp))
	e := t.capped(rate, wm)
	if e.Limit == LossLimited {
		// The window cap binds, even if this branch's rate is a little
		// below Wmax/RTT (it accounts for the losses as well).
		e.Limit = WindowLimited
	}
	return e, nil
}

// PadhyeApprox returns the approximate closed form of Padhye et al. (1998,
// end of §2.3), in packets/s:
//
//	B ≈ min(Wmax/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1+32p^2)))
//
// It is the form used by TFRC (RFC 5348 §3.1, without the min(1, ·)).
// Capacity caps it further; P = 0 needs Wmax or Capacity.
func PadhyeApprox(p TCPParams) (Estimate, error) {
	t, err := p.resolve()
	if err != nil {
		return Estimate{}, err
	}
	if t.p == 0 {
		if t.uncapped {
			return Estimate{}, errNoBound("P", t.p, "with no loss the window grows without bound")
		}
		return t.capped(math.Inf(1), math.Inf(1)), nil
	}
	pp, b := t.p, t.b
	den := t.rtt*math.Sqrt(2*b*pp/3) + t.t0*math.Min(1, 3*math.Sqrt(3*b*pp/8))*pp*(1+32*pp*pp)
	rate := 1 / den
	return t.capped(rate, rate*t.rtt), nil
}
