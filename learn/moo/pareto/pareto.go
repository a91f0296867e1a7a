// Package pareto holds the order-theoretic core of NSGA-II: Pareto and
// constrained domination, fast non-dominated sorting and crowding distance,
// all on objective vectors in minimisation form (a maximised objective is
// negated before it gets here).
//
// References: K. Deb, A. Pratap, S. Agarwal, T. Meyarivan, "A fast and elitist
// multiobjective genetic algorithm: NSGA-II", IEEE Trans. Evol. Comput. 6(2),
// 2002 (hereafter Deb 2002), sections III-A (fast non-dominated sort), III-B
// (crowding distance) and VI (constrained domination); K. Deb, "An efficient
// constraint handling method for genetic algorithms", Comput. Methods Appl.
// Mech. Engrg. 186, 2000.
package pareto

import (
	"cmp"
	"math"
	"slices"
)

// Relation is the outcome of comparing two solutions by (constrained)
// domination.
type Relation int

// Possible relations between a and b.
const (
	// Incomparable: neither dominates the other (also for identical vectors).
	Incomparable Relation = iota
	// ADominates: a dominates b.
	ADominates
	// BDominates: b dominates a.
	BDominates
)

// Compare returns the Pareto relation between objective vectors a and b (same
// length, minimisation form): a dominates b when it is no worse in every
// objective and strictly better in at least one (Deb 2002, section II).
func Compare(a, b []float64) Relation {
	aBetter, bBetter := false, false
	for i, ai := range a {
		switch bi := b[i]; {
		case ai < bi:
			aBetter = true
		case bi < ai:
			bBetter = true
		}
		if aBetter && bBetter {
			return Incomparable
		}
	}
	switch {
	case aBetter:
		return ADominates
	case bBetter:
		return BDominates
	}
	return Incomparable
}

// CompareConstrained is constrained domination (Deb 2000; Deb 2002, section
// VI, definition 1): cvA and cvB are the total constraint violations (0 means
// feasible). A feasible solution dominates an infeasible one; of two
// infeasible solutions the one with the smaller violation dominates; two
// feasible solutions are compared by Compare. Two infeasible solutions with
// equal violation are incomparable whatever their objectives, so callers may
// leave the objectives of infeasible solutions unset (NaN).
func CompareConstrained(a []float64, cvA float64, b []float64, cvB float64) Relation {
	switch feasA, feasB := cvA <= 0, cvB <= 0; {
	case feasA && feasB:
		return Compare(a, b)
	case feasA:
		return ADominates
	case feasB:
		return BDominates
	case cvA < cvB:
		return ADominates
	case cvB < cvA:
		return BDominates
	}
	return Incomparable
}

// Sorter performs non-dominated sorting and crowding-distance assignment,
// keeping its scratch buffers between calls so that a generation loop does
// not allocate. The zero value is ready to use. A Sorter must not be used by
// two goroutines at once; the slices it returns are valid until the next call.
type Sorter struct {
	count  []int   // n_p in Deb 2002: how many solutions dominate p
	dom    []int   // flattened S_p lists: solutions dominated by p
	domOff []int   // dom[domOff[p]:domOff[p+1]] is S_p
	pairs  []int32 // (p, q) with p dominating q, before flattening
	order  []int   // the solutions front by front
	fronts [][]int // views into order
	byObj  []int   // crowding: a front sorted on one objective
}

