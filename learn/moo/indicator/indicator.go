// Package indicator computes quality indicators of an approximation of a
// Pareto front: the hypervolume (exact, any number of objectives, fast for two
// and three) and the inverted generational distances IGD and IGD+.
//
// Every function takes objective vectors in minimisation form (negate a
// maximised objective first, and its reference coordinate with it) and never
// modifies its arguments.
package indicator

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Hypervolume returns the Lebesgue measure of the region dominated by points
// and bounded by the reference point ref (Zitzler and Thiele 1998, the "S
// metric"): the volume of the union of the boxes [p, ref] over all points p.
// A point that is not strictly better than ref in every objective adds
// nothing. Duplicates and dominated points are allowed.
//
// Algorithms, all exact: one objective, ref - min; two objectives, a sort and
// a sweep, O(n log n); three objectives, the dimension sweep of Fonseca,
// Paquete and López-Ibáñez (2006), sweeping the third objective while keeping
// the two-dimensional staircase of the points seen so far and its area up to
// date; the staircase lives in a sorted slice rather than their balanced tree,
// so insertion is O(n) and the whole O(n^2) in the worst case, a few
// milliseconds for 10,000 points. Four or more objectives: the same sweep on
// the last objective with the (d-1)-dimensional volume of each slice computed
// recursively (hypervolume by slicing objectives, While et al. 2006), O(n^(d-1)).
//
// It returns an error if a point's length differs from ref's or if any
// coordinate is NaN or infinite.
func Hypervolume(points [][]float64, ref []float64) (float64, error) {
	d := len(ref)
	if d == 0 {
		return 0, errors.New("indicator: hypervolume: empty reference point")
	}
	if j := nonFinite(ref); j >= 0 {
		return 0, fmt.Errorf("indicator: hypervolume: reference point objective %d is %v; want a finite number", j, ref[j])
	}
	// Keep the points strictly inside the reference box, copied so the
	// recursion may reorder them freely.
	in := make([][]float64, 0, len(points))
	for i, p := range points {
		if len(p) != d {
			return 0, fmt.Errorf("indicator: hypervolume: point %d has %d objectives, reference point has %d", i, len(p), d)
		}
		if j := nonFinite(p); j >= 0 {
			return 0, fmt.Errorf("indicator: hypervolume: point %d objective %d is %v; want a finite number", i, j, p[j])
		}
		if strictlyBetter(p, ref) {
			in = append(in, p)
		}
	}
	return hv(in, ref), nil
}

// nonFinite returns the index of the first NaN or infinite element of v, or -1.
func nonFinite(v []float64) int {
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return j
		}
	}
	return -1
}

func strictlyBetter(p, ref []float64) bool {
	for j, x := range p {
		if !(x < ref[j]) {
			return false
		}
	}
	return true
}

// hv computes the hypervolume of points, all strictly inside the box below
// ref, using only their first len(ref) coordinates. It may reorder points.
func hv(points [][]float64, ref []float64) float64 {
	if len(points) == 0 {
		return 0
	}
	switch len(ref) {
	case 1:
		lo := points[0][0]
		for _, p := range points[1:] {
			lo = min(lo, p[0])
		}
		return ref[0] - lo
	case 2:
		return hv2(points, ref)
	case 3:
		return hv3(points, ref)
	}
	// Slice on the last objective: between consecutive values z_i and
	// z_{i+1}, the dominated region is the (d-1)-dimensional hypervolume of
	// the first i+1 points times the slab thickness.
	last := len(ref) - 1
	slices.SortFunc(points, func(a, b []float64) int { return cmp.Compare(a[last], b[last]) })
	sub := ref[:last]
	var vol float64
	buf := make([][]float64, 0, len(points))
	for i, p := range points {
		next := ref[last]
		if i+1 < len(points) {
			next = points[i+1][last]
		}
		if next == p[last] {
			continue
		}
		buf = append(buf[:0], points[:i+1]...)
		vol += hv(buf, sub) * (next - p[last])
	}
	return vol
}

