package indicator

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHypervolumeHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		points [][]float64
		ref    []float64
		want   float64
	}{
		{"1-D", [][]float64{{3}, {1}, {2}}, []float64{4}, 3},
		// Sweep: (1,3) adds 3x1, (2,2) adds 2x1, (3,1) adds 1x1.
		{"2-D staircase", [][]float64{{1, 3}, {2, 2}, {3, 1}}, []float64{4, 4}, 6},
		{"2-D dominated point adds nothing", [][]float64{{1, 3}, {2, 2}, {3, 1}, {3, 3}}, []float64{4, 4}, 6},
		{"2-D duplicates", [][]float64{{1, 1}, {1, 1}}, []float64{2, 3}, 2},
		{"2-D point on the reference boundary adds nothing", [][]float64{{1, 1}, {4, 0}}, []float64{4, 4}, 9},
		{"2-D point outside", [][]float64{{5, 5}}, []float64{4, 4}, 0},
		{"3-D box", [][]float64{{1, 1, 1}}, []float64{2, 3, 4}, 6},
		// Boxes of 4 and 2 overlapping in [1,2]^3 of volume 1.
		{"3-D two boxes", [][]float64{{0, 0, 1}, {1, 1, 0}}, []float64{2, 2, 2}, 5},
		// The three unit-offset corners of a 2-cube: each box 1x2x2=4,
		// pairwise overlaps 1x1x2=2, triple overlap 1: 3*4 - 3*2 + 1 = 7.
		{"3-D three boxes", [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, []float64{2, 2, 2}, 7},
		// Same in 4-D with the fourth coordinate 0 and reference 2: volume doubles.
		{"4-D lifted", [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}, []float64{2, 2, 2, 2}, 14},
		{"empty", nil, []float64{1, 1}, 0},
	}
	for _, tc := range tests {
		got, err := Hypervolume(tc.points, tc.ref)
		if err != nil {
			t.Errorf("%s: unexpected error %v", tc.name, err)
			continue
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHypervolumeErrors(t *testing.T) {
	tests := []struct {
		name   string
		points [][]float64
		ref    []float64
	}{
		{"empty reference", [][]float64{{1}}, nil},
		{"length mismatch", [][]float64{{1, 2, 3}}, []float64{4, 4}},
		{"NaN point", [][]float64{{math.NaN(), 1}}, []float64{4, 4}},
		{"infinite reference", [][]float64{{1, 1}}, []float64{math.Inf(1), 4}},
	}
	for _, tc := range tests {
		if _, err := Hypervolume(tc.points, tc.ref); err == nil {
			t.Errorf("%s: got no error, want one", tc.name)
		}
	}
}

func TestHypervolumeDoesNotModifyInput(t *testing.T) {
	points := [][]float64{{3, 1, 2}, {1, 3, 2}, {2, 2, 1}}
	first := points[0]
	if _, err := Hypervolume(points, []float64{4, 4, 4}); err != nil {
		t.Fatal(err)
	}
	if &points[0][0] != &first[0] || points[0][0] != 3 || points[2][2] != 1 {
		t.Errorf("input reordered or modified: %v", points)
	}
}

// TestHypervolumeMatchesInclusionExclusion checks every dimension against
// the definition: the volume of a union of boxes [p, ref] by
// inclusion-exclusion over all subsets (exact, exponential, so small sets).
func TestHypervolumeMatchesInclusionExclusion(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for d := 1; d <= 5; d++ {
		for trial := 0; trial < 60; trial++ {
			n := 1 + r.IntN(10)
			ref := make([]float64, d)
			for j := range ref {
				ref[j] = 1
			}
			points := make([][]float64, n)
			for i := range points {
				points[i] = make([]float64, d)
				for j := range points[i] {
					// A coarse grid makes ties, and some points fall outside.
					points[i][j] = float64(r.IntN(12)) / 10
				}
			}
			got, err := Hypervolume(points, ref)
			if err != nil {
				t.Fatal(err)
			}
			want := inclusionExclusion(points, ref)
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("d=%d trial %d: got %v, want %v (points %v)", d, trial, got, want, points)
			}
		}
	}
}

func inclusionExclusion(points [][]float64, ref []float64) float64 {
	n, d := len(points), len(ref)
	var total float64
	corner := make([]float64, d)
	for mask := 1; mask < 1<<n; mask++ {
		for j := range corner {
			corner[j] = math.Inf(-1)
		}
		bits := 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				bits++
				for j := range corner {
					corner[j] = max(corner[j], points[i][j])
				}
			}
		}
		vol := 1.0
		for j := range corner {
			vol *= max(0, ref[j]-corner[j])
		}
		if bits%2 == 1 {
			total += vol
		} else {
			total -= vol
		}
	}
	return total
}

