package nn

import (
	"fmt"
	"math"

	"github.com/cclab/cclab/learn/rl/nn/f32"
)

// Adam is the Adam optimiser (Kingma & Ba 2015, Algorithm 1) with bias
// correction, written in the order torch.optim.Adam uses so results match
// PyTorch's to rounding:
//
//	m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²
//	θ ← θ − (lr / (1−β1ᵗ)) · m / (sqrt(v)/sqrt(1−β2ᵗ) + ε)
type Adam struct {
	// LR is the learning rate. Beta1, Beta2 and Eps default (when zero) to
	// torch's 0.9, 0.999 and 1e-8; SB3's on-policy algorithms use Eps 1e-5.
	LR, Beta1, Beta2, Eps float64
	// T counts steps taken (for bias correction).
	T int64
	// M and V are the first and second moment estimates.
	M, V []float32
}

// NewAdam returns an Adam optimiser for n parameters.
func NewAdam(n int, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, M: make([]float32, n), V: make([]float32, n)}
}

// Step updates params from grads.
func (a *Adam) Step(params, grads []float32) {
	if len(params) != len(a.M) || len(grads) != len(a.M) {
		panic(fmt.Sprintf("nn: Adam for %d parameters stepped with %d params, %d grads", len(a.M), len(params), len(grads)))
	}
	a.T++
	b1, b2 := a.Beta1, a.Beta2
	bc1 := 1 - math.Pow(b1, float64(a.T))
	bc2 := 1 - math.Pow(b2, float64(a.T))
	step := float32(a.LR / bc1)
	sq := float32(1 / math.Sqrt(bc2))
	// One fused pass (Go assembly where available) in exactly this
	// order, rounded to float32 at every operation:
	//   m = b1·m + (1−b1)·g;  v = b2·v + ((1−b2)·g)·g
	//   θ −= (step·m) / (sqrt(v)·sq + eps)
	f32.Adam(params, grads, a.M[:len(params)], a.V[:len(params)], float32(b1), float32(b2), step, sq, float32(a.Eps))
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// RMSprop is torch.optim.RMSprop without momentum or centring, which SB3's
// A2C uses (alpha 0.99, eps 1e-5):
//
//	v ← α·v + (1−α)·g²;  θ ← θ − lr · g / (sqrt(v) + ε)
type RMSprop struct {
	LR, Alpha, Eps float64
	// V is the running average of squared gradients.
	V []float32
}

// NewRMSprop returns an RMSprop optimiser for n parameters with SB3's A2C
// settings (alpha 0.99, eps 1e-5).
func NewRMSprop(n int, lr float64) *RMSprop {
	return &RMSprop{LR: lr, Alpha: 0.99, Eps: 1e-5, V: make([]float32, n)}
}

// Step updates params from grads.
func (o *RMSprop) Step(params, grads []float32) {
	if len(params) != len(o.V) || len(grads) != len(o.V) {
		panic(fmt.Sprintf("nn: RMSprop for %d parameters stepped with %d params, %d grads", len(o.V), len(params), len(grads)))
	}
	a := float32(o.Alpha)
	lr, eps := float32(o.LR), float32(o.Eps)
	v := o.V[:len(params)]
	grads = grads[:len(params)]
	for i, g := range grads {
		vi := a*v[i] + (1-a)*g*g
		v[i] = vi
		params[i] -= lr * g / (sqrt32(vi) + eps)
	}
}

// GradNorm returns the L2 norm of all the given gradient slices together,
// accumulated in float64.
func GradNorm(grads ...[]float32) float64 {
	var s float64
	for _, g := range grads {
		for _, v := range g {
			s += float64(v) * float64(v)
		}
	}
	return math.Sqrt(s)
}

// ClipGradNorm rescales the gradients so that their joint L2 norm is at most
// maxNorm, as torch.nn.utils.clip_grad_norm_ does (scale by
// maxNorm/(norm+1e-6) when that is below 1). It returns the norm before
// clipping.
func ClipGradNorm(maxNorm float64, grads ...[]float32) float64 {
	norm := GradNorm(grads...)
	coef := maxNorm / (norm + 1e-6)
	if coef < 1 {
		c := float32(coef)
		for _, g := range grads {
			for i := range g {
				g[i] *= c
			}
		}
	}
	return norm
}

// Polyak moves target towards source: target ← (1−τ)·target + τ·source
// (SB3's polyak_update; Lillicrap et al. 2016 "soft target updates").
func Polyak(target, source []float32, tau float64) {
	if len(target) != len(source) {
		panic(fmt.Sprintf("nn: Polyak target has %d values, source %d", len(target), len(source)))
	}
	f32.Polyak(target, source, float32(tau))
}
