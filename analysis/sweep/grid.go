package sweep

import (
	"github.com/cclab/cclab/internal/boundedio"
	"github.com/cclab/cclab/internal/yamlguard"

	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
)

// Axis is one dimension of a sweep grid: a scenario field (any path
// scenario.Set accepts) and the values it takes, as text.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// maxRangeValues bounds FROM:TO:STEP ranges, so that a mistyped step
// (0.0001 instead of 0.01) is an error rather than a sweep of years.
const maxRangeValues = 10000

// ParseAxis parses one --grid flag: KEY=V1,V2,... or KEY=FROM:TO:STEP (an
// inclusive numeric range, e.g. bottleneck.loss.p=0:0.05:0.01). Only the
// syntax is checked here; NewPlan checks that each value is valid for the
// scenario.
func ParseAxis(spec string) (Axis, error) {
	key, list, ok := strings.Cut(spec, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Axis{}, fmt.Errorf("%q: want KEY=V1,V2,... or KEY=FROM:TO:STEP, e.g. cc=newreno,cubic", spec)
	}
	var values []string
	if strings.Count(list, ":") == 2 && !strings.Contains(list, ",") {
		var err error
		if values, err = parseRange(list); err != nil {
			return Axis{}, fmt.Errorf("%s=%s: %v", key, list, err)
		}
	} else {
		for _, v := range strings.Split(list, ",") {
			values = append(values, strings.TrimSpace(v))
		}
	}
	a := Axis{Key: key, Values: values}
	return a, a.check()
}

// check rejects empty and repeated values: a repeated value would run the
// same combination twice under two indices.
func (a Axis) check() error {
	if len(a.Values) == 0 {
		return fmt.Errorf("%s: no values", a.Key)
	}
	seen := map[string]bool{}
	for i, v := range a.Values {
		if v == "" {
			return fmt.Errorf("%s: value %d of %d is empty (want KEY=V1,V2,... without empty entries)", a.Key, i+1, len(a.Values))
		}
		if seen[v] {
			return fmt.Errorf("%s: value %q appears twice", a.Key, v)
		}
		seen[v] = true
	}
	return nil
}

// parseRange expands FROM:TO:STEP, inclusive of TO when it is reached to
// within rounding.
func parseRange(s string) ([]string, error) {
	parts := strings.Split(s, ":")
	var f [3]float64
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("range FROM:TO:STEP: %q is not a finite number", p)
		}
		f[i] = v
	}
	from, to, step := f[0], f[1], f[2]
	if step <= 0 || to < from {
		return nil, fmt.Errorf("range FROM:TO:STEP needs FROM <= TO and STEP > 0")
	}
	n := math.Floor((to-from)/step+1e-9) + 1
	if n > maxRangeValues {
		return nil, fmt.Errorf("range gives %.0f values (limit %d)", n, maxRangeValues)
	}
	out := make([]string, int(n))
	for i := range out {
		// Rounding to 12 significant digits turns 0.30000000000000004
		// into 0.3, the value the user meant.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(from+float64(i)*step, 'g', 12, 64), 64)
		out[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return out, nil
}

// ReadGridFile reads axes from a YAML mapping of keys to value lists, in
// file order:
//
//	cc: [newreno, cubic]
//	bottleneck.loss.p: [0, 0.01, 0.03]
//
// A scalar value is a one-value axis; a string of the form FROM:TO:STEP is
// a range as in ParseAxis.
func ReadGridFile(path string) (axes []Axis, err error) {
	// goccy/go-yaml panics on some malformed inputs: an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			axes, err = nil, fmt.Errorf("%s: malformed YAML that the YAML library cannot decode (%v)", path, r)
		}
	}()
	return readGridFile(path)
}

func readGridFile(path string) ([]Axis, error) {
	data, err := boundedio.ReadFile(path, 1<<20, "grid file")
	if err != nil {
		return nil, err
	}
	if err := yamlguard.Check(data); err != nil {
		return nil, fmt.Errorf("%s:%v", path, err)
	}
	var m yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(data, &m, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("%s: %s (want a mapping of KEY: [V1, V2, ...])", path, firstLine(yaml.FormatError(err, false, false)))
	}
	var axes []Axis
	for _, item := range m {
		key, ok := item.Key.(string)
		if !ok {
			return nil, fmt.Errorf("%s: key %v is not a field path", path, item.Key)
		}
		var values []string
		switch v := item.Value.(type) {
		case []any:
			for _, x := range v {
				s, err := scalarText(x)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %v", path, key, err)
				}
				values = append(values, s)
			}
		default:
			s, err := scalarText(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", path, key, err)
			}
			if strings.Count(s, ":") == 2 {
				if values, err = parseRange(s); err != nil {
					return nil, fmt.Errorf("%s: %s: %v", path, key, err)
				}
			} else {
				values = []string{s}
			}
		}
		a := Axis{Key: key, Values: values}
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		axes = append(axes, a)
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("%s: no axes (want a mapping of KEY: [V1, V2, ...])", path)
	}
	return axes, nil
}

// scalarText turns a decoded YAML scalar back into the text Set expects.
func scalarText(x any) (string, error) {
	switch v := x.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case int:
		return strconv.Itoa(v), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case nil:
		return "", fmt.Errorf("empty value")
	}
	return "", fmt.Errorf("value %v is not a scalar (want a number or text)", x)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
