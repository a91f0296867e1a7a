package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestDocLinksResolve: bug 8. docs/moo.md and docs/tune.md linked to
// docs/moo.md and papers/... relative to the repository root, which from
// docs/ do not exist.
func TestDocLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	if len(files) < 2 {
		t.Skip("docs not found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s: broken link %s", f, target)
			}
		}
	}
}

// TestShippedHeadersNameTheirController: scenarios/dumbbell.yaml's header
// said CUBIC while it runs NewReno, and the header appears in every report.
func TestShippedHeadersNameTheirController(t *testing.T) {
	for _, name := range Names() {
		b, err := Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		header, _, _ := strings.Cut(text, "\nname:")
		for _, cc := range []string{"CUBIC", "NewReno", "BBR", "Vegas"} {
			if strings.Contains(header, "bulk "+cc+" flow") && !strings.Contains(strings.ToLower(text), "cc: "+strings.ToLower(cc)) {
				t.Errorf("%s: the header names a %s flow, but no flow uses %s", name, cc, strings.ToLower(cc))
			}
		}
	}
}
