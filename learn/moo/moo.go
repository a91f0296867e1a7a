// Package moo is cclab's multi-objective optimisation framework: problem
// descriptions (real and integer variables, objectives each minimised or
// maximised, inequality constraints), the reverse-communication interface
// between an optimiser and whoever evaluates its candidates, a parallel
// deterministic driver (Run), a Pareto archive, and hypervolume helpers in
// the problem's own units.
//
// The optimiser never evaluates anything itself. It proposes a batch of
// candidates (Method.Ask); the caller evaluates them however it likes, in
// parallel, by simulation, by hand, and reports objective and constraint
// values (Method.Tell); the optimiser then advances one generation. Run is the
// convenience loop that does this over N worker goroutines with results
// independent of N and of scheduling. This is gonum/optimize's reverse
// communication (its Method and Recorder), for populations. Replicate builds
// the evaluation of a candidate as the mean over several scenarios, traces or
// seeds, scheduled one simulation at a time over a shared Limiter so that
// every core stays busy to the end of each generation.
//
// Conventions:
//   - Objectives are reported in their natural units and sense (a throughput
//     to maximise is reported as a throughput, not negated). Internally and in
//     the subpackages pareto and indicator, vectors are in minimisation form:
//     maximised objectives are negated (Problem.Minimized).
//   - A constraint value g_j(x) is feasible when g_j(x) <= 0. The total
//     violation of x is sum_j max(0, g_j(x)); x is feasible when it is zero.
//     Infeasible solutions are ranked by constrained domination (Deb 2000):
//     feasible beats infeasible, smaller violation beats larger.
//   - The objectives of an infeasible candidate are never used, so an
//     evaluator may skip expensive work for a candidate it already knows to be
//     infeasible and report NaN objectives for it.
//
// The NSGA-II method lives in moo/nsga2, its variation operators in
// moo/operator, non-dominated sorting in moo/pareto, quality indicators in
// moo/indicator, benchmark problems in moo/problems, and the parsers for the
// tune command's --param, --objective and --constraint arguments in moo/spec
// and moo/expr.
package moo

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Kind is the domain of a decision variable.
type Kind int

const (
	// Real variables take any value in [Lower, Upper].
	Real Kind = iota
	// Integer variables take whole values in [Lower, Upper]; variation
	// operators work on them as reals and the result is rounded.
	Integer
)

