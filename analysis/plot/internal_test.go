package plot

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func mustBuild(t *testing.T, b builder) *figure {
	t.Helper()
	f, err := b.build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return f
}

// dataTransforms returns the data-to-canvas transforms of the panel as it
// is laid out in an image of the figure's size.
func dataTransforms(f *figure, pn *panel) (x, y func(float64) vg.Length) {
	c := draw.New(vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(10)))
	dc := pn.plot.DataCanvas(c)
	return pn.plot.Transforms(&dc)
}

func TestPantheonXAxisIsReversed(t *testing.T) {
	f := mustBuild(t, Pantheon("t", []PointSeries{{Name: "a", Points: []Point{{X: 10, Y: 5}, {X: 80, Y: 6}}}}))
	pn := f.panels[0]
	if _, ok := pn.plot.X.Scale.(gplot.InvertedScale); !ok {
		t.Fatalf("x scale is %T, want gplot.InvertedScale", pn.plot.X.Scale)
	}
	if _, ok := pn.plot.Y.Scale.(gplot.InvertedScale); ok {
		t.Fatalf("y scale is inverted, want normal")
	}
	trX, trY := dataTransforms(f, pn)
	if lo, hi := trX(10), trX(80); !(lo > hi) {
		t.Errorf("reversed x: 10 ms drawn at %v, 80 ms at %v; want 10 ms further right", lo, hi)
	}
	if lo, hi := trY(5), trY(6); !(hi > lo) {
		t.Errorf("y: 5 drawn at %v, 6 at %v; want 6 higher", lo, hi)
	}
	if !strings.Contains(pn.xLabel, "reversed") {
		t.Errorf("x label = %q, want it to say the axis is reversed", pn.xLabel)
	}
	if !strings.Contains(pn.xLabel, "ms") || !strings.Contains(pn.yLabel, "Mbit/s") {
		t.Errorf("labels %q, %q: want units ms and Mbit/s", pn.xLabel, pn.yLabel)
	}
	if f.subtitle == "" {
		t.Errorf("Pantheon figure has no note saying which way is better")
	}

	// The same data on a normal axis goes the other way: the check above
	// really detects reversal.
	s := Scatter{X: Axis{Label: "delay (ms)"}, Series: []PointSeries{{Points: []Point{{X: 10, Y: 5}, {X: 80, Y: 6}}}}}
	f2 := mustBuild(t, s)
	trX2, _ := dataTransforms(f2, f2.panels[0])
	if lo, hi := trX2(10), trX2(80); !(lo < hi) {
		t.Errorf("normal x: 10 drawn at %v, 80 at %v; want 10 further left", lo, hi)
	}
	if strings.Contains(f2.panels[0].xLabel, "reversed") {
		t.Errorf("normal axis label %q claims to be reversed", f2.panels[0].xLabel)
	}
}

func TestLogReversedAxis(t *testing.T) {
	f := mustBuild(t, Scatter{X: Axis{Log: true, Reverse: true}, Series: []PointSeries{{Points: []Point{{X: 1, Y: 1}, {X: 10, Y: 1}, {X: 100, Y: 1}}}}})
	trX, _ := dataTransforms(f, f.panels[0])
	a, b, c := trX(1), trX(10), trX(100)
	if !(a > b && b > c) {
		t.Fatalf("log reversed x: 1→%v, 10→%v, 100→%v; want decreasing", a, b, c)
	}
	if d1, d2 := a-b, b-c; math.Abs(float64(d1-d2)) > 0.01 {
		t.Errorf("log x: decades span %v and %v, want equal", d1, d2)
	}
}

func TestEdgeCasesGiveUsableAxes(t *testing.T) {
	for name, fig := range figureCases() {
		f := mustBuild(t, fig.(builder))
		for i, pn := range f.panels {
			p := pn.plot
			for _, ax := range []struct {
				name     string
				min, max float64
			}{{"x", p.X.Min, p.X.Max}, {"y", p.Y.Min, p.Y.Max}} {
				if !isFinite(ax.min) || !isFinite(ax.max) || !(ax.min < ax.max) {
					t.Errorf("%s panel %d: %s range [%g, %g], want finite with min < max", name, i, ax.name, ax.min, ax.max)
				}
			}
		}
	}
}

