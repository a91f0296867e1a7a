package nn

import (
	"fmt"
	"math"
)

// Float is the element type of the head and loss functions. The algorithms
// use float32; the tests instantiate float64 as the reference.
type Float interface{ ~float32 | ~float64 }

// log(2π)/2, the normal density's constant term.
const halfLog2Pi = 0.91893853320467274178

// SB3's clamp on the SAC actor's log standard deviation
// (stable_baselines3/sac/policies.py LOG_STD_MIN, LOG_STD_MAX).
const (
	LogStdMin = -20
	LogStdMax = 2
)

// squashEps is SB3's epsilon in the tanh change-of-variables correction
// log(1 − tanh(u)² + ε) (TanhBijector.log_prob_correction / SquashedDiag-
// GaussianDistribution.log_prob), which keeps the log finite when |u| is
// large.
const squashEps = 1e-6

func checkLen(name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("nn: %s has length %d, want %d", name, got, want))
	}
}

// GaussianLogProb writes, for each of the B = len(logp) rows, the log
// density of x under a diagonal Gaussian with the given mean and log
// standard deviation (all B×d):
//
//	log p(x) = Σᵢ −(xᵢ−μᵢ)²/(2σᵢ²) − log σᵢ − ½ log 2π.
func GaussianLogProb[F Float](mean, logStd, x []F, d int, logp []F) {
	n := len(logp) * d
	checkLen("mean", len(mean), n)
	checkLen("logStd", len(logStd), n)
	checkLen("x", len(x), n)
	for b := range logp {
		var s float64
		for i := b * d; i < (b+1)*d; i++ {
			ls := float64(logStd[i])
			z := (float64(x[i]) - float64(mean[i])) * math.Exp(-ls)
			s += -0.5*z*z - ls - halfLog2Pi
		}
		logp[b] = F(s)
	}
}

// GaussianLogProbBackward adds to dmean and dlogStd the gradient of
// Σ_b dlogp[b]·log p(x_b) (x held fixed):
//
//	∂/∂μ = (x−μ)/σ²,  ∂/∂log σ = (x−μ)²/σ² − 1.
func GaussianLogProbBackward[F Float](mean, logStd, x []F, d int, dlogp, dmean, dlogStd []F) {
	n := len(dlogp) * d
	checkLen("dmean", len(dmean), n)
	checkLen("dlogStd", len(dlogStd), n)
	for b, g := range dlogp {
		gb := float64(g)
		for i := b * d; i < (b+1)*d; i++ {
			inv := math.Exp(-float64(logStd[i]))
			z := (float64(x[i]) - float64(mean[i])) * inv
			dmean[i] += F(gb * z * inv)
			dlogStd[i] += F(gb * (z*z - 1))
		}
	}
}

// GaussianEntropy writes each row's entropy Σᵢ ½ + ½ log 2π + log σᵢ for
// logStd of B×d; its gradient with respect to each log σᵢ is 1.
func GaussianEntropy[F Float](logStd []F, d int, ent []F) {
	checkLen("logStd", len(logStd), len(ent)*d)
	for b := range ent {
		s := 0.0
		for i := b * d; i < (b+1)*d; i++ {
			s += 0.5 + halfLog2Pi + float64(logStd[i])
		}
		ent[b] = F(s)
	}
}

func clampLogStd(ls float64) (float64, bool) {
	switch {
	case ls < LogStdMin:
		return LogStdMin, false
	case ls > LogStdMax:
		return LogStdMax, false
	}
	return ls, true
}

// SquashedGaussian samples SAC's tanh-squashed Gaussian policy by
// reparameterisation (Haarnoja et al. 2018, appendix C): with log σ =
// clamp(logStd, LogStdMin, LogStdMax), u = μ + σ·ε and a = tanh(u), and
//
//	log π(a) = Σᵢ [−ε²/2 − log σᵢ − ½ log 2π] − Σᵢ log(1 − tanh(uᵢ)² + 1e-6),
//
// the Gaussian density of u plus the change-of-variables correction (SAC
// paper eq. 21, with SB3's 1e-6). mean, logStd, noise (ε) and a are B×d;
// logp has B entries.
func SquashedGaussian[F Float](mean, logStd, noise []F, d int, a, logp []F) {
	n := len(logp) * d
	checkLen("mean", len(mean), n)
	checkLen("logStd", len(logStd), n)
	checkLen("noise", len(noise), n)
	checkLen("a", len(a), n)
	for b := range logp {
		var s float64
		for i := b * d; i < (b+1)*d; i++ {
			ls, _ := clampLogStd(float64(logStd[i]))
			e := float64(noise[i])
			u := float64(mean[i]) + math.Exp(ls)*e
			t := math.Tanh(u)
			a[i] = F(t)
			s += -0.5*e*e - ls - halfLog2Pi - math.Log(1-t*t+squashEps)
		}
		logp[b] = F(s)
	}
}

