package nsga2

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cclab/cclab/learn/moo"
)

func twoObjProblem() moo.Problem {
	return moo.Problem{
		Variables:  []moo.Variable{{Name: "x", Lower: 0, Upper: 1}},
		Objectives: []moo.Objective{{Name: "f1"}, {Name: "f2"}},
	}
}

func newOpt(t *testing.T, p moo.Problem, s Settings, seed uint64) *Optimizer {
	t.Helper()
	o, err := New(p, s, rand.NewPCG(seed, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return o
}

// TestSurviveHandComputed checks elitist survival on a hand-sorted merge:
// F1 = {A(0,3), B(3,0)}; F2 = {C(1,4), D(2,3.5), E(3.5,1.5), F(4,1)}, each
// dominated by A or B; G(5,5) in F3. F2 spans 3 in both objectives, so its
// crowding is C = F = Inf, D = 2.5/3 + 2.5/3 = 1.667, E = 2/3 + 2.5/3 = 1.5.
func TestSurviveHandComputed(t *testing.T) {
	f := map[string][]float64{
		"A": {0, 3}, "B": {3, 0}, "C": {1, 4}, "D": {2, 3.5}, "E": {3.5, 1.5}, "F": {4, 1}, "G": {5, 5},
	}
	order := []string{"G", "E", "C", "A", "F", "D", "B"} // shuffled on purpose
	tests := []struct {
		n    int
		want []string
	}{
		{2, []string{"A", "B"}},
		{4, []string{"A", "B", "C", "F"}},
		{5, []string{"A", "B", "C", "D", "F"}},
		{6, []string{"A", "B", "C", "D", "E", "F"}},
		{7, []string{"A", "B", "C", "D", "E", "F", "G"}},
	}
	for _, tc := range tests {
		o := newOpt(t, twoObjProblem(), Settings{PopSize: tc.n}, 1)
		var merged []member
		for _, name := range order {
			merged = append(merged, member{ind: moo.Individual{Objectives: f[name], X: []float64{float64(name[0])}}, f: f[name]})
		}
		next := o.survive(merged)
		var got []string
		for _, m := range next {
			got = append(got, string(rune(m.ind.X[0])))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("N=%d: survivors %v, want %v", tc.n, got, tc.want)
		}
		for _, m := range next {
			name := string(rune(m.ind.X[0]))
			wantRank := map[string]int{"A": 0, "B": 0, "G": 2}[name]
			if name >= "C" && name <= "F" {
				wantRank = 1
			}
			if m.rank != wantRank {
				t.Errorf("N=%d: %s has rank %d, want %d", tc.n, name, m.rank, wantRank)
			}
			wantCrowd := map[string]float64{"D": 5.0 / 3, "E": 1.5}[name]
			if name == "A" || name == "B" || name == "C" || name == "F" || name == "G" {
				wantCrowd = math.Inf(1)
			}
			if math.Abs(m.crowd-wantCrowd) > 1e-12 && m.crowd != wantCrowd {
				t.Errorf("N=%d: %s has crowding %v, want %v", tc.n, name, m.crowd, wantCrowd)
			}
		}
	}
}

// TestSurviveConstrained: with constraints, every feasible member outranks
// every infeasible one whatever the objectives, and infeasible members are
// ordered by violation.
func TestSurviveConstrained(t *testing.T) {
	p := twoObjProblem()
	p.Constraints = []moo.Constraint{{Name: "g"}}
	o := newOpt(t, p, Settings{PopSize: 3}, 1)
	mk := func(id, viol float64, f ...float64) member {
		return member{ind: moo.Individual{X: []float64{id}, Objectives: f, Violation: viol}, f: f}
	}
	merged := []member{
		mk(1, 0.5, -10, -10), // infeasible, excellent objectives
		mk(2, 0, 5, 5),
		mk(3, 2, -20, -20),
		mk(4, 0, 6, 6),
		mk(5, 0.1, math.NaN(), math.NaN()), // objectives never read
	}
	next := o.survive(merged)
	var got []float64
	for _, m := range next {
		got = append(got, m.ind.X[0])
	}
	slices.Sort(got)
	if want := []float64{2, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("survivors %v, want %v", got, want)
	}
}

// TestTournament checks the crowded-comparison operator on a hand-set
// population.
func TestTournament(t *testing.T) {
	o := newOpt(t, twoObjProblem(), Settings{PopSize: 4}, 1)
	o.pop = []member{
		{rank: 0, crowd: 1},
		{rank: 1, crowd: math.Inf(1)},
		{rank: 0, crowd: 2},
		{rank: 0, crowd: 2},
	}
	tests := []struct {
		a, b int
		want []int // possible winners
	}{
		{0, 1, []int{0}},    // lower rank wins despite less crowding
		{1, 0, []int{0}},    // either order
		{0, 2, []int{2}},    // same rank: larger crowding wins
		{2, 3, []int{2, 3}}, // full tie: either
	}
	for _, tc := range tests {
		seen := map[int]bool{}
		for range 50 {
			o.perm = []int{tc.a, tc.b, 0, 0}
			o.permAt = 0
			seen[o.tournament()] = true
		}
		var got []int
		for w := range seen {
			got = append(got, w)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("tournament(%d, %d): winners %v over 50 draws, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestCompetitorStream checks every member competes exactly twice in the
// first 2N draws (two permutations), as in Deb's tournament selection.
func TestCompetitorStream(t *testing.T) {
	o := newOpt(t, twoObjProblem(), Settings{PopSize: 7}, 3)
	o.pop = make([]member, 7)
	count := make([]int, 7)
	for range 14 {
		count[o.competitor()]++
	}
	for i, c := range count {
		if c != 2 {
			t.Errorf("member %d competed %d times in 14 draws, want 2", i, c)
		}
	}
}

func TestXSet(t *testing.T) {
	var s xset
	s.m = make(map[uint64]int)
	a := []float64{1, 2}
	if !s.add(a) || s.add([]float64{1, 2}) {
		t.Error("equal vectors must be added once")
	}
	if s.add([]float64{1, 2}) || !s.add([]float64{2, 1}) {
		t.Error("order matters, equal values do not")
	}
	if s.add([]float64{math.Copysign(0, -1), 0}) != true || s.add([]float64{0, 0}) {
		t.Error("-0 and +0 are equal")
	}
	// Simulate a hash collision between (7) and (8): the set must still
	// compare values.
	s.reset()
	s.add([]float64{8})
	s.m[hashX([]float64{7})] = 0
	if !s.add([]float64{7}) {
		t.Error("a colliding but different vector must be added")
	}
	if s.add([]float64{7}) || s.add([]float64{8}) {
		t.Error("after a collision both vectors must be found")
	}
}
