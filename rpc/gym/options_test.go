package gym

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadScenarioSources: a scenario comes from a file when one exists at
// the path, else from the built-in set by name; anything else is refused
// with an error that says what was wrong and what is accepted.
func TestLoadScenarioSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	yaml := "name: mine\nduration: 3s\nbottleneck: {rate: 2Mbps, delay: 5ms, queue: {limit: 20}}\nflows: [{name: f, cc: cubic}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := loadScenario(file); err != nil || s.Name != "mine" {
		t.Fatalf("file: got %v, %v; want scenario mine", s, err)
	}
	if s, err := loadScenario("dumbbell"); err != nil || s.Name != "dumbbell" {
		t.Fatalf("built-in: got %v, %v; want scenario dumbbell", s, err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.yaml"), "built-in scenarios: "},
		{dir, "is a directory, not a scenario file"},
	} {
		_, err := loadScenario(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("loadScenario(%q) = %v, want an error containing %q", c.path, err, c.want)
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nduration: 3s\nbottleneck: {rate: fast}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadScenario(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("invalid file: got %v, want an error naming the file", err)
	}
}