// TestHypervolumeSphere checks the 3-D sweep on many points against the
// analytic volume: the points of the unit sphere's positive octant dominate,
// inside the box below (1.1, 1.1, 1.1), 1.1^3 - pi/6 in the limit; a finite
// sample dominates a little less (a staircase under the surface).
func TestHypervolumeSphere(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	points := make([][]float64, 20000)
	for i := range points {
		var p [3]float64
		var norm float64
		for j := range p {
			p[j] = math.Abs(r.NormFloat64())
			norm += p[j] * p[j]
		}
		norm = math.Sqrt(norm)
		points[i] = []float64{p[0] / norm, p[1] / norm, p[2] / norm}
	}
	got, err := Hypervolume(points, []float64{1.1, 1.1, 1.1})
	if err != nil {
		t.Fatal(err)
	}
	want := 1.331 - math.Pi/6
	if got > want || got < want*0.99 {
		t.Errorf("got %v, want within 1%% below %v", got, want)
	}
}

func TestIGDHandComputed(t *testing.T) {
	front := [][]float64{{0, 1}, {1, 0}}
	tests := []struct {
		name            string
		approx          [][]float64
		wantIGD, wantIP float64
	}{
		{"exact", [][]float64{{0, 1}, {1, 0}}, 0, 0},
		// Distances 0 and sqrt(2); IGD+ counts only the worse objectives:
		// from (1,0) to (0,1) only f2 is worse, by 1.
		{"one end", [][]float64{{0, 1}}, math.Sqrt2 / 2, 0.5},
		// From both reference points the distance is sqrt(0.5); IGD+ sees
		// only the worse objective, 0.5.
		{"middle", [][]float64{{0.5, 0.5}}, math.Sqrt(0.5), 0.5},
		// A point dominating the whole front: IGD+ is zero, IGD is not.
		{"dominating", [][]float64{{-1, -1}}, math.Sqrt(5), 0},
	}
	for _, tc := range tests {
		igd, err := IGD(tc.approx, front)
		if err != nil {
			t.Fatal(err)
		}
		ip, err := IGDPlus(tc.approx, front)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(igd-tc.wantIGD) > 1e-12 {
			t.Errorf("%s: IGD got %v, want %v", tc.name, igd, tc.wantIGD)
		}
		if math.Abs(ip-tc.wantIP) > 1e-12 {
			t.Errorf("%s: IGD+ got %v, want %v", tc.name, ip, tc.wantIP)
		}
	}
}

func TestIGDErrors(t *testing.T) {
	good := [][]float64{{0, 1}}
	tests := []struct {
		name          string
		approx, front [][]float64
	}{
		{"empty front", good, nil},
		{"empty approximation", nil, good},
		{"dimension mismatch", [][]float64{{0, 1, 2}}, good},
		{"NaN", [][]float64{{math.NaN(), 1}}, good},
	}
	for _, tc := range tests {
		if _, err := IGD(tc.approx, tc.front); err == nil {
			t.Errorf("IGD %s: got no error, want one", tc.name)
		}
		if _, err := IGDPlus(tc.approx, tc.front); err == nil {
			t.Errorf("IGD+ %s: got no error, want one", tc.name)
		}
	}
}

func spherePoints(n int, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, seed))
	points := make([][]float64, n)
	for i := range points {
		a, b := r.Float64()*math.Pi/2, r.Float64()*math.Pi/2
		points[i] = []float64{math.Cos(a) * math.Cos(b), math.Cos(a) * math.Sin(b), math.Sin(a)}
	}
	return points
}

func BenchmarkHypervolume3D(b *testing.B) {
	for _, n := range []int{100, 1000} {
		points := spherePoints(n, 1)
		ref := []float64{1.1, 1.1, 1.1}
		b.Run(itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Hypervolume(points, ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHypervolume2D(b *testing.B) {
	points := make([][]float64, 1000)
	for i := range points {
		x := float64(i) / 999
		points[i] = []float64{x, 1 - math.Sqrt(x)}
	}
	ref := []float64{1.1, 1.1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Hypervolume(points, ref); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for ; n > 0; n /= 10 {
		i--
		buf[i] = byte('0' + n%10)
	}
	return string(buf[i:])
}