func TestAllEqualValuesAreCentred(t *testing.T) {
	f := mustBuild(t, figureCases()["timeseries-all-equal"].(builder))
	p := f.panels[0].plot
	if !(p.X.Min < 5 && 5 < p.X.Max) || !(p.Y.Min < 2 && 2 < p.Y.Max) {
		t.Errorf("ranges x [%g, %g], y [%g, %g]; want them to contain x=5, y=2 strictly inside", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
}

func TestNoDataIsMarked(t *testing.T) {
	f := mustBuild(t, figureCases()["cdf-empty"].(builder))
	pn := f.panels[0]
	if pn.drawn != 0 {
		t.Errorf("drawn = %d, want 0", pn.drawn)
	}
	var names []string
	for _, it := range pn.legend {
		names = append(names, strings.ReplaceAll(it.name, "\n", " ")) // long names wrap
	}
	want := []string{"none (n=0) (no data)", "all-nan (n=0) (no data)"}
	if !slices.Equal(names, want) {
		t.Errorf("legend = %q, want %q", names, want)
	}

	f = mustBuild(t, figureCases()["timeseries-log-nonpositive"].(builder))
	if got := f.panels[0].drawn; got != 4 {
		t.Errorf("log axis: drew %d points, want 4 (0 and -1 skipped)", got)
	}
	if got := f.panels[0].plot.Y.Min; !(got > 0) {
		t.Errorf("log axis min = %g, want > 0", got)
	}
}

func TestStackedPanelsShareTimeAxis(t *testing.T) {
	f := mustBuild(t, Stacked{X: Axis{Label: "time (s)"}, Panels: []Panel{
		{Y: Axis{Label: "cwnd (KB)"}, Series: []Series{{X: []float64{0, 10}, Y: []float64{1, 2}}}},
		{Y: Axis{Label: "RTT (ms)"}, Series: []Series{{X: []float64{5, 30}, Y: []float64{40, 50}}}},
	}})
	if len(f.panels) != 2 {
		t.Fatalf("%d panels, want 2", len(f.panels))
	}
	a, b := f.panels[0].plot.X, f.panels[1].plot.X
	if a.Min != 0 || a.Max != 30 || b.Min != 0 || b.Max != 30 {
		t.Errorf("x ranges [%g, %g] and [%g, %g], want both [0, 30]", a.Min, a.Max, b.Min, b.Max)
	}
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.Label != "" {
			t.Errorf("top panel shows x tick label %q, want none", tk.Label)
		}
	}
	labelled := 0
	for _, tk := range b.Tick.Marker.Ticks(b.Min, b.Max) {
		if tk.Label != "" {
			labelled++
		}
	}
	if labelled < 3 {
		t.Errorf("bottom panel has %d labelled x ticks, want at least 3", labelled)
	}
	if f.panels[0].yLabel != "cwnd (KB)" || f.panels[1].yLabel != "RTT (ms)" {
		t.Errorf("y labels %q, %q", f.panels[0].yLabel, f.panels[1].yLabel)
	}
}

func TestSegmentsBreakAtSkippedPoints(t *testing.T) {
	segs := segments([]float64{0, 1, 2, 3, 4, 5}, []float64{1, 1, nan, 1, -1, 1}, false, true)
	var lens []int
	for _, s := range segs {
		lens = append(lens, len(s))
	}
	if want := []int{2, 1, 1}; !slices.Equal(lens, want) {
		t.Errorf("segment lengths = %v, want %v", lens, want)
	}
}

func TestParetoFrontKnown(t *testing.T) {
	pts := []XY{{1, 1}, {2, 3}, {3, 2}, {4, 5}, {5, 4}, {4, 5}, {6, 5}, {nan, 9}}
	// Minimise x, maximise y: (1,1), (2,3), (4,5) twice; (6,5) is dominated
	// by (4,5); (3,2) by (2,3); NaN ignored.
	got := ParetoFront(pts, Minimize, Maximize)
	if want := []int{0, 1, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("front (min x, max y) = %v, want %v", got, want)
	}
	got = ParetoFront(pts, Maximize, Maximize)
	if want := []int{6}; !slices.Equal(got, want) {
		t.Errorf("front (max x, max y) = %v, want %v", got, want)
	}
	got = ParetoFront(pts, Minimize, Minimize)
	if want := []int{0}; !slices.Equal(got, want) {
		t.Errorf("front (min x, min y) = %v, want %v", got, want)
	}
	if got := ParetoFront(nil, Minimize, Minimize); len(got) != 0 {
		t.Errorf("front of nothing = %v, want empty", got)
	}
}

// TestParetoFrontMatchesDefinition checks the sweep against the O(n²)
// definition of dominance on random points with many ties.
func TestParetoFrontMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 200; trial++ {
		n := r.IntN(30)
		pts := make([]XY, n)
		for i := range pts {
			pts[i] = XY{float64(r.IntN(6)), float64(r.IntN(6))}
		}
		xg, yg := Goal(r.IntN(2)), Goal(r.IntN(2))
		got := ParetoFront(pts, xg, yg)
		slices.Sort(got)
		var want []int
		for i, p := range pts {
			dominated := false
			for _, q := range pts {
				noWorse := !better(p.X, q.X, xg) && !better(p.Y, q.Y, yg)
				if noWorse && (better(q.X, p.X, xg) || better(q.Y, p.Y, yg)) {
					dominated = true
					break
				}
			}
			if !dominated {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d goals (%d,%d) points %v: front %v, want %v", trial, xg, yg, pts, got, want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range [][2]float64{{0, 1}, {0, 29.99}, {-3, 7}, {0.001, 0.0013}, {1e9, 1e9 + 5e6}, {-1e-7, 1e-7}, {97, 103}, {5, 5.000000000001}} {
		ticks := niceTicks(c[0], c[1], targetTicks)
		var labels []string
		for _, tk := range ticks {
			if tk.Value < c[0]-1e-9*math.Abs(c[0]) || tk.Value > c[1]+1e-9*math.Abs(c[1]) {
				t.Errorf("range %v: tick %g outside", c, tk.Value)
			}
			if !tk.IsMinor() {
				labels = append(labels, tk.Label)
			}
		}
		if len(labels) < 2 || len(labels) > 12 {
			t.Errorf("range %v: %d labelled ticks %q, want 2..12", c, len(labels), labels)
		}
		seen := map[string]bool{}
		for _, l := range labels {
			if seen[l] {
				t.Errorf("range %v: duplicate label %q in %q", c, l, labels)
			}
			seen[l] = true
			if l == "-0" || strings.HasPrefix(l, "-0.0") && strings.Trim(l, "-0.") == "" {
				t.Errorf("range %v: negative zero label %q", c, l)
			}
		}
	}
	// A time axis gets ticks at round values.
	var got []string
	for _, tk := range niceTicks(0, 29.99, targetTicks) {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0", "5", "10", "15", "20", "25"}; !slices.Equal(got, want) {
		t.Errorf("ticks over [0, 29.99] = %q, want %q", got, want)
	}
	got = nil
	for _, tk := range niceTicks(0, 140, targetTicks) {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0", "25", "50", "75", "100", "125"}; !slices.Equal(got, want) {
		t.Errorf("ticks over [0, 140] = %q, want %q", got, want)
	}
	got = nil
	for _, tk := range niceTicks(0, 0.7, targetTicks) {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	if want := []string{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"}; !slices.Equal(got, want) {
		t.Errorf("ticks over [0, 0.7] = %q, want %q", got, want)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if !tk.IsMinor() {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got, want := labels(1e-4, 0.2), []string{"0.0001", "0.001", "0.01", "0.1"}; !slices.Equal(got, want) {
		t.Errorf("log ticks [1e-4, 0.2] = %q, want %q", got, want)
	}
	if got, want := labels(0.3, 30), []string{"0.5", "1", "2", "5", "10", "20"}; !slices.Equal(got, want) {
		t.Errorf("log ticks [0.3, 30] = %q, want %q", got, want)
	}
	if got := labels(3, 4); len(got) < 2 {
		t.Errorf("log ticks [3, 4] = %q, want at least two labels (linear fallback)", got)
	}
}

func TestThinKeepsEnvelope(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 50000
	pts := make(plotter.XYs, n)
	for i := range pts {
		pts[i] = plotter.XY{X: float64(i) / 100, Y: r.NormFloat64()}
	}
	pts[12345].Y = 50
	pts[40000].Y = -50
	out := thin(pts, 100, false)
	if len(out) > 400 {
		t.Errorf("thinned to %d points, want ≤ 400", len(out))
	}
	if out[0] != pts[0] || out[len(out)-1] != pts[n-1] {
		t.Errorf("thinning lost the first or last point")
	}
	var hasMax, hasMin bool
	for i, p := range out {
		hasMax = hasMax || p.Y == 50
		hasMin = hasMin || p.Y == -50
		if i > 0 && p.X < out[i-1].X {
			t.Fatalf("thinned points out of order at %d", i)
		}
	}
	if !hasMax || !hasMin {
		t.Errorf("thinning lost the extremes (max kept %v, min kept %v)", hasMax, hasMin)
	}
	unsorted := plotter.XYs{{X: 3}, {X: 1}, {X: 2}}
	unsorted = slices.Repeat(unsorted, 1000)
	if got := thin(unsorted, 100, false); len(got) != len(unsorted) {
		t.Errorf("unsorted series thinned to %d points, want it unchanged (%d)", len(got), len(unsorted))
	}
}

func TestECDF(t *testing.T) {
	pts := ecdf([]float64{1, 2, 2, 4})
	want := plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 0.25}, {X: 2, Y: 0.5}, {X: 2, Y: 0.75}, {X: 4, Y: 1}}
	if !slices.Equal(pts, want) {
		t.Errorf("ecdf = %v, want %v", pts, want)
	}
	big := make([]float64, 100000)
	for i := range big {
		big[i] = float64(i)
	}
	pts = ecdf(big)
	if len(pts) > cdfPoints+1 {
		t.Errorf("ecdf of %d values has %d points, want ≤ %d", len(big), len(pts), cdfPoints+1)
	}
	if last := pts[len(pts)-1]; last.X != big[len(big)-1] || last.Y != 1 {
		t.Errorf("ecdf ends at %v, want (%g, 1)", last, big[len(big)-1])
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Y < pts[i-1].Y || pts[i].X < pts[i-1].X {
			t.Fatalf("ecdf not monotone at %d: %v then %v", i, pts[i-1], pts[i])
		}
		// Rank thinning keeps the curve within 1/cdfPoints of the truth.
		if exact := (pts[i].X + 1) / float64(len(big)); math.Abs(pts[i].Y-exact) > 1e-12 {
			t.Fatalf("ecdf point %v, want y = %g", pts[i], exact)
		}
	}
}

func TestFitText(t *testing.T) {
	sty := textStyle(10, false)
	width := vg.Points(120)
	if got := fitText(sty, "short", width, 2); got != "short" {
		t.Errorf("fitText(short) = %q, want unchanged", got)
	}
	got := fitText(sty, longText, width, 2)
	lines := strings.Split(got, "\n")
	if len(lines) != 2 {
		t.Fatalf("fitText gave %d lines %q, want 2", len(lines), lines)
	}
	for _, l := range lines {
		if w := sty.Width(l); w > width {
			t.Errorf("line %q is %v wide, want ≤ %v", l, w, width)
		}
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("fitText cut text without an ellipsis: %q", got)
	}
	word := strings.Repeat("x", 200)
	if got := fitText(sty, word, width, 1); sty.Width(got) > width || !strings.HasSuffix(got, "…") {
		t.Errorf("fitText(one long word) = %q (%v wide), want ≤ %v ending in …", got, sty.Width(got), width)
	}
}

func TestAxisRange(t *testing.T) {
	e := func(vs ...float64) extent {
		var x extent
		for _, v := range vs {
			x.add(v)
		}
		return x
	}
	cases := []struct {
		a      Axis
		e      extent
		lo, hi float64
	}{
		{Axis{}, e(1, 5), 1, 5},
		{Axis{IncludeZero: true}, e(3, 5), 0, 5},
		{Axis{IncludeZero: true}, e(-3, -1), -3, 0},
		{Axis{Min: 2, Max: 4}, e(1, 5), 2, 4},
		{Axis{}, e(), 0, 1},
		{Axis{Log: true}, e(), 1, 10},
		{Axis{}, e(0, 0), -1, 1},
		{Axis{IncludeZero: true}, e(0), 0, 1},
		{Axis{}, e(10, 10), 9, 11},
		{Axis{Log: true}, e(10), 5, 20},
		{Axis{}, e(nan, inf, 2, 3), 2, 3},
	}
	for _, c := range cases {
		lo, hi, err := axisRange(c.a, c.e)
		if err != nil || lo != c.lo || hi != c.hi {
			t.Errorf("axisRange(%+v, %+v) = %g, %g, %v; want %g, %g", c.a, c.e, lo, hi, err, c.lo, c.hi)
		}
	}
}

func TestSeriesStylesDiffer(t *testing.T) {
	// The first series differ in dash (lines) and in marker shape, not
	// only in colour, so they read in greyscale.
	dashes := map[string]int{}
	for i := range dashPatterns {
		k := dashKey(seriesLine(i).Dashes)
		if j, ok := dashes[k]; ok {
			t.Errorf("series %d and %d share dash pattern %q", j, i, k)
		}
		dashes[k] = i
	}
	shapes := map[string]int{}
	for i := range markerShapes {
		k := typeName(seriesGlyph(i).Shape)
		if j, ok := shapes[k]; ok {
			t.Errorf("series %d and %d share marker %s", j, i, k)
		}
		shapes[k] = i
	}
	// Past the palette length, (colour, dash) pairs still differ.
	pairs := map[string]int{}
	for i := 0; i < len(OkabeIto)*len(dashPatterns); i++ {
		l := seriesLine(i)
		r, g, b, _ := l.Color.RGBA()
		k := strconv.Itoa(int(r>>8)) + "," + strconv.Itoa(int(g>>8)) + "," + strconv.Itoa(int(b>>8)) + "/" + dashKey(l.Dashes)
		if j, ok := pairs[k]; ok {
			t.Errorf("series %d and %d have the same colour and dash", j, i)
		}
		pairs[k] = i
	}
}

func dashKey(d []vg.Length) string {
	var b strings.Builder
	for _, v := range d {
		b.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 64) + ",")
	}
	return b.String()
}

func typeName(v any) string {
	switch v.(type) {
	case draw.CircleGlyph:
		return "circle"
	case draw.SquareGlyph:
		return "square"
	case draw.TriangleGlyph:
		return "triangle"
	case draw.CrossGlyph:
		return "cross"
	case draw.RingGlyph:
		return "ring"
	case draw.PyramidGlyph:
		return "pyramid"
	case draw.PlusGlyph:
		return "plus"
	case draw.BoxGlyph:
		return "box"
	}
	return "other"
}

func TestClipSegment(t *testing.T) {
	r := vg.Rectangle{Max: vg.Point{X: 10, Y: 10}}
	a, b, ok := clipSegment(vg.Point{X: -5, Y: 5}, vg.Point{X: 15, Y: 5}, r)
	if !ok || a != (vg.Point{X: 0, Y: 5}) || b != (vg.Point{X: 10, Y: 5}) {
		t.Errorf("clip horizontal = %v %v %v, want (0,5) (10,5) true", a, b, ok)
	}
	if _, _, ok := clipSegment(vg.Point{X: -5, Y: 20}, vg.Point{X: 15, Y: 20}, r); ok {
		t.Errorf("segment above the rectangle was kept")
	}
	a, b, ok = clipSegment(vg.Point{X: -10, Y: -10}, vg.Point{X: 20, Y: 20}, r)
	if !ok || a != (vg.Point{}) || b != (vg.Point{X: 10, Y: 10}) {
		t.Errorf("clip diagonal = %v %v %v, want (0,0) (10,10) true", a, b, ok)
	}
}
