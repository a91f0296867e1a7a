package scenario

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/cclab/cclab/cc"
)

// Set changes one field given a dotted path and a value as text, the way
// --set, sweep grids and tuners address a scenario:
//
//	bottleneck.loss.p=0.01     a field (YAML names)
//	flows.0.bytes=600KB        a list element (also flows[0].bytes)
//	flows.*.extra_delay=10ms   every element
//	cc=vegas                   shorthand: every flow's controller
//	cc.alpha=3                 shorthand: parameter alpha of every flow's controller
//	vegas.alpha=3              shorthand: parameter alpha of every flow using vegas
//
// Call Validate afterwards: Set stores text, Validate parses and checks it.
func (s *Scenario) Set(path, value string) error {
	path = strings.TrimSpace(strings.NewReplacer("[", ".", "]", "").Replace(path))
	if path == "" {
		return fmt.Errorf("empty path")
	}
	if path == "cc" {
		if len(s.Flows) == 0 {
			return fmt.Errorf("cc: the scenario has no flows")
		}
		for i := range s.Flows {
			s.Flows[i].CC = CC{Name: value}
		}
		return nil
	}
	segs := strings.Split(path, ".")
	if len(segs) == 2 && segs[0] == "cc" {
		// cc.<param>: the parameter of every flow's controller.
		if len(s.Flows) == 0 {
			return fmt.Errorf("cc: the scenario has no flows")
		}
		for i := range s.Flows {
			if err := setPath(reflect.ValueOf(&s.Flows[i].CC).Elem(), segs[1:], value, fmt.Sprintf("flows.%d.cc", i)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(segs) == 2 {
		if _, err := cc.Lookup(segs[0]); err == nil {
			return s.setCCParam(segs[0], segs[1], value)
		}
	}
	return setPath(reflect.ValueOf(s).Elem(), segs, value, "")
}

// CCParamTargets counts the flows whose controller is name.
func (s *Scenario) CCParamTargets(name string) int {
	n := 0
	for _, f := range s.Flows {
		if f.CC.Name == name {
			n++
		}
	}
	return n
}

func (s *Scenario) setCCParam(name, param, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("%s.%s: %q is not a number", name, param, value)
	}
	spec, _ := cc.Lookup(name)
	if _, ok := spec.Param(param); !ok {
		return fmt.Errorf("%s has no parameter %q (accepted: %s)", name, param, strings.Join(spec.ParamNames(), ", "))
	}
	n := 0
	for i := range s.Flows {
		f := &s.Flows[i]
		if f.CC.Name != name {
			continue
		}
		if f.CC.Params == nil {
			f.CC.Params = map[string]float64{}
		}
		f.CC.Params[param] = v
		n++
	}
	if n == 0 {
		used := map[string]bool{}
		for _, f := range s.Flows {
			used[f.CC.Name] = true
		}
		names := make([]string, 0, len(used))
		for k := range used {
			names = append(names, k)
		}
		sort.Strings(names)
		return &UnusedParamError{Controller: name, Param: param, Used: names}
	}
	return nil
}

// UnusedParamError is Set's error for a controller parameter
// ("cubic.beta") when no flow uses that controller. A sweep crossing
// controllers with one controller's parameter treats it as "does not
// apply" rather than as a mistake.
type UnusedParamError struct {
	Controller, Param string
	// Used lists the controllers the flows use.
	Used []string
}

func (e *UnusedParamError) Error() string {
	return fmt.Sprintf("%s.%s: no flow uses %s (flows use: %s)", e.Controller, e.Param, e.Controller, strings.Join(e.Used, ", "))
}

var (
	ccType       = reflect.TypeOf(CC{})
	rawTypes     = map[reflect.Type]bool{reflect.TypeOf(Rate{}): true, reflect.TypeOf(Size{}): true, reflect.TypeOf(Duration{}): true}
	paramMapType = reflect.TypeOf(map[string]float64{})
)

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	if tag == "" || tag == "-" {
		return ""
	}
	return strings.Split(tag, ",")[0]
}

func setPath(v reflect.Value, segs []string, value, done string) error {
	here := strings.TrimPrefix(done, ".")
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.Type() == ccType {
		c := v.Addr().Interface().(*CC)
		switch len(segs) {
		case 0:
			*c = CC{Name: value}
			return nil
		case 1:
			if segs[0] == "name" {
				c.Name = value
				return nil
			}
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return fmt.Errorf("%s.%s: %q is not a number", here, segs[0], value)
			}
			if c.Params == nil {
				c.Params = map[string]float64{}
			}
			c.Params[segs[0]] = f
			return nil
		}
		return fmt.Errorf("%s: a controller takes name or one parameter, not %q", here, strings.Join(segs, "."))
	}
	if len(segs) == 0 {
		return setLeaf(v, value, here)
	}
	seg := segs[0]
	switch v.Kind() {
	case reflect.Struct:
		if rawTypes[v.Type()] {
			return fmt.Errorf("%s is a value, it has no field %q", here, seg)
		}
		var names []string
		for i := 0; i < v.NumField(); i++ {
			n := yamlName(v.Type().Field(i))
			if n == "" {
				continue
			}
			if n == seg {
				if err := setPath(v.Field(i), segs[1:], value, done+"."+seg); err != nil {
					return err
				}
				if e, ok := v.Addr().Interface().(explicitSetter); ok && len(segs) == 1 {
					e.setExplicit(seg)
				}
				return nil
			}
			names = append(names, n)
		}
		where := here
		if where == "" {
			where = "the scenario"
		}
		near := ""
		best := len(seg)/2 + 2
		for _, n := range names {
			if d := editDistance(seg, n); d < best {
				near, best = n, d
			}
		}
		if near != "" {
			return fmt.Errorf("%s has no field %q: did you mean %q? (accepted: %s, and the shorthands cc and <controller>.<param>)", where, seg, near, strings.Join(names, ", "))
		}
		return fmt.Errorf("%s has no field %q (accepted: %s, and the shorthands cc and <controller>.<param>)", where, seg, strings.Join(names, ", "))
	case reflect.Slice:
		if seg == "*" {
			if v.Len() == 0 {
				return fmt.Errorf("%s is empty", here)
			}
			for i := 0; i < v.Len(); i++ {
				if err := setPath(v.Index(i), segs[1:], value, fmt.Sprintf("%s.%d", done, i)); err != nil {
					return err
				}
			}
			return nil
		}
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 {
			return fmt.Errorf("%s is a list: index it with a number or *, not %q", here, seg)
		}
		if i >= v.Len() {
			return fmt.Errorf("%s has %d entries, index %d is out of range", here, v.Len(), i)
		}
		return setPath(v.Index(i), segs[1:], value, done+"."+seg)
	case reflect.Map:
		if v.Type() != paramMapType || len(segs) != 1 {
			return fmt.Errorf("%s: cannot set %q", here, strings.Join(segs, "."))
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s.%s: %q is not a number", here, seg, value)
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(paramMapType))
		}
		v.SetMapIndex(reflect.ValueOf(seg), reflect.ValueOf(f))
		return nil
	}
	return fmt.Errorf("%s is a value, it has no field %q", here, seg)
}

