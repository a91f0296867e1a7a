package scenario

import (
	"fmt"
	"sort"
	"strconv"
)

// UnmarshalYAML accepts a name or a mapping with a name and numeric
// parameters. Non-numeric parameters are reported by Validate, which knows
// the field's position.
func (c *CC) UnmarshalYAML(unmarshal func(any) error) error {
	var name string
	if err := unmarshal(&name); err == nil {
		c.Name = name
		return nil
	}
	var m map[string]any
	if err := unmarshal(&m); err != nil {
		return fmt.Errorf("cc must be a controller name or a mapping {name: ..., param: value}")
	}
	c.Params = map[string]float64{}
	for k, v := range m {
		if k == "name" {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("cc name must be a string, got %v", v)
			}
			c.Name = s
			continue
		}
		f, ok := toFloat(v)
		if !ok {
			return fmt.Errorf("cc parameter %s must be a number, got %v", k, v)
		}
		c.Params[k] = f
	}
	return nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func sortStrings(s []string) { sort.Strings(s) }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
