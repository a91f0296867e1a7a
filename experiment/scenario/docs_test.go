package scenario

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsNameEveryField: bug 8. docs/scenarios.md called the arrivals'
// `sizes` field `size` and left out the transport fields and a flow's
// protocol; every YAML field of a scenario must now appear in it.
func TestDocsNameEveryField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scenarios.md")
	if err != nil {
		t.Skip("docs not found:", err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, at string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || rawTypes[ty] || ty == ccType || seen[ty] {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			name := yamlName(ty.Field(i))
			if name == "" {
				continue
			}
			if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), name+":") {
				t.Errorf("docs/scenarios.md does not mention %s.%s", at, name)
			}
			walk(ty.Field(i).Type, at+"."+name)
		}
	}
	walk(reflect.TypeOf(Scenario{}), "scenario")
	if !strings.Contains(string(doc), "[60s]") && !strings.Contains(string(doc), "defaults to 60s") {
		t.Errorf("docs/scenarios.md does not give the default duration")
	}
}