// explicitSetter is implemented by records with fields whose default
// Validate derives from other fields: setting such a field makes it the
// user's value, not to be derived again.
type explicitSetter interface{ setExplicit(field string) }

func (l *Loss) setExplicit(f string) {
	if f == "model" {
		l.modelDefault = ""
	}
}

func (q *Queue) setExplicit(f string) {
	if f == "limit" {
		q.limitDefault = ""
	}
}

func (l *Link) setExplicit(f string) {
	if f == "trace_mode" {
		l.traceModeDefault = ""
	}
}

func setLeaf(v reflect.Value, value, path string) error {
	if rawTypes[v.Type()] {
		v.FieldByName("Raw").SetString(strings.TrimSpace(value))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(value)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not an integer", path, value)
		}
		v.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a non-negative integer", path, value)
		}
		v.SetUint(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a number", path, value)
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", path, value)
		}
		v.SetBool(b)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("%s is a list of records: set one of its fields", path)
		}
		parts := strings.Split(value, ",")
		v.Set(reflect.ValueOf(parts))
	case reflect.Struct:
		return fmt.Errorf("%s is a group of fields: set one of them (e.g. %s.<field>)", path, path)
	default:
		return fmt.Errorf("%s cannot be set from text", path)
	}
	return nil
}

// FlowECN reports whether flow f asks for ECN: its own transport.ecn if it
// sets one, else the scenario's, else false (Linux's default, which
// answers ECN but does not ask for it). A controller that needs ECN turns
// it on besides (cc.NeedsECN).
func (s *Scenario) FlowECN(f *Flow) bool {
	return TransportSetting(s.Transport, f.Transport, func(t *Transport) *bool { return t.ECN })
}

// FlowNagle is transport.nagle for flow f (nil: the scenario's background
// flows): its own, else the scenario's, else false.
func (s *Scenario) FlowNagle(f *Flow) bool {
	var over *Transport
	if f != nil {
		over = f.Transport
	}
	return TransportSetting(s.Transport, over, func(t *Transport) *bool { return t.Nagle })
}

// TransportSetting is a transport setting that a flow may set and the
// scenario may default, which field picks: the flow's own (over) if it
// sets one, else the scenario's (def), else T's zero value.
func TransportSetting[T any](def Transport, over *Transport, field func(*Transport) *T) T {
	if over != nil {
		if v := field(over); v != nil {
			return *v
		}
	}
	if v := field(&def); v != nil {
		return *v
	}
	var zero T
	return zero
}
