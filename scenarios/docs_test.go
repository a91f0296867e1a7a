package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestDocLinksResolve: bug 8. docs/moo.md and docs/tune.md linked to
// docs/moo.md and papers/... relative to the repository root, which from
// docs/ do not exist.
func TestDocLinksResolve(t *testing.T) {
	for _, f := range docPages(t) {
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

// anchorLink is a Markdown link with a fragment: the file (empty for the
// same page) and the fragment.
var anchorLink = regexp.MustCompile(`\]\(([^)#\s]*)#([^)\s]+)\)`)

// TestDocAnchorsResolve: every link to a section (page.md#section or
// #section) names a heading of that page as GitHub renders its anchor, so
// that a renamed or re-dated heading does not leave links that open the
// page at its top.
func TestDocAnchorsResolve(t *testing.T) {
	papers, _ := filepath.Glob("../papers/*/README.md")
	files := append(docPages(t), papers...)
	anchors := map[string]map[string]bool{}
	// read returns a page's text, reading each page once: the pages
	// checked are also the pages most links point to.
	texts := map[string]string{}
	read := func(path string) (string, error) {
		if text, ok := texts[path]; ok {
			return text, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		texts[path] = string(b)
		return string(b), nil
	}
	checked := 0
	for _, f := range files {
		text, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range anchorLink.FindAllStringSubmatch(text, -1) {
			target := f
			if m[1] != "" {
				if strings.Contains(m[1], "://") || !strings.HasSuffix(m[1], ".md") {
					continue
				}
				target = filepath.Join(filepath.Dir(f), m[1])
			}
			if _, ok := anchors[target]; !ok {
				page, err := read(target)
				anchors[target] = nil
				if err != nil {
					t.Errorf("%s: link to %s: %v", f, m[1], err)
				} else {
					anchors[target] = headingAnchors(page)
				}
			}
			if anchors[target] == nil {
				// A page that cannot be read is reported once, at its
				// first link, and its other links are not checked.
				continue
			}
			checked++
			if !anchors[target][m[2]] {
				t.Errorf("%s: link to %s#%s: no heading of %s has that anchor", f, m[1], m[2], target)
			}
		}
	}
	if checked == 0 {
		t.Error("no section links found: the pattern no longer matches the docs")
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page outside fenced code: lower case, spaces as hyphens, other
// characters but letters, digits, hyphens and underscores dropped, and a
// repeated anchor suffixed -1, -2 and so on.
func headingAnchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.Lines(page) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if fenced || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		anchor := a.String()
		if n, dup := seen[anchor]; dup {
			seen[anchor] = n + 1
			anchor += "-" + strconv.Itoa(n+1)
		} else {
			seen[anchor] = 0
		}
		out[anchor] = true
	}
	return out
}

// docPages returns the pages whose links the tests check: docs/*.md and
// the README, or skips the test where they are not beside it.
func docPages(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	if len(files) < 2 {
		t.Skip("docs not found")
	}
	return files
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
