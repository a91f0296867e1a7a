package tune

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/expr"
	"github.com/cclab/cclab/learn/moo/spec"
)

// Spec is a tuning problem as the user writes it: the command's --param,
// --objective and --constraint arguments, and optional baseline values.
type Spec struct {
	// Params are NAME=LO:HI[:int|:real] (moo/spec), NAME a scenario path
	// that scenario.Set accepts: a controller parameter (vegas.alpha,
	// cc.beta) or any numeric field (bottleneck.queue.limit).
	Params []string
	// Objectives are max:METRIC or min:METRIC, METRIC from the metric
	// namespace (see LookupMetric).
	Objectives []string
	// Constraints are comparisons (moo/expr) between parameters and
	// metrics, e.g. "vegas.alpha < vegas.beta" or "qdelay_p95_ms <= 100".
	Constraints []string
	// Defaults gives the baseline value of parameters whose value in the
	// scenario is not known (or overrides it). The baseline ("the default
	// parameters") is marked on plots and compared against on held-out
	// cases.
	Defaults map[string]float64
}

// Param is a tuned parameter: a moo variable whose name is a scenario path.
type Param struct {
	moo.Variable
	// Default is the baseline value: the value the first scenario gives the
	// parameter (for a controller parameter it does not set, the
	// controller's default), or Spec.Defaults's; NaN if unknown.
	Default float64
}

// Problem is a tuning problem checked against the scenarios it will run
// on. It is immutable once built and safe for concurrent use.
type Problem struct {
	// MOO is the problem handed to the optimiser: the variables, the
	// objectives and the constraints (the user's, then, if some metric may
	// be undefined, "metrics defined").
	MOO moo.Problem
	// Params are the variables with their baseline values.
	Params []Param
	// Objectives are the metrics behind MOO.Objectives, in order.
	Objectives []Metric

	constraints []*expr.Constraint
	paramOnly   []bool // constraint j refers to parameters only
	// metrics are the metrics a simulation must report: the objectives',
	// then those constraints use that are not objectives.
	metrics []Metric
	// cmetric[k] is the index in metrics of the k-th metric name a
	// constraint may use (expression variables after the parameters).
	cmetric []int
	// guard adds the "metrics defined" constraint.
	guard bool
}

// guardName names the implicit constraint that makes a candidate
// infeasible when one of its metrics is undefined in some case.
const guardName = "metrics defined"