// String returns "real" or "int", the spellings the --param syntax uses.
func (k Kind) String() string {
	switch k {
	case Real:
		return "real"
	case Integer:
		return "int"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Variable is one decision variable.
type Variable struct {
	// Name identifies the variable in output and constraint expressions
	// (for the tune command, a controller parameter path such as
	// "vegas.alpha").
	Name string
	// Lower and Upper are the inclusive bounds, finite, Lower < Upper; for
	// an Integer variable both must be whole numbers.
	Lower, Upper float64
	// Kind is Real (the zero value) or Integer.
	Kind Kind
}

// Validate reports whether v is well formed.
func (v Variable) Validate() error {
	if v.Name == "" {
		return errors.New("variable has an empty name")
	}
	switch {
	case !isFinite(v.Lower) || !isFinite(v.Upper):
		return fmt.Errorf("variable %q: bounds [%v, %v] must be finite", v.Name, v.Lower, v.Upper)
	case !(v.Lower < v.Upper):
		return fmt.Errorf("variable %q: lower bound %v must be less than upper bound %v", v.Name, v.Lower, v.Upper)
	}
	switch v.Kind {
	case Real:
	case Integer:
		if v.Lower != math.Trunc(v.Lower) || v.Upper != math.Trunc(v.Upper) {
			return fmt.Errorf("variable %q: an int variable needs whole-number bounds, got [%v, %v]", v.Name, v.Lower, v.Upper)
		}
		// Beyond 2^53 float64 no longer holds every integer.
		if math.Abs(v.Lower) > maxExactInt || math.Abs(v.Upper) > maxExactInt {
			return fmt.Errorf("variable %q: int bounds [%v, %v] must lie within ±2^53", v.Name, v.Lower, v.Upper)
		}
	default:
		return fmt.Errorf("variable %q: unknown kind %v; accepted: real, int", v.Name, v.Kind)
	}
	return nil
}

// Repair maps x into the variable's domain: an Integer variable is rounded
// half to even (like pymoo's RoundingRepair, numpy.around) and both kinds are
// clamped to [Lower, Upper]. NaN maps to Lower.
func (v Variable) Repair(x float64) float64 {
	if v.Kind == Integer {
		x = math.RoundToEven(x)
	}
	switch {
	case math.IsNaN(x) || x < v.Lower:
		return v.Lower
	case x > v.Upper:
		return v.Upper
	}
	return x
}

// Contains reports whether x is in the variable's domain.
func (v Variable) Contains(x float64) bool {
	if v.Kind == Integer && x != math.Trunc(x) {
		return false
	}
	return x >= v.Lower && x <= v.Upper
}

// Sense says whether an objective is minimised or maximised.
type Sense int

const (
	// Minimize is the zero value.
	Minimize Sense = iota
	// Maximize: larger values are better.
	Maximize
)

// String returns "min" or "max", the spellings the --objective syntax uses.
func (s Sense) String() string {
	switch s {
	case Minimize:
		return "min"
	case Maximize:
		return "max"
	}
	return fmt.Sprintf("Sense(%d)", int(s))
}

// Objective is one objective function.
type Objective struct {
	// Name identifies the objective (for the tune command, a metric of the
	// run summary such as "goodput_mbps").
	Name string
	// Sense is Minimize (the zero value) or Maximize.
	Sense Sense
}

// Constraint names one inequality constraint g(x) <= 0.
type Constraint struct {
	// Name identifies the constraint in output, e.g. the expression it was
	// compiled from.
	Name string
}

// Problem describes what is optimised. The functions themselves are not part
// of it: they belong to whoever answers the optimiser's questions.
type Problem struct {
	// Variables are the decision variables, at least one.
	Variables []Variable
	// Objectives are the objectives, at least one; evaluations report their
	// values in this order.
	Objectives []Objective
	// Constraints are the inequality constraints g_j(x) <= 0, possibly
	// none; evaluations report their values in this order.
	Constraints []Constraint
}

// Validate reports whether p is well formed: at least one variable and one
// objective, names non-empty and unique among variables and among
// objectives, valid bounds and kinds.
func (p *Problem) Validate() error {
	if len(p.Variables) == 0 {
		return errors.New("moo: problem has no variables")
	}
	if len(p.Objectives) == 0 {
		return errors.New("moo: problem has no objectives")
	}
	seen := make(map[string]bool)
	for _, v := range p.Variables {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("moo: %w", err)
		}
		if seen[v.Name] {
			return fmt.Errorf("moo: variable %q appears twice", v.Name)
		}
		seen[v.Name] = true
	}
	clear(seen)
	for i, o := range p.Objectives {
		if o.Name == "" {
			return fmt.Errorf("moo: objective %d has an empty name", i)
		}
		if o.Sense != Minimize && o.Sense != Maximize {
			return fmt.Errorf("moo: objective %q: unknown sense %v; accepted: min, max", o.Name, o.Sense)
		}
		if seen[o.Name] {
			return fmt.Errorf("moo: objective %q appears twice", o.Name)
		}
		seen[o.Name] = true
	}
	for i, c := range p.Constraints {
		if c.Name == "" {
			return fmt.Errorf("moo: constraint %d has an empty name", i)
		}
	}
	return nil
}

// Minimized writes into dst (grown if needed) the objective values in
// minimisation form, negating those of maximised objectives, and returns it.
func (p *Problem) Minimized(values, dst []float64) []float64 {
	dst = append(dst[:0], values...)
	for j, o := range p.Objectives {
		if o.Sense == Maximize {
			dst[j] = -dst[j]
		}
	}
	return dst
}

// VariableNames returns the variables' names in order.
func (p *Problem) VariableNames() []string {
	names := make([]string, len(p.Variables))
	for i, v := range p.Variables {
		names[i] = v.Name
	}
	return names
}

// Candidate is a point the optimiser wants evaluated.
type Candidate struct {
	// X holds the decision variables in Problem.Variables order; integer
	// variables hold whole values. Each candidate owns its X; an evaluator
	// may read it from any goroutine but must not modify it.
	X []float64
	// Generation is the 1-based generation the candidate belongs to (1 is
	// the initial population).
	Generation int
	// Index is the candidate's position in its batch.
	Index int
	// Seed is a random seed drawn for this candidate from the optimiser's
	// stream, for evaluators that need randomness: using it (rather than a
	// generator shared between workers) keeps results independent of the
	// number of workers. Evaluators comparing candidates under common random
	// numbers ignore it and use fixed scenario seeds.
	Seed uint64
}

// Evaluation is the answer for one candidate.
type Evaluation struct {
	// Objectives holds one value per Problem.Objectives, in its units and
	// sense. They must be finite for a feasible candidate; for an infeasible
	// one they are ignored and may be NaN.
	Objectives []float64
	// Constraints holds g_j(x) per Problem.Constraints (nil if there are
	// none); g_j(x) <= 0 is satisfied. NaN is rejected; +Inf is allowed and
	// means "as infeasible as it gets".
	Constraints []float64
}

// Individual is an evaluated candidate. Individuals are values shared
// between the optimiser, the driver and recorders: nobody modifies their
// slices after creation.
type Individual struct {
	// X, Generation, Index and Seed are copied from the Candidate.
	X          []float64
	Generation int
	Index      int
	Seed       uint64
	// Objectives and Constraints are the evaluation's values.
	Objectives  []float64
	Constraints []float64
	// Violation is sum_j max(0, Constraints[j]); zero means feasible.
	Violation float64
}

// Feasible reports whether the individual satisfies every constraint.
func (ind *Individual) Feasible() bool { return ind.Violation <= 0 }

// NewIndividual checks e against the problem and combines it with c into an
// Individual, copying e's slices. Its errors name the candidate and the
// offending objective or constraint.
func (p *Problem) NewIndividual(c Candidate, e Evaluation) (Individual, error) {
	if len(e.Objectives) != len(p.Objectives) {
		return Individual{}, fmt.Errorf("candidate %d of generation %d: got %d objective values, want %d (%s)",
			c.Index, c.Generation, len(e.Objectives), len(p.Objectives), p.objectiveNames())
	}
	if len(e.Constraints) != len(p.Constraints) {
		return Individual{}, fmt.Errorf("candidate %d of generation %d: got %d constraint values, want %d",
			c.Index, c.Generation, len(e.Constraints), len(p.Constraints))
	}
	var viol float64
	for j, g := range e.Constraints {
		if math.IsNaN(g) {
			return Individual{}, fmt.Errorf("candidate %d of generation %d: constraint %q is NaN; want a number (<= 0 when satisfied)",
				c.Index, c.Generation, p.Constraints[j].Name)
		}
		if g > 0 {
			viol += g
		}
	}
	if viol <= 0 {
		for j, f := range e.Objectives {
			if !isFinite(f) {
				return Individual{}, fmt.Errorf("candidate %d of generation %d: objective %q is %v; a feasible candidate needs finite objectives",
					c.Index, c.Generation, p.Objectives[j].Name, f)
			}
		}
	}
	return Individual{
		X:           c.X,
		Generation:  c.Generation,
		Index:       c.Index,
		Seed:        c.Seed,
		Objectives:  append([]float64(nil), e.Objectives...),
		Constraints: append([]float64(nil), e.Constraints...),
		Violation:   viol,
	}, nil
}

func (p *Problem) objectiveNames() string {
	names := make([]string, len(p.Objectives))
	for i, o := range p.Objectives {
		names[i] = o.Name
	}
	return strings.Join(names, ", ")
}

// Method is a population-based multi-objective optimiser driven by reverse
// communication. Calls alternate: Ask, then Tell with the answers for that
// batch, each Tell completing one generation. A Method is used from one
// goroutine; only the evaluation of a batch may be spread over many.
type Method interface {
	// Problem returns the problem being solved.
	Problem() Problem
	// Ask returns the batch of candidates to evaluate for the next
	// generation: the initial population first, offspring afterwards. It
	// returns the same batch until Tell is called. The batch may be smaller
	// than the population size, even empty, when the search space has run
	// out of new points.
	Ask() []Candidate
	// Tell reports the evaluations of the last batch, evals[i] for
	// candidate i, and advances one generation. It returns the evaluated
	// individuals. On error (no batch outstanding, wrong count, malformed
	// evaluation) the method is unchanged and the same batch is still
	// outstanding.
	Tell(evals []Evaluation) ([]Individual, error)
	// Population returns the current population (the survivors of the last
	// generation) in a fresh slice.
	Population() []Individual
	// Generation returns the number of completed generations.
	Generation() int
	// PopulationSize returns the target population size.
	PopulationSize() int
}

const maxExactInt = 1 << 53

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
