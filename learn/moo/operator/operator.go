// Package operator holds the variation operators of a real-coded genetic
// algorithm: crossovers that make two children from two parents and
// mutations that perturb one child. They work on plain []float64 vectors with
// per-variable bounds; integer variables are handled by the caller, which
// widens their bounds by half a unit on each side before variation and rounds
// afterwards (see moo/nsga2).
//
// Operators draw random numbers only from the *rand.Rand they are given, hold
// no state between calls and do not allocate.
//
// Available by name (CrossoverByName, MutationByName):
//
//	crossover  sbx      simulated binary crossover (Deb and Agrawal 1995), pymoo's bounded form
//	           mean     the Vegas paper's crossover: each gene the parents' mean or the mean ± mean deviation
//	           none     children are copies of the parents
//	mutation   pm       polynomial mutation (Deb and Goyal 1996), pymoo's bounded form
//	           uniform  the Vegas paper's mutation: a gene is redrawn uniformly within its bounds
//	           none     no mutation
package operator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Crossover makes two children from two parents.
type Crossover interface {
	// Cross writes the children of parents p1 and p2 into c1 and c2. lo and
	// hi are the per-variable bounds; children stay within them. All slices
	// have the same length; c1 and c2 must not alias the parents.
	Cross(r *rand.Rand, lo, hi, p1, p2, c1, c2 []float64)
}

// Mutation perturbs a vector in place.
type Mutation interface {
	// Mutate perturbs x in place within the bounds lo and hi.
	Mutate(r *rand.Rand, lo, hi, x []float64)
}

// SBX is simulated binary crossover (K. Deb and R. B. Agrawal, "Simulated
// binary crossover for continuous search space", Complex Systems 9, 1995) in
// the bounded form of Deb's NSGA-II C code and pymoo (operators/crossover/
// sbx.py): the spread factor's distribution is truncated so that children
// fall within the bounds. Its zero value uses pymoo's defaults.
type SBX struct {
	// Eta is the distribution index eta_c: larger values keep children
	// closer to their parents. Zero means 15 (pymoo's NSGA-II default); must
	// be >= 0.
	Eta float64
	// VarProb is the probability that a given variable is recombined. Zero
	// means 0.5 (pymoo's prob_var); must be in [0, 1].
	VarProb float64
}

// sbxEps is pymoo's threshold below which two parent genes count as equal
// and are not recombined (the spread factor would divide by zero).
const sbxEps = 1e-14

// Cross implements Crossover.
func (s SBX) Cross(r *rand.Rand, lo, hi, p1, p2, c1, c2 []float64) {
	eta, prob := s.Eta, s.VarProb
	if eta == 0 {
		eta = 15
	}
	if prob == 0 {
		prob = 0.5
	}
	copy(c1, p1)
	copy(c2, p2)
	for i := range p1 {
		if r.Float64() >= prob {
			continue
		}
		x1, x2 := p1[i], p2[i]
		if math.Abs(x1-x2) <= sbxEps || lo[i] >= hi[i] {
			continue
		}
		y1, y2 := min(x1, x2), max(x1, x2)
		delta := y2 - y1
		u := r.Float64()
		// Deb's bounded SBX: beta is the spread that would put a child on
		// the nearer bound; the polynomial distribution of the spread factor
		// is truncated at it. One u serves both children, as in Deb's code.
		bq1 := sbxBetaQ(1+2*(y1-lo[i])/delta, eta, u)
		bq2 := sbxBetaQ(1+2*(hi[i]-y2)/delta, eta, u)
		a := 0.5 * ((y1 + y2) - bq1*delta)
		b := 0.5 * ((y1 + y2) + bq2*delta)
		// Each child goes to either parent's slot with probability 1/2
		// (pymoo's prob_bin = 0.5, Deb's "if rand <= 0.5 swap").
		if r.Float64() < 0.5 {
			a, b = b, a
		}
		c1[i] = clamp(a, lo[i], hi[i])
		c2[i] = clamp(b, lo[i], hi[i])
	}
}

// sbxBetaQ draws the spread factor for bound-derived beta with uniform u.
func sbxBetaQ(beta, eta, u float64) float64 {
	alpha := 2 - math.Pow(beta, -(eta+1))
	if u <= 1/alpha {
		return math.Pow(u*alpha, 1/(eta+1))
	}
	return math.Pow(1/(2-u*alpha), 1/(eta+1))
}

// Mean is the crossover of the Vegas/NSGA-II paper (Ma et al., section 2:
// "make the crossover operator to randomly select mean value or mean
// deviation so as to generate new chromosome"). The paper gives no formula;
// our reading, per gene and with probability 1/2 each: both children take
// the parents' mean m = (x1+x2)/2, or they take m + d and m - d (one each,
// in random order), where d = |x1-x2|/2 is the mean absolute deviation of
// the two genes about m. Since m ± d are the parents' own genes, the second
// branch is a uniform crossover, and the operator mixes arithmetic-mean and
// uniform crossover; the children's genes always sum to the parents'. A
// literal reading that makes d itself the new gene was rejected: it is not
// invariant to shifting a parameter's range (for a parameter in [100, 200], d
// is at most 50 and would always be clamped to 100).
type Mean struct{}

// Cross implements Crossover.
func (Mean) Cross(r *rand.Rand, lo, hi, p1, p2, c1, c2 []float64) {
	for i := range p1 {
		x1, x2 := p1[i], p2[i]
		m := 0.5*x1 + 0.5*x2 // no overflow for huge bounds
		if r.Float64() < 0.5 {
			c1[i], c2[i] = m, m
			continue
		}
		d := math.Abs(0.5*x1 - 0.5*x2)
		if r.Float64() < 0.5 {
			d = -d
		}
		c1[i] = clamp(m+d, lo[i], hi[i])
		c2[i] = clamp(m-d, lo[i], hi[i])
	}
}

