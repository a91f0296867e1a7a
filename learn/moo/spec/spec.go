// Package spec parses the tune command's --param and --objective arguments
// into moo variables and objectives. It checks syntax and ranges only; the
// command checks the names against the scenario and its controller.
//
//	--param NAME=LO:HI[:int|:real]    e.g. vegas.alpha=1:20:int, bbr.gain=1.5:3
//	--objective max:NAME | min:NAME   e.g. max:goodput_mbps, min:qdelay_mean_ms
//
// A parameter without a kind is real. NAME is a dotted name as moo/expr
// accepts it, so that constraints can refer to it.
package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cclab/cclab/learn/moo"
	"github.com/cclab/cclab/learn/moo/expr"
)

// ParseParam parses NAME=LO:HI[:int|:real]. LO and HI are finite numbers
// with LO < HI, whole numbers for :int.
func ParseParam(s string) (moo.Variable, error) {
	fail := func(format string, args ...any) (moo.Variable, error) {
		return moo.Variable{}, fmt.Errorf("--param %q: %s; want NAME=LO:HI[:int|:real], e.g. vegas.alpha=1:20:int", s, fmt.Sprintf(format, args...))
	}
	name, rng, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok {
		return fail("missing '='")
	}
	if !expr.IsName(name) {
		if name == "" {
			return fail("missing parameter name before '='")
		}
		return fail("malformed name %q: want words of letters, digits and _ joined by single dots", name)
	}
	parts := strings.Split(rng, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return fail("range %q has %d fields", rng, len(parts))
	}
	v := moo.Variable{Name: name}
	if len(parts) == 3 {
		switch k := strings.TrimSpace(parts[2]); k {
		case "int":
			v.Kind = moo.Integer
		case "real":
			v.Kind = moo.Real
		default:
			return fail("unknown kind %q; accepted: int, real", k)
		}
	}
	var err error
	for i, dst := range []*float64{&v.Lower, &v.Upper} {
		field := [...]string{"lower bound", "upper bound"}[i]
		txt := strings.TrimSpace(parts[i])
		*dst, err = strconv.ParseFloat(txt, 64)
		if err != nil || math.IsNaN(*dst) || math.IsInf(*dst, 0) {
			return fail("%s %q is not a finite number", field, txt)
		}
		if v.Kind == moo.Integer && *dst != math.Trunc(*dst) {
			return fail("%s %v of an int parameter is not a whole number", field, *dst)
		}
	}
	if !(v.Lower < v.Upper) {
		return fail("lower bound %v must be less than upper bound %v", v.Lower, v.Upper)
	}
	if err := v.Validate(); err != nil {
		return fail("%v", err)
	}
	return v, nil
}

// ParseObjective parses max:NAME or min:NAME.
func ParseObjective(s string) (moo.Objective, error) {
	sense, name, ok := strings.Cut(s, ":")
	sense, name = strings.TrimSpace(sense), strings.TrimSpace(name)
	o := moo.Objective{Name: name}
	switch {
	case !ok:
		return o, fmt.Errorf("--objective %q: missing ':'; want max:NAME or min:NAME, e.g. max:goodput_mbps", s)
	case sense == "max":
		o.Sense = moo.Maximize
	case sense == "min":
		o.Sense = moo.Minimize
	default:
		return o, fmt.Errorf("--objective %q: unknown sense %q; accepted: max, min", s, sense)
	}
	if !expr.IsName(name) {
		return o, fmt.Errorf("--objective %q: malformed metric name %q; want words of letters, digits and _ joined by single dots, e.g. goodput_mbps", s, name)
	}
	return o, nil
}

// FormatParam returns the --param spelling of v; ParseParam reads it back.
func FormatParam(v moo.Variable) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return v.Name + "=" + f(v.Lower) + ":" + f(v.Upper) + ":" + v.Kind.String()
}

// FormatObjective returns the --objective spelling of o.
func FormatObjective(o moo.Objective) string { return o.Sense.String() + ":" + o.Name }