// SquashedGaussianBackward adds to dmean and dlogStd the gradient of
// Σ da·a + Σ_b dlogp[b]·log π(a_b) through the reparameterised sample of
// SquashedGaussian (same mean, logStd, noise). With q = 1 − tanh(u)²:
//
//	∂L/∂u = da·q + dlogp·2·tanh(u)·q/(q + 1e-6)
//	∂L/∂μ = ∂L/∂u,  ∂L/∂log σ = ∂L/∂u·σ·ε − dlogp
//
// (the Gaussian term −ε²/2 − log σ depends on log σ only directly, since ε
// is fixed). The log σ gradient is zero where the clamp is active, as
// torch.clamp's is.
func SquashedGaussianBackward[F Float](mean, logStd, noise []F, d int, da, dlogp, dmean, dlogStd []F) {
	n := len(dlogp) * d
	checkLen("da", len(da), n)
	checkLen("dmean", len(dmean), n)
	checkLen("dlogStd", len(dlogStd), n)
	for b, g := range dlogp {
		gl := float64(g)
		for i := b * d; i < (b+1)*d; i++ {
			ls, inside := clampLogStd(float64(logStd[i]))
			sigma := math.Exp(ls)
			e := float64(noise[i])
			t := math.Tanh(float64(mean[i]) + sigma*e)
			q := 1 - t*t
			du := float64(da[i])*q + gl*2*t*q/(q+squashEps)
			dmean[i] += F(du)
			if inside {
				dlogStd[i] += F(du*sigma*e - gl)
			}
		}
	}
}

// Categorical computes, for B rows of n logits, the log-probability of the
// chosen actions (action indices carried as floats) and the entropy of the
// softmax distribution. logits are B×n; actions, logp and ent have B
// entries; ent may be nil.
func Categorical[F Float](logits []F, n int, actions []F, logp, ent []F) {
	checkLen("logits", len(logits), len(actions)*n)
	for b := range actions {
		row := logits[b*n : (b+1)*n]
		lse := logSumExp(row)
		k := actionIndex(actions[b], n)
		logp[b] = F(float64(row[k]) - lse)
		if ent != nil {
			var h float64
			for _, z := range row {
				lp := float64(z) - lse
				h -= math.Exp(lp) * lp
			}
			ent[b] = F(h)
		}
	}
}

// CategoricalBackward adds to dlogits the gradient of Σ_b dlogp[b]·log p(a_b)
// + dent[b]·H_b (dent may be nil):
//
//	∂log p(a)/∂z_j = 1[j=a] − p_j,   ∂H/∂z_j = −p_j·(log p_j + H).
func CategoricalBackward[F Float](logits []F, n int, actions, dlogp, dent, dlogits []F) {
	checkLen("dlogits", len(dlogits), len(actions)*n)
	for b := range actions {
		row := logits[b*n : (b+1)*n]
		lse := logSumExp(row)
		k := actionIndex(actions[b], n)
		var h float64
		if dent != nil {
			for _, z := range row {
				lp := float64(z) - lse
				h -= math.Exp(lp) * lp
			}
		}
		gl := float64(dlogp[b])
		for j, z := range row {
			lp := float64(z) - lse
			p := math.Exp(lp)
			g := -gl * p
			if j == k {
				g += gl
			}
			if dent != nil {
				g += float64(dent[b]) * -p * (lp + h)
			}
			dlogits[b*n+j] += F(g)
		}
	}
}

// Softmax writes the probabilities of each row of logits (B×n) into p.
func Softmax[F Float](logits []F, n int, p []F) {
	checkLen("p", len(p), len(logits))
	for b := 0; b < len(logits)/n; b++ {
		row := logits[b*n : (b+1)*n]
		lse := logSumExp(row)
		for j, z := range row {
			p[b*n+j] = F(math.Exp(float64(z) - lse))
		}
	}
}

func logSumExp[F Float](row []F) float64 {
	m := math.Inf(-1)
	for _, z := range row {
		m = max(m, float64(z))
	}
	var s float64
	for _, z := range row {
		s += math.Exp(float64(z) - m)
	}
	return m + math.Log(s)
}

func actionIndex[F Float](a F, n int) int {
	k := int(a)
	if k < 0 || k >= n || F(k) != a {
		panic(fmt.Sprintf("nn: action %v is not an index in [0, %d)", a, n))
	}
	return k
}

// Argmax returns the index of the largest element (the first on ties).
func Argmax[F Float](x []F) int {
	k := 0
	for i, v := range x {
		if v > x[k] {
			k = i
		}
	}
	return k
}
