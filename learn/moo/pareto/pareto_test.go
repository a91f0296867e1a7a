package pareto

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b []float64
		want Relation
	}{
		{[]float64{1, 2}, []float64{2, 3}, ADominates},
		{[]float64{1, 3}, []float64{1, 2}, BDominates},
		{[]float64{1, 2}, []float64{1, 2}, Incomparable},
		{[]float64{1, 3}, []float64{2, 2}, Incomparable},
		{[]float64{0, 0, 0}, []float64{0, 0, 1}, ADominates},
		{[]float64{-1}, []float64{1}, ADominates},
	}
	for _, tc := range tests {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCompareConstrained(t *testing.T) {
	good, bad := []float64{0, 0}, []float64{5, 5}
	tests := []struct {
		name string
		a    []float64
		cvA  float64
		b    []float64
		cvB  float64
		want Relation
	}{
		{"both feasible, Pareto decides", good, 0, bad, 0, ADominates},
		{"feasible beats infeasible whatever the objectives", bad, 0, good, 0.1, ADominates},
		{"infeasible loses to feasible", good, 3, bad, 0, BDominates},
		{"smaller violation wins", bad, 1, good, 2, ADominates},
		{"larger violation loses", good, 2, bad, 1, BDominates},
		{"equal violation is incomparable", good, 1, bad, 1, Incomparable},
		{"NaN objectives of infeasible are ignored", []float64{math.NaN(), math.NaN()}, 1, good, 2, ADominates},
		{"infinite violation loses to finite", good, math.Inf(1), bad, 1e300, BDominates},
	}
	for _, tc := range tests {
		if got := CompareConstrained(tc.a, tc.cvA, tc.b, tc.cvB); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSortHandComputed(t *testing.T) {
	f := [][]float64{
		{1, 5}, // 0
		{2, 3}, // 1
		{4, 1}, // 2
		{3, 4}, // 3: dominated by 1
		{5, 5}, // 4: dominated by 1, 3, 6
		{2, 6}, // 5: dominated by 0 and 1
		{4, 4}, // 6: dominated by 1 and 3
	}
	tests := []struct {
		name string
		cv   []float64
		want [][]int
	}{
		{"unconstrained", nil, [][]int{{0, 1, 2}, {3, 5}, {6}, {4}}},
		// 0 and 2 infeasible: the feasible ones are sorted among themselves
		// ((2,3) now also dominates nothing new), then 2 (cv 1), then 0 (cv 2).
		{"constrained", []float64{2, 0, 1, 0, 0, 0, 0}, [][]int{{1}, {3, 5}, {6}, {4}, {2}, {0}}},
		{"all infeasible, equal violations tie", []float64{1, 1, 1, 1, 1, 1, 1}, [][]int{{0, 1, 2, 3, 4, 5, 6}}},
	}
	var s Sorter
	for _, tc := range tests {
		got := s.Sort(f, tc.cv)
		if !equalFronts(got, tc.want) {
			t.Errorf("%s: got fronts %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSortDuplicatesShareAFront(t *testing.T) {
	f := [][]float64{{1, 1}, {2, 0}, {1, 1}, {2, 2}, {2, 2}}
	got := Sort(f, nil)
	want := [][]int{{0, 1, 2}, {3, 4}}
	if !equalFronts(got, want) {
		t.Errorf("got fronts %v, want %v", got, want)
	}
}

func TestSortEmpty(t *testing.T) {
	if got := Sort(nil, nil); len(got) != 0 {
		t.Errorf("Sort(nil) = %v, want no fronts", got)
	}
}

// TestSortMatchesNaivePeeling compares the fast sort with the definition:
// repeatedly remove the solutions no remaining solution dominates (O(N^3)).
// Small integer objectives make ties and duplicates frequent.
func TestSortMatchesNaivePeeling(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s Sorter
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(40)
		m := 1 + r.IntN(4)
		f := make([][]float64, n)
		var cv []float64
		if trial%3 == 0 {
			cv = make([]float64, n)
		}
		for i := range f {
			f[i] = make([]float64, m)
			for j := range f[i] {
				f[i][j] = float64(r.IntN(6))
			}
			if cv != nil && r.IntN(3) == 0 {
				cv[i] = float64(1 + r.IntN(3))
			}
		}
		got := s.Sort(f, cv)
		want := naiveFronts(f, cv)
		if !equalFronts(got, want) {
			t.Fatalf("trial %d: got fronts %v, want %v (f=%v cv=%v)", trial, got, want, f, cv)
		}
	}
}

func naiveFronts(f [][]float64, cv []float64) [][]int {
	left := make([]int, len(f))
	for i := range left {
		left[i] = i
	}
	var fronts [][]int
	for len(left) > 0 {
		var front, rest []int
		for _, p := range left {
			dominated := false
			for _, q := range left {
				var r Relation
				if cv == nil {
					r = Compare(f[q], f[p])
				} else {
					r = CompareConstrained(f[q], cv[q], f[p], cv[p])
				}
				if r == ADominates {
					dominated = true
					break
				}
			}
			if dominated {
				rest = append(rest, p)
			} else {
				front = append(front, p)
			}
		}
		fronts = append(fronts, front)
		left = rest
	}
	return fronts
}

func equalFronts(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

func TestCrowdingHandComputed(t *testing.T) {
	f := [][]float64{
		{2, 1.5}, // 0
		{0, 4},   // 1
		{4, 0},   // 2
		{1, 2.5}, // 3
		{3, 0.5}, // 4
		{9, 9},   // 5: not in the front
	}
	front := []int{0, 1, 2, 3, 4}
	inf := math.Inf(1)
	// Both objectives span 4. Sorted on f1 the front is 1, 3, 0, 4, 2.
	// Point 3: (2-0)/4 + (4-1.5)/4 = 1.125; point 0: (3-1)/4 + (2.5-0.5)/4 = 1;
	// point 4: (4-2)/4 + (1.5-0)/4 = 0.875.
	want := []float64{1, inf, inf, 1.125, 0.875}
	got := Crowding(f, front)
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12 && got[k] != want[k] {
			t.Errorf("crowding of solution %d: got %v, want %v", front[k], got[k], want[k])
		}
	}
}

func TestCrowdingDegenerate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name  string
		f     [][]float64
		front []int
		want  []float64
	}{
		{"one solution", [][]float64{{1, 2}}, []int{0}, []float64{inf}},
		{"two solutions", [][]float64{{1, 2}, {2, 1}}, []int{1, 0}, []float64{inf, inf}},
		// f1 is constant and adds nothing; f2 spans 2: the middle one gets (2-0)/2.
		{"constant objective", [][]float64{{5, 0}, {5, 1}, {5, 2}}, []int{0, 1, 2}, []float64{inf, 1, inf}},
		// Identical points: ties broken by position, so the first and last
		// positions are the boundaries and the middle one gets zero gaps.
		{"identical points", [][]float64{{1, 1}, {1, 1}, {1, 1}}, []int{0, 1, 2}, []float64{inf, 0, inf}},
	}
	for _, tc := range tests {
		got := Crowding(tc.f, tc.front)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNonDominated(t *testing.T) {
	f := [][]float64{{1, 5}, {2, 3}, {4, 1}, {3, 4}}
	if got, want := NonDominated(f, nil), []int{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("unconstrained: got %v, want %v", got, want)
	}
	// Everyone infeasible: the first front holds the least-violating one,
	// but it is not feasible so nothing is returned.
	if got := NonDominated(f, []float64{1, 2, 3, 4}); len(got) != 0 {
		t.Errorf("all infeasible: got %v, want none", got)
	}
	if got, want := NonDominated(f, []float64{0, 1, 0, 0}), []int{0, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("constrained: got %v, want %v", got, want)
	}
}

func BenchmarkSort200x2(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	f := make([][]float64, 200)
	for i := range f {
		x := r.Float64()
		f[i] = []float64{x, 1 - math.Sqrt(x) + 0.3*r.Float64()}
	}
	var s Sorter
	dist := make([]float64, 200)
	b.ReportAllocs()
	for b.Loop() {
		for _, fr := range s.Sort(f, nil) {
			s.Crowding(f, fr, dist)
		}
	}
}
