package plot

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
)

// thinBuckets bounds the points drawn per line: a series sorted by x with
// more than 4×thinBuckets points keeps, per x bucket, its first, lowest,
// highest and last point. That is about one bucket per output pixel column,
// so the drawn envelope is unchanged while SVG files stay small.
const thinBuckets = 700

// extent accumulates the range of the finite values drawn on one axis.
type extent struct {
	lo, hi float64
	n      int
}

func (e *extent) add(v float64) {
	if !isFinite(v) {
		return
	}
	if e.n == 0 || v < e.lo {
		e.lo = v
	}
	if e.n == 0 || v > e.hi {
		e.hi = v
	}
	e.n++
}

func (e *extent) addAll(pts plotter.XYs, x bool) {
	for _, p := range pts {
		if x {
			e.add(p.X)
		} else {
			e.add(p.Y)
		}
	}
}

// axisRange decides the range an axis shows: the fixed limits if given,
// else the data range, widened so it is never empty or of zero height.
func axisRange(a Axis, e extent) (lo, hi float64, err error) {
	if a.Min < a.Max {
		if !isFinite(a.Min) || !isFinite(a.Max) {
			return 0, 0, fmt.Errorf("plot: axis %q: limits [%g, %g] must be finite", a.Label, a.Min, a.Max)
		}
		if a.Log && a.Min <= 0 {
			return 0, 0, fmt.Errorf("plot: axis %q: log axis limits [%g, %g] must be positive", a.Label, a.Min, a.Max)
		}
		return a.Min, a.Max, nil
	}
	if e.n == 0 {
		if a.Log {
			return 1, 10, nil
		}
		return 0, 1, nil
	}
	lo, hi = e.lo, e.hi
	if a.IncludeZero && !a.Log {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if hi-lo > 1e-12*math.Max(math.Abs(lo), math.Abs(hi)) {
		return lo, hi, nil
	}
	switch {
	case a.Log:
		return lo / 2, hi * 2, nil
	case lo == 0 && a.IncludeZero:
		return 0, 1, nil
	case lo == 0:
		return -1, 1, nil
	default:
		d := math.Abs(lo) * 0.1
		return lo - d, hi + d, nil
	}
}

// drawable reports whether a point can be placed on the axes.
func drawable(x, y float64, xlog, ylog bool) bool {
	return isFinite(x) && isFinite(y) && (!xlog || x > 0) && (!ylog || y > 0)
}

// segments splits one series into runs of drawable points. Breaking the
// line at a skipped point, rather than joining across it, keeps gaps in
// the data visible.
func segments(xs, ys []float64, xlog, ylog bool) []plotter.XYs {
	var segs []plotter.XYs
	var cur plotter.XYs
	for i := range xs {
		if drawable(xs[i], ys[i], xlog, ylog) {
			cur = append(cur, plotter.XY{X: xs[i], Y: ys[i]})
			continue
		}
		if len(cur) > 0 {
			segs = append(segs, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// checkSeries rejects a series whose x and y slices do not pair up.
func checkSeries(kind string, s Series) error {
	if len(s.X) != len(s.Y) {
		return fmt.Errorf("plot: %s series %q: %d x values but %d y values", kind, s.Name, len(s.X), len(s.Y))
	}
	return nil
}

// thin reduces a long series sorted by x to at most 4 points per bucket
// (first, minimum, maximum and last, in their original order). Unsorted
// series are returned unchanged because bucketing would reorder them.
func thin(pts plotter.XYs, buckets int, xlog bool) plotter.XYs {
	n := len(pts)
	if n <= 4*buckets {
		return pts
	}
	pos := func(x float64) float64 {
		if xlog {
			return math.Log10(x)
		}
		return x
	}
	for i := 1; i < n; i++ {
		if pts[i].X < pts[i-1].X {
			return pts
		}
	}
	x0, x1 := pos(pts[0].X), pos(pts[n-1].X)
	if !(x1 > x0) {
		return pts
	}
	bucket := func(x float64) int {
		return min(int((pos(x)-x0)/(x1-x0)*float64(buckets)), buckets-1)
	}
	out := make(plotter.XYs, 0, 4*buckets)
	for start := 0; start < n; {
		b := bucket(pts[start].X)
		end := start
		lo, hi := start, start
		for end < n && bucket(pts[end].X) == b {
			if pts[end].Y < pts[lo].Y {
				lo = end
			}
			if pts[end].Y > pts[hi].Y {
				hi = end
			}
			end++
		}
		keep := []int{start, lo, hi, end - 1}
		slices.Sort(keep)
		for i, k := range keep {
			if i == 0 || k != keep[i-1] {
				out = append(out, pts[k])
			}
		}
		start = end
	}
	return out
}