// hv2 sweeps the points in increasing first objective: each point that
// improves on the best second objective seen so far adds the slab between
// the two second-objective values, from its first objective to ref[0].
func hv2(points [][]float64, ref []float64) float64 {
	slices.SortFunc(points, func(a, b []float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var area float64
	bestY := ref[1]
	for _, p := range points {
		if p[1] < bestY {
			area += (ref[0] - p[0]) * (bestY - p[1])
			bestY = p[1]
		}
	}
	return area
}

type xy struct{ x, y float64 }

// hv3 is the three-dimensional dimension sweep. stairs holds the points
// non-dominated in (f1, f2) among those with smaller f3, sorted by increasing
// x and therefore decreasing y; area is the area they dominate below
// (ref[0], ref[1]).
func hv3(points [][]float64, ref []float64) float64 {
	slices.SortFunc(points, func(a, b []float64) int { return cmp.Compare(a[2], b[2]) })
	stairs := make([]xy, 0, len(points))
	var area, vol float64
	for i, p := range points {
		area += insertStair(&stairs, xy{p[0], p[1]}, ref)
		next := ref[2]
		if i+1 < len(points) {
			next = points[i+1][2]
		}
		vol += area * (next - p[2])
	}
	return vol
}

// insertStair adds q to the staircase and returns the area it adds, the part
// of [q.x, rx] x [q.y, ry] not already dominated.
func insertStair(stairs *[]xy, q xy, ref []float64) float64 {
	s := *stairs
	// pos is the first step with x >= q.x; every step before it has x < q.x.
	pos, _ := slices.BinarySearchFunc(s, q.x, func(e xy, x float64) int { return cmp.Compare(e.x, x) })
	height := ref[1]
	if pos > 0 {
		height = s[pos-1].y
	}
	if height <= q.y {
		return 0 // dominated (weakly) by the step to its left
	}
	// Steps from pos on with y >= q.y are dominated by q: walk them,
	// accumulating the area between their heights and q.y, then drop them.
	var added float64
	x := q.x
	j := pos
	for ; j < len(s) && s[j].y >= q.y; j++ {
		added += (s[j].x - x) * (height - q.y)
		x, height = s[j].x, s[j].y
	}
	right := ref[0]
	if j < len(s) {
		right = s[j].x
	}
	added += (right - x) * (height - q.y)
	*stairs = slices.Replace(s, pos, j, q)
	return added
}

// IGD returns the inverted generational distance of the approximation set
// approx to the reference set front (Coello and Reyes Sierra 2004): the mean,
// over the points z of front, of the Euclidean distance from z to the nearest
// point of approx. It is zero when approx contains every reference point and
// grows both with the distance to the front and with the gaps in coverage.
func IGD(approx, front [][]float64) (float64, error) {
	return igd(approx, front, "IGD", func(a, z []float64) float64 {
		var s float64
		for j, aj := range a {
			d := aj - z[j]
			s += d * d
		}
		return s
	})
}

// IGDPlus returns IGD+ (Ishibuchi, Masuda, Tanigaki, Nojima 2015): like IGD,
// but the distance from reference point z to a counts only the objectives in
// which a is worse than z, d+(z, a) = sqrt(sum_j max(a_j - z_j, 0)^2). Unlike
// IGD it is weakly Pareto compliant: an approximation that dominates another
// never scores worse.
func IGDPlus(approx, front [][]float64) (float64, error) {
	return igd(approx, front, "IGD+", func(a, z []float64) float64 {
		var s float64
		for j, aj := range a {
			if d := aj - z[j]; d > 0 {
				s += d * d
			}
		}
		return s
	})
}

// igd averages over front the square root of the smallest squared distance
// dist2 to a point of approx.
func igd(approx, front [][]float64, name string, dist2 func(a, z []float64) float64) (float64, error) {
	if len(front) == 0 {
		return 0, fmt.Errorf("indicator: %s: empty reference front", name)
	}
	if len(approx) == 0 {
		return 0, fmt.Errorf("indicator: %s: empty approximation set", name)
	}
	d := len(front[0])
	for i, z := range front {
		if len(z) != d {
			return 0, fmt.Errorf("indicator: %s: reference point %d has %d objectives, point 0 has %d", name, i, len(z), d)
		}
		if j := nonFinite(z); j >= 0 {
			return 0, fmt.Errorf("indicator: %s: reference point %d objective %d is %v; want a finite number", name, i, j, z[j])
		}
	}
	for i, a := range approx {
		if len(a) != d {
			return 0, fmt.Errorf("indicator: %s: approximation point %d has %d objectives, reference front has %d", name, i, len(a), d)
		}
		if j := nonFinite(a); j >= 0 {
			return 0, fmt.Errorf("indicator: %s: approximation point %d objective %d is %v; want a finite number", name, i, j, a[j])
		}
	}
	var sum float64
	for _, z := range front {
		best := math.Inf(1)
		for _, a := range approx {
			best = min(best, dist2(a, z))
		}
		sum += math.Sqrt(best)
	}
	return sum / float64(len(front)), nil
}