// Sort partitions the solutions into fronts F1, F2, ... by the fast
// non-dominated sort of Deb 2002 (section III-A, O(M N^2) comparisons): F1 holds
// the solutions no other solution dominates, F2 those dominated only by
// members of F1, and so on. f[i] is solution i's objective vector in
// minimisation form; cv[i] its total constraint violation, or cv is nil when
// every solution is feasible, in which case plain Pareto domination is used.
// Each front lists indices in increasing order.
func (s *Sorter) Sort(f [][]float64, cv []float64) [][]int {
	n := len(f)
	s.count = resize(s.count, n)
	clear(s.count)
	s.pairs = s.pairs[:0]
	for p := 0; p < n; p++ {
		for q := p + 1; q < n; q++ {
			var r Relation
			if cv == nil {
				r = Compare(f[p], f[q])
			} else {
				r = CompareConstrained(f[p], cv[p], f[q], cv[q])
			}
			switch r {
			case ADominates:
				s.pairs = append(s.pairs, int32(p), int32(q))
				s.count[q]++
			case BDominates:
				s.pairs = append(s.pairs, int32(q), int32(p))
				s.count[p]++
			}
		}
	}
	// Flatten the S_p lists with a counting sort on p, which keeps each list
	// in increasing q because pairs were generated in (p, q) order.
	s.domOff = resize(s.domOff, n+1)
	clear(s.domOff)
	for k := 0; k < len(s.pairs); k += 2 {
		s.domOff[s.pairs[k]+1]++
	}
	for p := 0; p < n; p++ {
		s.domOff[p+1] += s.domOff[p]
	}
	s.dom = resize(s.dom, len(s.pairs)/2)
	fill := s.scratchInts(n)
	copy(fill, s.domOff[:n])
	for k := 0; k < len(s.pairs); k += 2 {
		p := s.pairs[k]
		s.dom[fill[p]] = int(s.pairs[k+1])
		fill[p]++
	}

	s.order = resize(s.order, n)[:0]
	s.fronts = s.fronts[:0]
	for p := 0; p < n; p++ {
		if s.count[p] == 0 {
			s.order = append(s.order, p)
		}
	}
	start := 0
	for start < len(s.order) {
		end := len(s.order)
		front := s.order[start:end]
		s.fronts = append(s.fronts, front)
		for _, p := range front {
			for _, q := range s.dom[s.domOff[p]:s.domOff[p+1]] {
				s.count[q]--
				if s.count[q] == 0 {
					s.order = append(s.order, q)
				}
			}
		}
		slices.Sort(s.order[end:])
		start = end
	}
	if len(s.order) < n {
		// Only reachable when the relation has a cycle, which NaN objectives
		// of feasible solutions can create; callers reject those, and this
		// keeps every solution in some front if one slips through.
		seen := s.scratchInts(n)
		clear(seen)
		for _, p := range s.order {
			seen[p] = 1
		}
		end := len(s.order)
		for p := 0; p < n; p++ {
			if seen[p] == 0 {
				s.order = append(s.order, p)
			}
		}
		s.fronts = append(s.fronts, s.order[end:])
	}
	return s.fronts
}

// scratchInts returns a reusable int buffer of length n; it aliases byObj,
// which Sort and Crowding never use at the same time.
func (s *Sorter) scratchInts(n int) []int {
	s.byObj = resize(s.byObj, n)
	return s.byObj
}

// Crowding writes into dist[k] the crowding distance of solution front[k]
// within the front (Deb 2002, section III-B): for each objective the front is
// sorted on it, the two boundary solutions get +Inf, and every other solution
// adds the normalised gap between its two neighbours,
// (f_m[next] - f_m[prev]) / (f_m^max - f_m^min). An objective on which the whole
// front takes one value adds nothing. Fronts of one or two solutions are all
// boundary. Ties in an objective are broken by index, so the result is
// deterministic. len(dist) must be at least len(front).
func (s *Sorter) Crowding(f [][]float64, front []int, dist []float64) {
	l := len(front)
	dist = dist[:l]
	clear(dist)
	if l <= 2 {
		for k := range dist {
			dist[k] = math.Inf(1)
		}
		return
	}
	nObj := len(f[front[0]])
	s.byObj = resize(s.byObj, l)
	for m := 0; m < nObj; m++ {
		// byObj holds positions k into front, sorted on objective m.
		for k := range s.byObj {
			s.byObj[k] = k
		}
		slices.SortStableFunc(s.byObj, func(a, b int) int {
			return cmp.Compare(f[front[a]][m], f[front[b]][m])
		})
		lo, hi := f[front[s.byObj[0]]][m], f[front[s.byObj[l-1]]][m]
		dist[s.byObj[0]] = math.Inf(1)
		dist[s.byObj[l-1]] = math.Inf(1)
		span := hi - lo
		if !(span > 0) || math.IsInf(span, 0) {
			// Degenerate objective: no spread to normalise by.
			continue
		}
		for k := 1; k < l-1; k++ {
			i := s.byObj[k]
			dist[i] += (f[front[s.byObj[k+1]]][m] - f[front[s.byObj[k-1]]][m]) / span
		}
	}
}

// Sort is Sorter.Sort with a fresh Sorter; the fronts it returns are the
// caller's to keep.
func Sort(f [][]float64, cv []float64) [][]int {
	var s Sorter
	return s.Sort(f, cv)
}

// Crowding returns the crowding distances of the solutions of one front,
// dist[k] belonging to front[k]; see Sorter.Crowding.
func Crowding(f [][]float64, front []int) []float64 {
	var s Sorter
	dist := make([]float64, len(front))
	s.Crowding(f, front, dist)
	return dist
}

// NonDominated returns the indices, in increasing order, of the solutions
// that no other solution (constrained-)dominates and that are feasible (cv nil
// means all are). It is the first front restricted to feasible solutions.
func NonDominated(f [][]float64, cv []float64) []int {
	fronts := Sort(f, cv)
	if len(fronts) == 0 {
		return nil
	}
	out := make([]int, 0, len(fronts[0]))
	for _, i := range fronts[0] {
		if cv == nil || cv[i] <= 0 {
			out = append(out, i)
		}
	}
	return out
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