// NoCrossover copies the parents.
type NoCrossover struct{}

// Cross implements Crossover.
func (NoCrossover) Cross(_ *rand.Rand, _, _, p1, p2, c1, c2 []float64) {
	copy(c1, p1)
	copy(c2, p2)
}

// Polynomial is polynomial mutation (K. Deb and M. Goyal, "A combined genetic
// adaptive search (GeneAS) for engineering design", 1996) in the bounded
// form of Deb's NSGA-II C code and pymoo (operators/mutation/pm.py), in which
// the perturbation's distribution is scaled so the result stays within the
// bounds. Its zero value uses the usual defaults.
type Polynomial struct {
	// Eta is the distribution index eta_m: larger values make smaller
	// perturbations. Zero means 20 (pymoo's and Deb's default); must be >= 0.
	Eta float64
	// Prob is the probability that a given variable is mutated. Zero means
	// 1/n for n variables (Deb 2002); must be in [0, 1]. Unlike pymoo 0.6
	// there is no second, per-individual gate (its prob = 0.9).
	Prob float64
}

// Mutate implements Mutation.
func (p Polynomial) Mutate(r *rand.Rand, lo, hi, x []float64) {
	eta, prob := p.Eta, p.Prob
	if eta == 0 {
		eta = 20
	}
	if prob == 0 {
		prob = 1 / float64(len(x))
	}
	pow := 1 / (eta + 1)
	for i, xi := range x {
		if r.Float64() >= prob || lo[i] >= hi[i] {
			continue
		}
		span := hi[i] - lo[i]
		d1 := (xi - lo[i]) / span
		d2 := (hi[i] - xi) / span
		u := r.Float64()
		var dq float64
		if u <= 0.5 {
			v := 2*u + (1-2*u)*math.Pow(1-d1, eta+1)
			dq = math.Pow(v, pow) - 1
		} else {
			v := 2*(1-u) + 2*(u-0.5)*math.Pow(1-d2, eta+1)
			dq = 1 - math.Pow(v, pow)
		}
		x[i] = clamp(xi+dq*span, lo[i], hi[i])
	}
}

// Uniform is the mutation of the Vegas/NSGA-II paper ("randomly endow an
// individual with new value", section 2), known elsewhere as random
// resetting: each variable, with probability Prob, is replaced by a value
// drawn uniformly from its bounds, independent of the old value.
type Uniform struct {
	// Prob is the probability that a given variable is redrawn. Zero means
	// 1/n for n variables; must be in [0, 1].
	Prob float64
}

// Mutate implements Mutation.
func (u Uniform) Mutate(r *rand.Rand, lo, hi, x []float64) {
	prob := u.Prob
	if prob == 0 {
		prob = 1 / float64(len(x))
	}
	for i := range x {
		if r.Float64() < prob {
			x[i] = lo[i] + r.Float64()*(hi[i]-lo[i])
		}
	}
}

// NoMutation leaves vectors unchanged.
type NoMutation struct{}

// Mutate implements Mutation.
func (NoMutation) Mutate(_ *rand.Rand, _, _, _ []float64) {}

func clamp(x, lo, hi float64) float64 {
	return max(lo, min(hi, x))
}

// CrossoverNames and MutationNames list the names accepted by
// CrossoverByName and MutationByName.
var (
	CrossoverNames = []string{"sbx", "mean", "none"}
	MutationNames  = []string{"pm", "uniform", "none"}
)

// CrossoverByName returns the named crossover with its default settings.
func CrossoverByName(name string) (Crossover, error) {
	switch name {
	case "sbx":
		return SBX{}, nil
	case "mean":
		return Mean{}, nil
	case "none":
		return NoCrossover{}, nil
	}
	return nil, fmt.Errorf("operator: unknown crossover %q; accepted: %s", name, strings.Join(CrossoverNames, ", "))
}

// MutationByName returns the named mutation with its default settings.
func MutationByName(name string) (Mutation, error) {
	switch name {
	case "pm":
		return Polynomial{}, nil
	case "uniform":
		return Uniform{}, nil
	case "none":
		return NoMutation{}, nil
	}
	return nil, fmt.Errorf("operator: unknown mutation %q; accepted: %s", name, strings.Join(MutationNames, ", "))
}

// Validate checks an operator's settings; the zero values are valid.
func Validate(op any) error {
	switch o := op.(type) {
	case SBX:
		if !(o.Eta >= 0) || math.IsInf(o.Eta, 0) {
			return fmt.Errorf("operator: SBX Eta %v must be a finite number >= 0", o.Eta)
		}
		if !(o.VarProb >= 0 && o.VarProb <= 1) {
			return fmt.Errorf("operator: SBX VarProb %v must be in [0, 1]", o.VarProb)
		}
	case Polynomial:
		if !(o.Eta >= 0) || math.IsInf(o.Eta, 0) {
			return fmt.Errorf("operator: polynomial mutation Eta %v must be a finite number >= 0", o.Eta)
		}
		if !(o.Prob >= 0 && o.Prob <= 1) {
			return fmt.Errorf("operator: polynomial mutation Prob %v must be in [0, 1]", o.Prob)
		}
	case Uniform:
		if !(o.Prob >= 0 && o.Prob <= 1) {
			return fmt.Errorf("operator: uniform mutation Prob %v must be in [0, 1]", o.Prob)
		}
	}
	return nil
}
