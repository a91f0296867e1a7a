package nn

import "math"

// MSE returns mean((pred−target)²), torch's F.mse_loss with mean reduction,
// and, if dpred is not nil, adds its gradient scale·2(pred−target)/N to
// dpred.
func MSE[F Float](pred, target []F, scale float64, dpred []F) float64 {
	checkLen("target", len(target), len(pred))
	n := float64(len(pred))
	var s float64
	for i, p := range pred {
		e := float64(p) - float64(target[i])
		s += e * e
		if dpred != nil {
			dpred[i] += F(scale * 2 * e / n)
		}
	}
	return s / n
}

// Huber returns the mean smooth-L1 loss (torch's F.smooth_l1_loss with
// beta = 1, which SB3's DQN uses): ½e² where |e| < 1, |e| − ½ elsewhere,
// e = pred − target. If dpred is not nil it adds scale·∂loss/∂pred, which is
// e/N inside and sign(e)/N outside.
func Huber[F Float](pred, target []F, scale float64, dpred []F) float64 {
	checkLen("target", len(target), len(pred))
	n := float64(len(pred))
	var s float64
	for i, p := range pred {
		e := float64(p) - float64(target[i])
		var g float64
		if math.Abs(e) < 1 {
			s += 0.5 * e * e
			g = e
		} else {
			s += math.Abs(e) - 0.5
			g = math.Copysign(1, e)
		}
		if dpred != nil {
			dpred[i] += F(scale * g / n)
		}
	}
	return s / n
}

// PPOStats reports diagnostics of one PPO minibatch loss.
type PPOStats struct {
	// Loss is the clipped surrogate loss.
	Loss float64
	// ClipFraction is the fraction of samples with |ratio−1| > clip.
	ClipFraction float64
	// ApproxKL estimates KL(old‖new) by mean((r−1) − log r) (Schulman's
	// k3 estimator, as SB3 logs and uses for target_kl).
	ApproxKL float64
}

// PPOClip returns PPO's clipped surrogate loss (Schulman et al. 2017, eq. 7,
// negated for minimisation):
//
//	L = −mean_b min(r_b·A_b, clip(r_b, 1−ε, 1+ε)·A_b),  r_b = exp(logp_b − oldLogp_b)
//
// and adds scale·∂L/∂logp to dlogp (if not nil). The gradient is −r·A/B
// where the unclipped term is the minimum or the ratio lies inside the clip
// range, and zero where the clipped constant wins.
func PPOClip[F Float](logp, oldLogp, adv []F, clip, scale float64, dlogp []F) PPOStats {
	checkLen("oldLogp", len(oldLogp), len(logp))
	checkLen("adv", len(adv), len(logp))
	n := float64(len(logp))
	var st PPOStats
	for i := range logp {
		lr := float64(logp[i]) - float64(oldLogp[i])
		r := math.Exp(lr)
		a := float64(adv[i])
		rc := min(max(r, 1-clip), 1+clip)
		s1, s2 := r*a, rc*a
		st.Loss -= min(s1, s2)
		if math.Abs(r-1) > clip {
			st.ClipFraction++
		}
		st.ApproxKL += (r - 1) - lr
		if dlogp != nil && (s1 <= s2 || (r >= 1-clip && r <= 1+clip)) {
			dlogp[i] += F(-scale * a * r / n)
		}
	}
	st.Loss /= n
	st.ClipFraction /= n
	st.ApproxKL /= n
	return st
}

// ValueLoss returns PPO's value loss mean((R − V)²) (SB3 uses no ½), where
// with clip > 0 the prediction is first clipped around the old value:
// V = V_old + clip(v − V_old, −clip, clip) (SB3 clip_range_vf). It adds
// scale·∂loss/∂v to dv if not nil.
func ValueLoss[F Float](v, vOld, ret []F, clip, scale float64, dv []F) float64 {
	checkLen("ret", len(ret), len(v))
	n := float64(len(v))
	var s float64
	for i := range v {
		pred := float64(v[i])
		pass := 1.0
		if clip > 0 {
			old := float64(vOld[i])
			dlt := pred - old
			if dlt < -clip || dlt > clip {
				pass = 0
			}
			pred = old + min(max(dlt, -clip), clip)
		}
		e := pred - float64(ret[i])
		s += e * e
		if dv != nil {
			dv[i] += F(scale * pass * 2 * e / n)
		}
	}
	return s / n
}
