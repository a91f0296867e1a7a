package moo

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cclab/cclab/learn/moo/indicator"
	"github.com/cclab/cclab/learn/moo/pareto"
)

// Archive keeps the Pareto set of every individual added to it: the feasible
// individuals that no other added feasible individual dominates, then
// deduplicated by decision vector. The result does not depend on the order of
// addition, except for which of several evaluations of one X is reported
// when a noisy evaluator gave them different, mutually non-dominated
// objectives: the earliest added. Individuals with equal objectives but
// different X are all kept: they are different parameter settings with the
// same performance.
//
// Adding costs O(|archive| * objectives). The zero value is not usable; call
// NewArchive.
type Archive struct {
	p       *Problem
	members []archived // the non-dominated set, in order of addition
	buf     []float64
}

type archived struct {
	ind Individual
	f   []float64 // minimisation form
}

// NewArchive returns an empty archive for individuals of problem p.
func NewArchive(p Problem) *Archive {
	return &Archive{p: &p}
}

// Add offers ind to the archive and reports whether it entered the
// non-dominated set (an exact copy, same X and objectives, of a member does
// not). Members it dominates leave.
func (a *Archive) Add(ind Individual) bool {
	if !ind.Feasible() {
		return false
	}
	a.buf = a.p.Minimized(ind.Objectives, a.buf)
	for i := range a.members {
		m := &a.members[i]
		if r := pareto.Compare(m.f, a.buf); r == pareto.ADominates ||
			(r == pareto.Incomparable && slices.Equal(m.f, a.buf) && slices.Equal(m.ind.X, ind.X)) {
			return false
		}
	}
	keep := a.members[:0]
	for _, m := range a.members {
		if pareto.Compare(a.buf, m.f) != pareto.ADominates {
			keep = append(keep, m)
		}
	}
	clear(a.members[len(keep):])
	a.members = append(keep, archived{ind: ind, f: slices.Clone(a.buf)})
	return true
}

// distinct returns the members with an X not seen in an earlier member.
func (a *Archive) distinct() []archived {
	seen := make(map[string]bool, len(a.members))
	out := make([]archived, 0, len(a.members))
	for _, m := range a.members {
		key := xKey(m.ind.X)
		if !seen[key] {
			seen[key] = true
			out = append(out, m)
		}
	}
	return out
}

