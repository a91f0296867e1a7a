// Package nsga2 implements NSGA-II (K. Deb, A. Pratap, S. Agarwal, T.
// Meyarivan, "A fast and elitist multiobjective genetic algorithm: NSGA-II",
// IEEE Trans. Evol. Comput. 6(2), 2002) as a moo.Method driven by reverse
// communication: Ask proposes a batch, the caller evaluates it, Tell reports
// the values and advances one generation.
//
// One generation, as in Deb 2002 section III-C:
//  1. Mating: parents are picked by crowded binary tournament (lower
//     non-domination rank wins, then larger crowding distance, then a coin
//     flip); each tournament's two competitors come from a stream of random
//     permutations of the population, so every member competes about twice
//     per generation, as in Deb's code.
//  2. Variation: with probability CrossoverProb the two parents are crossed
//     (SBX by default), otherwise copied; each child is mutated (polynomial by
//     default) and repaired (integer variables rounded, all clamped).
//  3. Duplicate elimination, as pymoo does by default: a child equal to a
//     member of the population or to an earlier child is discarded and mating
//     repeats for the shortfall, up to MaxMatingRounds rounds. This keeps
//     integer populations from collapsing to copies; on a small integer space
//     a batch may come out short (even empty) when no new point can be found.
//  4. Elitist survival: parents and offspring are merged, sorted into fronts
//     by constrained domination (moo/pareto) and the next population is
//     filled front by front; the front that does not fit is cut by
//     decreasing crowding distance, ties broken at random.
//
// Constraints: constrained domination (Deb 2002 section VI). As in pymoo,
// infeasible members get crowding distance zero, so among equally infeasible
// members the choice is random and their objective values are never read.
//
// Integer variables are varied as reals within bounds widened by half a unit
// on each side, [lo-0.5, hi+0.5], and rounded half to even; the widening gives
// the bounds the same share of the rounded values as interior integers
// (pymoo rounds within [lo, hi], halving the bounds' share).
//
// Randomness comes from the rand.Source given to New and is drawn only in Ask
// and Tell, on the caller's goroutine, in an order that depends on nothing
// but the source and the evaluations: one seed gives one run.
package nsga2

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/operator"
	"github.com/cclab/cclab/learn/moo/pareto"
)

// Settings configures NSGA-II. The zero value gives pymoo's NSGA-II defaults.
type Settings struct {
	// PopSize is the population size N, also the number of offspring per
	// generation. Zero means 100; must be >= 2.
	PopSize int
	// Crossover recombines two parents. Nil means operator.SBX{} (eta_c 15,
	// per-variable probability 0.5).
	Crossover operator.Crossover
	// CrossoverProb is the probability that a mating pair is crossed rather
	// than copied. Zero means 0.9 (Deb 2002, pymoo); must be in (0, 1]. Use
	// operator.NoCrossover to disable crossover.
	CrossoverProb float64
	// Mutation perturbs each child. Nil means operator.Polynomial{} (eta_m
	// 20, per-variable probability 1/n).
	Mutation operator.Mutation
	// Initial optionally seeds the initial population with these points (at
	// most PopSize, each inside the variables' domains, e.g. a controller's
	// default parameters); the rest is drawn uniformly. Duplicates are
	// dropped.
	Initial [][]float64
	// MaxMatingRounds bounds the rounds of mating run to replace duplicate
	// children (and of sampling for the initial population, times PopSize).
	// Zero means 100 (pymoo's n_max_iterations); must be >= 1.
	MaxMatingRounds int
}

// Optimizer is an NSGA-II run in progress. It implements moo.Method. It is
// not safe for concurrent use.
type Optimizer struct {
	p      moo.Problem
	cons   bool // the problem has constraints: sort by constrained domination
	n      int  // population size
	cx     operator.Crossover
	cxProb float64
	mut    operator.Mutation
	init   [][]float64
	rounds int
	rng    *rand.Rand
	lo, hi []float64 // variation bounds (integer variables widened)

	pop     []member
	pending []moo.Candidate
	gen     int

	// Scratch, reused every generation.
	sorter pareto.Sorter
	f      [][]float64
	cv     []float64
	dist   []float64
	order  []int
	perm   []int
	permAt int
	seen   xset
}

