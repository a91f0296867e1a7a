package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteDirRefusesForeignSummary: other commands write a summary.json
// too (cclab tune --out); WriteDir refuses it, saying what the directory
// is, instead of rendering an empty run over the report already there.
func TestWriteDirRefusesForeignSummary(t *testing.T) {
	const theirs = "<html>their own report</html>"
	cases := []struct {
		name, summary string
		want          []string
	}{
		{"tune", `{"pareto": [], "evaluations": [], "hypervolume": [0.5], "cases": ["dumbbell"], "seed": 1, "pop": 4, "generations": 1}`,
			[]string{"holds a cclab tune output", "summary.json", "report.html is tune's own", "cclab run --out and cclab sweep --out"}},
		{"other", `{"mode": "something", "seed": 1}`,
			[]string{"summary.json: not the summary of a cclab run", `"scenario"`, `"flows"`, "cclab run --out and cclab sweep --out"}},
		{"null", `null`, []string{"not the summary of a cclab run"}},
		{"array", `[1, 2]`, []string{"not a run summary"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "summary.json"), []byte(c.summary), 0o644)
			os.WriteFile(filepath.Join(dir, File), []byte(theirs), 0o644)
			_, _, err := WriteDir(context.Background(), dir, DirOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got, _ := os.ReadFile(filepath.Join(dir, File)); string(got) != theirs {
				t.Errorf("%s overwritten: %.80q", File, got)
			}
		})
	}
}