// NewProblem parses and checks sp against the scenarios, which must be
// validated. Every parameter must be settable in every scenario, within
// the controller's accepted range, and its bounds must give valid
// scenarios; errors say what is accepted.
func NewProblem(scenarios []*scenario.Scenario, sp Spec) (*Problem, error) {
	if len(scenarios) == 0 {
		return nil, errors.New("no scenario to tune on")
	}
	if len(sp.Params) == 0 {
		return nil, errors.New("no parameter to tune: give at least one --param NAME=LO:HI[:int|:real], e.g. vegas.alpha=1:20:int")
	}
	if len(sp.Objectives) == 0 {
		return nil, fmt.Errorf("no objective: give at least one --objective max:METRIC or min:METRIC; accepted metrics: %s", MetricHelp())
	}
	p := &Problem{}
	for _, s := range sp.Params {
		v, err := spec.ParseParam(s)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(p.Params, func(q Param) bool { return q.Name == v.Name }) {
			return nil, fmt.Errorf("--param %q: parameter %s is given twice", s, v.Name)
		}
		for _, sc := range scenarios {
			if err := checkParam(sc, v); err != nil {
				return nil, fmt.Errorf("--param %q: %w", s, err)
			}
		}
		def, ok := sp.Defaults[v.Name]
		if !ok {
			def = currentValue(scenarios[0], v.Name)
		}
		p.Params = append(p.Params, Param{Variable: v, Default: def})
		p.MOO.Variables = append(p.MOO.Variables, v)
	}
	for name := range sp.Defaults {
		if !slices.ContainsFunc(p.Params, func(q Param) bool { return q.Name == name }) {
			return nil, fmt.Errorf("default for %q: not a tuned parameter (tuned: %s)", name, strings.Join(p.MOO.VariableNames(), ", "))
		}
	}
	for _, s := range sp.Objectives {
		o, err := spec.ParseObjective(s)
		if err != nil {
			return nil, err
		}
		m, err := LookupMetric(o.Name)
		if err != nil {
			return nil, fmt.Errorf("--objective %q: %w", s, err)
		}
		if slices.ContainsFunc(p.MOO.Objectives, func(q moo.Objective) bool { return q.Name == o.Name }) {
			return nil, fmt.Errorf("--objective %q: metric %s is already an objective", s, o.Name)
		}
		p.MOO.Objectives = append(p.MOO.Objectives, o)
		p.Objectives = append(p.Objectives, m)
		p.metrics = append(p.metrics, m)
	}
	if err := p.parseConstraints(sp.Constraints); err != nil {
		return nil, err
	}
	for _, m := range p.metrics {
		p.guard = p.guard || m.MayBeUndefined
	}
	if p.guard {
		p.MOO.Constraints = append(p.MOO.Constraints, moo.Constraint{Name: guardName})
	}
	if err := p.MOO.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// nameToken finds the names in a constraint, to learn which metrics it
// uses before compiling it.
var nameToken = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*`)

func (p *Problem) parseConstraints(srcs []string) error {
	vars := p.MOO.VariableNames()
	names := slices.Clone(vars)
	for _, src := range srcs {
		for _, tok := range nameToken.FindAllString(src, -1) {
			if slices.Contains(names, tok) {
				continue
			}
			m, err := LookupMetric(tok)
			if err != nil {
				continue // the parser reports unknown names with the accepted ones
			}
			names = append(names, tok)
			k := slices.IndexFunc(p.metrics, func(q Metric) bool { return q.Name == tok })
			if k < 0 {
				k = len(p.metrics)
				p.metrics = append(p.metrics, m)
			}
			p.cmetric = append(p.cmetric, k)
		}
	}
	for _, src := range srcs {
		c, err := expr.Parse(src, names)
		if err != nil {
			if strings.Contains(err.Error(), "unknown variable") {
				return fmt.Errorf("--constraint: %w\nconstraints may use the tuned parameters (%s) and metrics: %s", err, strings.Join(vars, ", "), MetricHelp())
			}
			return fmt.Errorf("--constraint: %w", err)
		}
		only := true
		for _, v := range c.Variables() {
			only = only && slices.Contains(vars, v)
		}
		p.constraints = append(p.constraints, c)
		p.paramOnly = append(p.paramOnly, only)
		p.MOO.Constraints = append(p.MOO.Constraints, moo.Constraint{Name: c.Source()})
	}
	return nil
}

// Metrics returns the metrics a simulation reports for this problem: the
// objectives, then any other metric a constraint uses.
func (p *Problem) Metrics() []Metric { return slices.Clone(p.metrics) }

// Default returns the baseline parameter vector, or nil if some parameter's
// baseline is unknown (give it with Spec.Defaults).
func (p *Problem) Default() []float64 {
	x := make([]float64, len(p.Params))
	for i, q := range p.Params {
		if math.IsNaN(q.Default) {
			return nil
		}
		x[i] = q.Default
	}
	return x
}

// FormatValue writes a parameter value as scenario.Set expects it.
func FormatValue(v moo.Variable, x float64) string {
	if v.Kind == moo.Integer || x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// Apply sets the parameters x on s (a clone the caller owns) and
// validates it.
func (p *Problem) Apply(s *scenario.Scenario, x []float64) error {
	if len(x) != len(p.Params) {
		return fmt.Errorf("got %d parameter values, want %d (%s)", len(x), len(p.Params), strings.Join(p.MOO.VariableNames(), ", "))
	}
	for i, q := range p.Params {
		if err := s.Set(q.Name, FormatValue(q.Variable, x[i])); err != nil {
			return fmt.Errorf("%s=%s: %w", q.Name, FormatValue(q.Variable, x[i]), err)
		}
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("parameters %s: %w", p.FormatX(x), err)
	}
	return nil
}

// FormatX writes a parameter vector as "vegas.alpha=3 vegas.beta=4".
func (p *Problem) FormatX(x []float64) string {
	parts := make([]string, len(x))
	for i, v := range x {
		name := fmt.Sprintf("x%d", i)
		var vr moo.Variable
		if i < len(p.Params) {
			vr = p.Params[i].Variable
			name = vr.Name
		}
		parts[i] = name + "=" + FormatValue(vr, v)
	}
	return strings.Join(parts, " ")
}

// paramConstraints returns g for the constraints on parameters alone, in
// MOO.Constraints order, with 0 for the others; infeasible reports whether
// one is violated (the candidate need not be simulated).
func (p *Problem) paramConstraints(x []float64) (g []float64, infeasible bool) {
	g = make([]float64, len(p.MOO.Constraints))
	y := p.constraintVector(x, nil)
	for j, c := range p.constraints {
		if p.paramOnly[j] {
			g[j] = c.G(y)
			infeasible = infeasible || g[j] > 0
		}
	}
	return g, infeasible
}

// constraintVector builds the expression variables: the parameters, then
// the metric values constraints use (NaN when means is nil).
func (p *Problem) constraintVector(x, means []float64) []float64 {
	y := slices.Clone(x)
	for _, k := range p.cmetric {
		v := math.NaN()
		if means != nil {
			v = means[k]
		}
		y = append(y, v)
	}
	return y
}

// evaluation turns a candidate's mean metrics into its moo.Evaluation:
// objectives and every constraint. undefined is the fraction of cases in
// which some metric was undefined (then means is ignored).
func (p *Problem) evaluation(x, means []float64, undefined float64) moo.Evaluation {
	e := moo.Evaluation{Objectives: make([]float64, len(p.Objectives))}
	if len(p.MOO.Constraints) > 0 {
		e.Constraints = make([]float64, len(p.MOO.Constraints))
	}
	if undefined > 0 {
		for j := range e.Objectives {
			e.Objectives[j] = math.NaN()
		}
		y := p.constraintVector(x, nil)
		for j, c := range p.constraints {
			if p.paramOnly[j] {
				e.Constraints[j] = c.G(y)
			}
		}
		e.Constraints[len(e.Constraints)-1] = undefined
		return e
	}
	copy(e.Objectives, means)
	y := p.constraintVector(x, means)
	for j, c := range p.constraints {
		e.Constraints[j] = c.G(y)
	}
	return e
}

// checkParam checks that v can be set in s: a known controller parameter
// with bounds inside the controller's range and the right kind, or a path
// whose bounds give a valid scenario.
func checkParam(s *scenario.Scenario, v moo.Variable) error {
	segs := strings.Split(v.Name, ".")
	if len(segs) == 2 {
		var specs []cc.Spec
		if segs[0] == "cc" {
			for _, f := range s.Flows {
				sp, err := cc.Lookup(f.CC.Name)
				if err != nil {
					return err
				}
				specs = append(specs, sp)
			}
		} else if sp, err := cc.Lookup(segs[0]); err == nil {
			specs = append(specs, sp)
		}
		for _, sp := range specs {
			ps, ok := sp.Param(segs[1])
			if !ok {
				return fmt.Errorf("%s has no parameter %q (accepted: %s)", sp.Name, segs[1], strings.Join(sp.ParamNames(), ", "))
			}
			if v.Lower < ps.Min || v.Upper > ps.Max {
				return fmt.Errorf("range [%g, %g] exceeds what %s.%s accepts, [%g, %g]", v.Lower, v.Upper, sp.Name, ps.Name, ps.Min, ps.Max)
			}
			if ps.Integer && v.Kind != moo.Integer {
				return fmt.Errorf("%s.%s is a whole number; write %s", sp.Name, ps.Name, spec.FormatParam(moo.Variable{Name: v.Name, Lower: v.Lower, Upper: v.Upper, Kind: moo.Integer}))
			}
		}
	}
	for _, x := range []float64{v.Lower, v.Upper} {
		c := s.Clone()
		if err := c.Set(v.Name, FormatValue(v, x)); err != nil {
			if len(segs) == 2 && segs[0] != "cc" {
				if _, lerr := cc.Lookup(segs[0]); lerr != nil {
					return fmt.Errorf("scenario %s: %w; a controller parameter is CONTROLLER.PARAM or cc.PARAM, controllers: %s", s.Name, err, strings.Join(cc.Names(), ", "))
				}
			}
			return fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		if err := c.Validate(); err != nil {
			return fmt.Errorf("scenario %s with %s=%s: %w (a --param writes a plain number; fields with units are not tunable this way)",
				s.Name, v.Name, FormatValue(v, x), err)
		}
	}
	return nil
}

// currentValue returns the value the scenario gives a parameter path: a
// controller parameter of the first flow it applies to (the controller's
// default if unset), or a plain numeric field; NaN if unknown.
func currentValue(s *scenario.Scenario, path string) float64 {
	segs := strings.Split(path, ".")
	if len(segs) == 2 {
		for _, f := range s.Flows {
			if segs[0] != "cc" && f.CC.Name != segs[0] {
				continue
			}
			if v, ok := f.CC.Params[segs[1]]; ok {
				return v
			}
			if sp, err := cc.Lookup(f.CC.Name); err == nil {
				if ps, ok := sp.Param(segs[1]); ok {
					return ps.Default
				}
			}
			return math.NaN()
		}
	}
	return fieldValue(reflect.ValueOf(s).Elem(), segs)
}

// fieldValue follows YAML field names and list indices to a numeric leaf
// or a controller parameter; NaN when there is none.
func fieldValue(v reflect.Value, segs []string) float64 {
	for len(segs) > 0 {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return math.NaN()
			}
			v = v.Elem()
		}
		if c, ok := v.Interface().(scenario.CC); ok {
			if len(segs) != 1 {
				return math.NaN()
			}
			if x, ok := c.Params[segs[0]]; ok {
				return x
			}
			if sp, err := cc.Lookup(c.Name); err == nil {
				if ps, ok := sp.Param(segs[0]); ok {
					return ps.Default
				}
			}
			return math.NaN()
		}
		switch v.Kind() {
		case reflect.Struct:
			found := false
			for i := 0; i < v.NumField(); i++ {
				tag := strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0]
				if tag == segs[0] {
					v, found = v.Field(i), true
					break
				}
			}
			if !found {
				return math.NaN()
			}
		case reflect.Slice:
			i, err := strconv.Atoi(segs[0])
			if err != nil || i < 0 || i >= v.Len() {
				return math.NaN()
			}
			v = v.Index(i)
		default:
			return math.NaN()
		}
		segs = segs[1:]
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return math.NaN()
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint64:
		return float64(v.Uint())
	case reflect.Float64:
		return v.Float()
	}
	if sz, ok := v.Interface().(scenario.Size); ok && sz.IsSet() {
		if sz.Packets > 0 {
			return float64(sz.Packets)
		}
		return float64(sz.V)
	}
	return math.NaN()
}
