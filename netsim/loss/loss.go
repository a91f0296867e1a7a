// Package loss implements random packet-loss models for links: Bernoulli
// (independent losses) and Gilbert-Elliott (bursty losses from a two-state
// Markov chain). Each model owns a seeded random stream.
package loss

import (
	"fmt"
	"math/rand/v2"
)

// Model decides, packet by packet, whether the link loses a packet.
type Model interface {
	// Lose reports whether the next packet is lost.
	Lose() bool
	// Rate returns the long-run loss probability (for reports and for the
	// MARLIN reward's loss_c).
	Rate() float64
}

// None never loses a packet.
type None struct{}

// Lose implements Model.
func (None) Lose() bool { return false }

// Rate implements Model.
func (None) Rate() float64 { return 0 }

// Bernoulli loses each packet independently with probability P.
type Bernoulli struct {
	p   float64
	rnd *rand.Rand
}

// NewBernoulli returns a Bernoulli model; p must be in [0, 1).
func NewBernoulli(p float64, rnd *rand.Rand) (*Bernoulli, error) {
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("bernoulli loss p must be in [0, 1), got %g", p)
	}
	if rnd == nil {
		panic("loss: NewBernoulli needs a random source")
	}
	return &Bernoulli{p: p, rnd: rnd}, nil
}

// Lose implements Model. With p = 0 no random number is drawn, so a lossless
// link leaves the stream untouched.
func (b *Bernoulli) Lose() bool { return b.p > 0 && b.rnd.Float64() < b.p }

// Rate implements Model.
func (b *Bernoulli) Rate() float64 { return b.p }

// GilbertElliott is the two-state Gilbert-Elliott channel. In the Good state
// a packet is lost with probability LossGood, in the Bad state with LossBad;
// after each packet the chain moves Good->Bad with probability P and
// Bad->Good with probability R. With LossGood = 0 and LossBad = 1 it is the
// simple Gilbert model, whose mean burst length is 1/R.
type GilbertElliott struct {
	p, r              float64
	lossGood, lossBad float64
	bad               bool
	rnd               *rand.Rand
}

// GEConfig holds the Gilbert-Elliott parameters.
type GEConfig struct {
	// P is the Good->Bad transition probability per packet.
	P float64
	// R is the Bad->Good transition probability per packet.
	R float64
	// LossGood is the loss probability in the Good state (1-k in Gilbert's
	// notation).
	LossGood float64
	// LossBad is the loss probability in the Bad state (1-h).
	LossBad float64
}

// NewGilbertElliott returns a model starting in the Good state.
func NewGilbertElliott(c GEConfig, rnd *rand.Rand) (*GilbertElliott, error) {
	for _, f := range []struct {
		name string
		v    float64
	}{{"p", c.P}, {"r", c.R}, {"loss_good", c.LossGood}, {"loss_bad", c.LossBad}} {
		if !(f.v >= 0 && f.v <= 1) {
			return nil, fmt.Errorf("gilbert-elliott %s must be in [0, 1], got %g", f.name, f.v)
		}
	}
	if c.R == 0 && c.P > 0 {
		return nil, fmt.Errorf("gilbert-elliott r must be positive when p > 0 (the Bad state would be absorbing)")
	}
	if c.LossGood >= 1 {
		return nil, fmt.Errorf("gilbert-elliott loss_good must be below 1, got %g", c.LossGood)
	}
	if rnd == nil {
		panic("loss: NewGilbertElliott needs a random source")
	}
	return &GilbertElliott{p: c.P, r: c.R, lossGood: c.LossGood, lossBad: c.LossBad, rnd: rnd}, nil
}

// Lose implements Model.
func (g *GilbertElliott) Lose() bool {
	pl := g.lossGood
	if g.bad {
		pl = g.lossBad
	}
	lost := pl > 0 && g.rnd.Float64() < pl
	if g.bad {
		g.bad = g.rnd.Float64() >= g.r
	} else {
		g.bad = g.rnd.Float64() < g.p
	}
	return lost
}

// Rate implements Model: the stationary loss probability
// pi_G*LossGood + pi_B*LossBad with pi_B = P/(P+R).
func (g *GilbertElliott) Rate() float64 {
	if g.p+g.r == 0 {
		return g.lossGood
	}
	pb := g.p / (g.p + g.r)
	return (1-pb)*g.lossGood + pb*g.lossBad
}

// MeanBurst returns the mean number of consecutive packets spent in the Bad
// state, 1/R.
func (g *GilbertElliott) MeanBurst() float64 {
	if g.r == 0 {
		return 0
	}
	return 1 / g.r
}
