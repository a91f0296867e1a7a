package cc

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/cclab/cclab/core/units"
)

// ParamSpec documents one controller parameter.
type ParamSpec struct {
	// Name is the key used in scenario files, --set paths and tuning.
	Name string `json:"name"`
	// Default is the value used when the parameter is not given.
	Default float64 `json:"default"`
	// Min and Max bound the accepted values (inclusive).
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Integer restricts the parameter to whole numbers.
	Integer bool `json:"integer,omitempty"`
	// Unit names the unit ("segments", "s", "rounds"), or "" if unitless.
	Unit string `json:"unit,omitempty"`
	// Doc is a one-line description.
	Doc string `json:"doc"`
}

// Config is what a constructor receives.
type Config struct {
	// MSS is the transport's maximum segment size, bytes.
	MSS units.Bytes
	// Params holds every parameter of the Spec, defaults filled in and
	// validated by Spec.Resolve.
	Params map[string]float64
	// Seed is a per-flow seed for controllers that randomise (BBR's
	// PROBE_BW start phase): the simulator derives it from the scenario
	// seed and the flow's name; 0 means none was given.
	Seed uint64
}

// Spec describes a registered controller.
type Spec struct {
	// Name is the controller's name in scenarios ("cubic").
	Name string `json:"name"`
	// Doc is a one-line description with its reference.
	Doc string `json:"doc"`
	// Params lists the parameters with their defaults.
	Params []ParamSpec `json:"params"`
	// New constructs a controller from a resolved Config.
	New func(cfg Config) (Algorithm, error) `json:"-"`
}

var (
	mu       sync.RWMutex
	registry = map[string]Spec{}
)

// Register adds a controller. It panics on a duplicate name, which is a
// programming error.
func Register(s Spec) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[s.Name]; dup {
		panic("cc: duplicate controller " + s.Name)
	}
	registry[s.Name] = s
}

// Names returns the registered controller names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the named controller's Spec, or an error listing the
// accepted names.
func Lookup(name string) (Spec, error) {
	mu.RLock()
	s, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return Spec{}, fmt.Errorf("unknown congestion controller %q (accepted: %s)", name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// Param returns the named parameter's spec.
func (s Spec) Param(name string) (ParamSpec, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
	}
	return ParamSpec{}, false
}

// ParamNames lists the parameter names in declaration order.
func (s Spec) ParamNames() []string {
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return names
}

// Check validates one parameter value against its spec.
func (p ParamSpec) Check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("parameter %s must be a finite number", p.Name)
	}
	if v < p.Min || v > p.Max {
		return fmt.Errorf("parameter %s = %g is out of range [%g, %g]", p.Name, v, p.Min, p.Max)
	}
	if p.Integer && v != math.Trunc(v) {
		return fmt.Errorf("parameter %s = %g must be a whole number", p.Name, v)
	}
	return nil
}

// Resolve returns the complete parameter set: defaults overridden by the
// given values, each validated. Unknown names are refused with the list of
// accepted ones.
func (s Spec) Resolve(given map[string]float64) (map[string]float64, error) {
	out := make(map[string]float64, len(s.Params))
	for _, p := range s.Params {
		out[p.Name] = p.Default
	}
	keys := make([]string, 0, len(given))
	for k := range given {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		p, ok := s.Param(k)
		if !ok {
			accepted := "none"
			if len(s.Params) > 0 {
				accepted = strings.Join(s.ParamNames(), ", ")
			}
			return nil, fmt.Errorf("%s has no parameter %q (accepted: %s)", s.Name, k, accepted)
		}
		if err := p.Check(given[k]); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		out[k] = given[k]
	}
	return out, nil
}

// New constructs the named controller with the given MSS and parameters
// (missing ones take their defaults).
func New(name string, mss units.Bytes, params map[string]float64) (Algorithm, error) {
	return NewSeeded(name, mss, params, 0)
}

// NewSeeded is New with a per-flow seed (see Config.Seed).
func NewSeeded(name string, mss units.Bytes, params map[string]float64, seed uint64) (Algorithm, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if mss <= 0 {
		return nil, fmt.Errorf("%s: MSS must be positive, got %d", name, mss)
	}
	p, err := s.Resolve(params)
	if err != nil {
		return nil, err
	}
	return s.New(Config{MSS: mss, Params: p, Seed: seed})
}

// SetParamChecked validates value against spec and, if valid, calls set.
// Controllers use it to implement Tunable with the same messages as Resolve.
func SetParamChecked(s Spec, name string, value float64, set func(float64)) error {
	p, ok := s.Param(name)
	if !ok {
		return fmt.Errorf("%s has no parameter %q (accepted: %s)", s.Name, name, strings.Join(s.ParamNames(), ", "))
	}
	if err := p.Check(value); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	set(value)
	return nil
}

// NeedsECN reports whether the registered controller of that name needs
// ECN (implements ECNObserver, as DCTCP): a transport turns ECN on for
// it, as Linux does for modules with TCP_CONG_NEEDS_ECN. An unknown name
// needs none.
func NeedsECN(name string) bool {
	alg, err := New(name, 1448, nil)
	if err != nil {
		return false
	}
	_, ok := alg.(ECNObserver)
	return ok
}