// member is a population member with its NSGA-II bookkeeping.
type member struct {
	ind   moo.Individual
	f     []float64 // objectives in minimisation form
	rank  int       // 0 is the first front
	crowd float64
}

var _ moo.Method = (*Optimizer)(nil)

// New returns an NSGA-II optimiser for p. src drives every random choice and
// must not be nil (nil is not "the global generator": a run must be
// reproducible); it must not be used elsewhere while the optimiser lives.
func New(p moo.Problem, s Settings, src rand.Source) (*Optimizer, error) {
	if src == nil {
		return nil, errors.New("nsga2: nil random source; pass e.g. rand.NewPCG(seed, 0)")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o := &Optimizer{
		p:      p,
		cons:   len(p.Constraints) > 0,
		n:      s.PopSize,
		cx:     s.Crossover,
		cxProb: s.CrossoverProb,
		mut:    s.Mutation,
		rounds: s.MaxMatingRounds,
		rng:    rand.New(src),
	}
	if o.n == 0 {
		o.n = 100
	}
	if o.n < 2 {
		return nil, fmt.Errorf("nsga2: PopSize %d; want at least 2", s.PopSize)
	}
	if o.cx == nil {
		o.cx = operator.SBX{}
	}
	if o.mut == nil {
		o.mut = operator.Polynomial{}
	}
	if err := operator.Validate(o.cx); err != nil {
		return nil, fmt.Errorf("nsga2: %w", err)
	}
	if err := operator.Validate(o.mut); err != nil {
		return nil, fmt.Errorf("nsga2: %w", err)
	}
	if o.cxProb == 0 {
		o.cxProb = 0.9
	}
	if !(o.cxProb > 0 && o.cxProb <= 1) {
		return nil, fmt.Errorf("nsga2: CrossoverProb %v; want a probability in (0, 1] (0 means the default 0.9)", s.CrossoverProb)
	}
	if o.rounds == 0 {
		o.rounds = 100
	}
	if o.rounds < 1 {
		return nil, fmt.Errorf("nsga2: MaxMatingRounds %d; want at least 1", s.MaxMatingRounds)
	}
	if len(s.Initial) > o.n {
		return nil, fmt.Errorf("nsga2: %d initial points for a population of %d", len(s.Initial), o.n)
	}
	for i, x := range s.Initial {
		if len(x) != len(p.Variables) {
			return nil, fmt.Errorf("nsga2: initial point %d has %d values, want %d (%v)", i, len(x), len(p.Variables), p.VariableNames())
		}
		for j, v := range p.Variables {
			if !v.Contains(x[j]) {
				return nil, fmt.Errorf("nsga2: initial point %d: %s = %v is outside the %s range [%v, %v]", i, v.Name, x[j], v.Kind, v.Lower, v.Upper)
			}
		}
		o.init = append(o.init, slices.Clone(x))
	}
	nv := len(p.Variables)
	o.lo, o.hi = make([]float64, nv), make([]float64, nv)
	for j, v := range p.Variables {
		o.lo[j], o.hi[j] = v.Lower, v.Upper
		if v.Kind == moo.Integer {
			o.lo[j] -= 0.5
			o.hi[j] += 0.5
		}
	}
	o.seen.m = make(map[uint64]int)
	return o, nil
}

// Problem implements moo.Method.
func (o *Optimizer) Problem() moo.Problem { return o.p }

// PopulationSize implements moo.Method.
func (o *Optimizer) PopulationSize() int { return o.n }

// Generation implements moo.Method.
func (o *Optimizer) Generation() int { return o.gen }

// Population implements moo.Method.
func (o *Optimizer) Population() []moo.Individual {
	out := make([]moo.Individual, len(o.pop))
	for i := range o.pop {
		out[i] = o.pop[i].ind
	}
	return out
}

// Ranks returns the non-domination rank (0 for the first front) and crowding
// distance of each member of Population, in the same order.
func (o *Optimizer) Ranks() (rank []int, crowding []float64) {
	rank = make([]int, len(o.pop))
	crowding = make([]float64, len(o.pop))
	for i := range o.pop {
		rank[i], crowding[i] = o.pop[i].rank, o.pop[i].crowd
	}
	return rank, crowding
}

// Ask implements moo.Method. Each candidate's X is a fresh slice.
func (o *Optimizer) Ask() []moo.Candidate {
	if o.pending == nil {
		var xs [][]float64
		if o.gen == 0 {
			xs = o.sample()
		} else {
			xs = o.offspring()
		}
		o.pending = make([]moo.Candidate, len(xs))
		for i, x := range xs {
			o.pending[i] = moo.Candidate{X: x, Generation: o.gen + 1, Index: i, Seed: o.rng.Uint64()}
		}
	}
	out := make([]moo.Candidate, len(o.pending))
	for i, c := range o.pending {
		c.X = slices.Clone(c.X)
		out[i] = c
	}
	return out
}

// Tell implements moo.Method.
func (o *Optimizer) Tell(evals []moo.Evaluation) ([]moo.Individual, error) {
	if o.pending == nil {
		return nil, errors.New("nsga2: Tell without an outstanding Ask")
	}
	if len(evals) != len(o.pending) {
		return nil, fmt.Errorf("nsga2: Tell got %d evaluations for a batch of %d", len(evals), len(o.pending))
	}
	inds := make([]moo.Individual, len(evals))
	for i, e := range evals {
		ind, err := o.p.NewIndividual(o.pending[i], e)
		if err != nil {
			return nil, fmt.Errorf("nsga2: %w", err)
		}
		inds[i] = ind
	}
	merged := slices.Grow(slices.Clone(o.pop), len(inds))
	for _, ind := range inds {
		m := member{ind: ind}
		if ind.Feasible() {
			m.f = o.p.Minimized(ind.Objectives, nil)
		} else {
			m.f = ind.Objectives // never read: see pareto.CompareConstrained
		}
		merged = append(merged, m)
	}
	o.pop = o.survive(merged)
	o.pending = nil
	o.gen++
	return inds, nil
}

// survive selects the next population from merged by non-domination rank
// and crowding distance (Deb 2002, section III-C and Fig. 2), setting the
// survivors' rank and crowding.
func (o *Optimizer) survive(merged []member) []member {
	o.f = o.f[:0]
	o.cv = o.cv[:0]
	for i := range merged {
		o.f = append(o.f, merged[i].f)
		o.cv = append(o.cv, merged[i].ind.Violation)
	}
	cv := o.cv
	if !o.cons {
		cv = nil
	}
	fronts := o.sorter.Sort(o.f, cv)
	next := make([]member, 0, min(o.n, len(merged)))
	for rank, front := range fronts {
		if len(next) == o.n {
			break
		}
		o.dist = slices.Grow(o.dist[:0], len(front))[:len(front)]
		if merged[front[0]].ind.Feasible() {
			o.sorter.Crowding(o.f, front, o.dist)
		} else {
			clear(o.dist)
		}
		for k, i := range front {
			merged[i].rank, merged[i].crowd = rank, o.dist[k]
		}
		if len(next)+len(front) <= o.n {
			for _, i := range front {
				next = append(next, merged[i])
			}
			continue
		}
		// The last front does not fit: keep the least crowded, breaking
		// ties (equal or infinite distances) at random.
		o.order = slices.Grow(o.order[:0], len(front))[:len(front)]
		for k := range o.order {
			o.order[k] = k
		}
		o.rng.Shuffle(len(o.order), func(a, b int) { o.order[a], o.order[b] = o.order[b], o.order[a] })
		slices.SortStableFunc(o.order, func(a, b int) int { return cmp.Compare(o.dist[b], o.dist[a]) })
		for _, k := range o.order[:o.n-len(next)] {
			next = append(next, merged[front[k]])
		}
	}
	return next
}

// sample draws the initial population: the Initial points, then uniform
// points, without duplicates.
func (o *Optimizer) sample() [][]float64 {
	o.seen.reset()
	xs := make([][]float64, 0, o.n)
	for _, x := range o.init {
		if o.seen.add(x) {
			xs = append(xs, slices.Clone(x))
		}
	}
	for tries := 0; len(xs) < o.n && tries < o.rounds*o.n; tries++ {
		x := make([]float64, len(o.p.Variables))
		for j, v := range o.p.Variables {
			if v.Kind == moo.Integer {
				x[j] = v.Lower + float64(o.rng.Int64N(int64(v.Upper-v.Lower)+1))
			} else {
				x[j] = v.Lower + o.rng.Float64()*(v.Upper-v.Lower)
			}
		}
		if o.seen.add(x) {
			xs = append(xs, x)
		}
	}
	return xs
}

// offspring makes up to N children that differ from the population and
// from each other.
func (o *Optimizer) offspring() [][]float64 {
	o.seen.reset()
	for i := range o.pop {
		o.seen.add(o.pop[i].ind.X)
	}
	nv := len(o.p.Variables)
	kids := make([][]float64, 0, o.n)
	var c1, c2 []float64
	for round := 0; round < o.rounds && len(kids) < o.n; round++ {
		for matings := (o.n - len(kids) + 1) / 2; matings > 0; matings-- {
			a := o.tournament()
			b := o.tournament()
			if c1 == nil {
				c1 = make([]float64, nv)
			}
			if c2 == nil {
				c2 = make([]float64, nv)
			}
			pa, pb := o.pop[a].ind.X, o.pop[b].ind.X
			if o.rng.Float64() < o.cxProb {
				o.cx.Cross(o.rng, o.lo, o.hi, pa, pb, c1, c2)
			} else {
				copy(c1, pa)
				copy(c2, pb)
			}
			for _, c := range [2]*[]float64{&c1, &c2} {
				x := *c
				o.mut.Mutate(o.rng, o.lo, o.hi, x)
				for j, v := range o.p.Variables {
					x[j] = v.Repair(x[j])
				}
				if len(kids) < o.n && o.seen.add(x) {
					kids = append(kids, x)
					*c = nil // taken; a duplicate's buffer is reused
				}
			}
		}
	}
	return kids
}

// tournament returns the index of the winner of a crowded binary tournament
// (Deb 2002, the crowded-comparison operator of section III-B) between the
// next two competitors of the permutation stream.
func (o *Optimizer) tournament() int {
	a, b := o.competitor(), o.competitor()
	ma, mb := &o.pop[a], &o.pop[b]
	switch {
	case ma.rank < mb.rank:
		return a
	case mb.rank < ma.rank:
		return b
	case ma.crowd > mb.crowd:
		return a
	case mb.crowd > ma.crowd:
		return b
	}
	if o.rng.IntN(2) == 0 {
		return a
	}
	return b
}

// competitor returns the next index of a stream of concatenated random
// permutations of the population.
func (o *Optimizer) competitor() int {
	if o.permAt >= len(o.perm) || len(o.perm) != len(o.pop) {
		o.perm = slices.Grow(o.perm[:0], len(o.pop))[:len(o.pop)]
		for i := range o.perm {
			o.perm[i] = i
		}
		o.rng.Shuffle(len(o.perm), func(i, j int) { o.perm[i], o.perm[j] = o.perm[j], o.perm[i] })
		o.permAt = 0
	}
	o.permAt++
	return o.perm[o.permAt-1]
}

// xset is a set of decision vectors compared by value, for duplicate
// elimination. Lookups go through a hash of the bits; vectors are compared
// element by element, so a hash collision costs time, never correctness.
type xset struct {
	m  map[uint64]int // hash -> index in xs of the first vector with it
	xs [][]float64
}

func (s *xset) reset() {
	clear(s.m)
	clear(s.xs)
	s.xs = s.xs[:0]
}

// add inserts x unless an equal vector is present, and reports whether it
// did. The set keeps x itself, not a copy.
func (s *xset) add(x []float64) bool {
	h := hashX(x)
	if i, ok := s.m[h]; ok {
		if slices.Equal(s.xs[i], x) {
			return false
		}
		for _, y := range s.xs {
			if slices.Equal(y, x) {
				return false
			}
		}
	} else {
		s.m[h] = len(s.xs)
	}
	s.xs = append(s.xs, x)
	return true
}

// hashX is FNV-1a over the vector's bits, with -0 folded onto +0 so that
// values equal under == hash alike.
func hashX(x []float64) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for _, v := range x {
		if v == 0 {
			v = 0
		}
		b := math.Float64bits(v)
		for k := 0; k < 64; k += 8 {
			h ^= (b >> k) & 0xff
			h *= prime
		}
	}
	return h
}
