package gym

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
)

// options reads a Make request's options, remembering which were used so
// that unknown names are reported instead of ignored.
type options struct {
	m     map[string]string
	used  map[string]bool
	known []Option
	err   error
}

func newOptions(m map[string]string, known []Option) *options {
	return &options{m: m, used: map[string]bool{}, known: known}
}

func (o *options) fail(name, format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("options[%q]: %s", name, fmt.Sprintf(format, args...))
	}
}

func (o *options) raw(name string) (string, bool) {
	o.used[name] = true
	v, ok := o.m[name]
	return strings.TrimSpace(v), ok
}

// String returns the option or def.
func (o *options) String(name, def string) string {
	if v, ok := o.raw(name); ok {
		return v
	}
	return def
}

// Float returns the option, which must lie in [lo, hi], or def.
func (o *options) Float(name string, def, lo, hi float64) float64 {
	v, ok := o.raw(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < lo || f > hi {
		o.fail(name, "%q is not a number in [%g, %g]", v, lo, hi)
		return def
	}
	return f
}

// Int returns the option, which must lie in [lo, hi], or def.
func (o *options) Int(name string, def, lo, hi int) int {
	v, ok := o.raw(name)
	if !ok {
		return def
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < lo || i > hi {
		o.fail(name, "%q is not an integer in [%d, %d]", v, lo, hi)
		return def
	}
	return i
}

// Bool returns the option (true/false/1/0) or def.
func (o *options) Bool(name string, def bool) bool {
	v, ok := o.raw(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		o.fail(name, "%q is not true or false", v)
		return def
	}
	return b
}

// Duration returns the option (a Go duration such as "100ms"), which must
// lie in [lo, hi], or def.
func (o *options) Duration(name string, def, lo, hi time.Duration) time.Duration {
	v, ok := o.raw(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		o.fail(name, "%q is not a duration in [%v, %v]", v, lo, hi)
		return def
	}
	return d
}

// List returns the comma-separated option or def.
func (o *options) List(name string, def []string) []string {
	v, ok := o.raw(name)
	if !ok {
		return def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Scenario loads the scenario named by the option (a file, or a scenario
// built into cclab) or def.
func (o *options) Scenario(name, def string) *scenario.Scenario {
	if y, ok := o.raw(name + "_yaml"); ok {
		s, err := decodeScenario([]byte(o.m[name+"_yaml"]), "<"+name+"_yaml>")
		if err != nil {
			o.fail(name+"_yaml", "%v", err)
			return nil
		}
		_ = y
		return s
	}
	path := o.String(name, def)
	if path == "" {
		o.fail(name, "a scenario file or built-in name is required (built-in: %s)", strings.Join(scenarios.Names(), ", "))
		return nil
	}
	s, err := loadScenario(path)
	if err != nil {
		o.fail(name, "%v", err)
		return nil
	}
	return s
}

// Done returns the first error, or an error naming unknown options.
func (o *options) Done() error {
	if o.err != nil {
		return o.err
	}
	var unknown []string
	for k := range o.m {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(o.known))
		for i, k := range o.known {
			names[i] = k.Name
		}
		return fmt.Errorf("options[%q]: unknown option (accepted: %s)", unknown[0], strings.Join(names, ", "))
	}
	return nil
}

// loadScenario reads a scenario file, or a built-in scenario by name when
// no such file exists.
func loadScenario(path string) (*scenario.Scenario, error) {
	data, err := scenarios.Read(path)
	if err != nil {
		return nil, err
	}
	return decodeScenario(data, path)
}

// maxScenarioBytes bounds scenario files and inline scenarios.
const maxScenarioBytes = 4 << 20

// decodeScenario parses and validates a scenario's YAML.
func decodeScenario(data []byte, path string) (*scenario.Scenario, error) {
	if len(data) > maxScenarioBytes {
		return nil, fmt.Errorf("%s: %d bytes is too large for a scenario", path, len(data))
	}
	s, file, err := scenario.Decode(data, path)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, scenario.Locate(err, file, path)
	}
	return s, nil
}