// xKey is a map key equal for vectors equal under == (-0 is folded onto 0).
func xKey(x []float64) string {
	b := make([]byte, 0, 8*len(x))
	for _, v := range x {
		if v == 0 {
			v = 0
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return string(b)
}

// Len returns the number of members (distinct X).
func (a *Archive) Len() int { return len(a.distinct()) }

// Members returns the members in a fresh slice, sorted by their first
// objective in minimisation form (best first), ties broken by the following
// objectives and then by the order in which they were added.
func (a *Archive) Members() []Individual {
	sorted := a.distinct()
	slices.SortStableFunc(sorted, func(x, y archived) int {
		for j := range x.f {
			if c := cmp.Compare(x.f[j], y.f[j]); c != 0 {
				return c
			}
		}
		return 0
	})
	out := make([]Individual, len(sorted))
	for i, m := range sorted {
		out[i] = m.ind
	}
	return out
}

// minimized returns the objective vectors, in minimisation form, of the
// members Members reports.
func (a *Archive) minimized() [][]float64 {
	d := a.distinct()
	f := make([][]float64, len(d))
	for i, m := range d {
		f[i] = m.f
	}
	return f
}

// ParetoSet returns the Pareto set of inds: the feasible, non-dominated,
// deduplicated individuals, ordered as Archive.Members orders them. It is
// empty when no individual is feasible.
func ParetoSet(p Problem, inds []Individual) []Individual {
	a := NewArchive(p)
	for _, ind := range inds {
		a.Add(ind)
	}
	return a.Members()
}

// Hypervolume returns the hypervolume dominated by the feasible individuals
// of inds, bounded by the reference point ref given in the objectives' own
// units and senses (for a maximised objective, the smallest value that still
// counts). Infeasible individuals are ignored. The units of the result are
// the product of the objectives' units; see NadirReference for a reference
// point and normalisation.
func Hypervolume(p Problem, inds []Individual, ref []float64) (float64, error) {
	if len(ref) != len(p.Objectives) {
		return 0, fmt.Errorf("moo: hypervolume: reference point has %d values, want one per objective (%d)", len(ref), len(p.Objectives))
	}
	var pts [][]float64
	for _, ind := range inds {
		if ind.Feasible() {
			pts = append(pts, p.Minimized(ind.Objectives, nil))
		}
	}
	v, err := indicator.Hypervolume(pts, p.Minimized(ref, nil))
	if err != nil {
		return 0, fmt.Errorf("moo: %w", err)
	}
	return v, nil
}

// HypervolumeTrace returns, for each generation 1..G (G the largest
// Individual.Generation in evaluated), the hypervolume of the Pareto set of
// all individuals evaluated up to and including that generation, with
// reference point ref in the objectives' units (see Hypervolume). evaluated
// is typically Result.Evaluated. Because it measures the cumulative Pareto
// set, the trace never decreases.
func HypervolumeTrace(p Problem, evaluated []Individual, ref []float64) ([]float64, error) {
	if len(ref) != len(p.Objectives) {
		return nil, fmt.Errorf("moo: hypervolume: reference point has %d values, want one per objective (%d)", len(ref), len(p.Objectives))
	}
	minRef := p.Minimized(ref, nil)
	last := 0
	for _, ind := range evaluated {
		last = max(last, ind.Generation)
	}
	byGen := make([][]Individual, last+1)
	for _, ind := range evaluated {
		if ind.Generation < 1 {
			return nil, fmt.Errorf("moo: hypervolume: individual with generation %d; generations start at 1", ind.Generation)
		}
		byGen[ind.Generation] = append(byGen[ind.Generation], ind)
	}
	a := NewArchive(p)
	trace := make([]float64, last)
	for g := 1; g <= last; g++ {
		changed := false
		for _, ind := range byGen[g] {
			changed = a.Add(ind) || changed
		}
		if !changed && g > 1 {
			trace[g-1] = trace[g-2]
			continue
		}
		v, err := indicator.Hypervolume(a.minimized(), minRef)
		if err != nil {
			return nil, fmt.Errorf("moo: %w", err)
		}
		trace[g-1] = v
	}
	return trace, nil
}

// NadirReference returns a reference point for Hypervolume in the
// objectives' units: for each objective, the worst value among the feasible
// individuals pushed further by margin times the objective's range (best to
// worst), or by margin times max(1, |worst|) when the range is zero. A margin
// of 0.1 is customary (it lets the extreme points contribute). It also
// returns the product of the shifted ranges, by which a hypervolume can be
// divided to make it a dimensionless fraction in [0, 1] (zero, and useless,
// if margin is 0 and an objective takes a single value). It fails if no
// individual is feasible.
func NadirReference(p Problem, inds []Individual, margin float64) (ref []float64, volume float64, err error) {
	if !(margin >= 0) || math.IsInf(margin, 0) {
		return nil, 0, fmt.Errorf("moo: reference point margin %v must be a finite number >= 0", margin)
	}
	m := len(p.Objectives)
	best := make([]float64, m)
	worst := make([]float64, m)
	for j := range best {
		best[j], worst[j] = math.Inf(1), math.Inf(-1)
	}
	var f []float64
	found := false
	for _, ind := range inds {
		if !ind.Feasible() {
			continue
		}
		found = true
		f = p.Minimized(ind.Objectives, f)
		for j, v := range f {
			best[j] = min(best[j], v)
			worst[j] = max(worst[j], v)
		}
	}
	if !found {
		return nil, 0, errors.New("moo: reference point: no feasible individual")
	}
	ref = make([]float64, m)
	volume = 1
	for j := range ref {
		span := worst[j] - best[j]
		if span == 0 {
			span = max(1, math.Abs(worst[j]))
		}
		ref[j] = worst[j] + margin*span
		volume *= ref[j] - best[j]
	}
	// Back to the objectives' senses.
	return p.Minimized(ref, nil), volume, nil
}
