package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceBlock(t *testing.T) {
	doc := "intro\n" + vegasReadmeBegin + "\nold\n" + vegasReadmeEnd + "\noutro\n"
	got, err := replaceBlock(doc, vegasReadmeBegin+"\nnew\n"+vegasReadmeEnd)
	if err != nil || got != "intro\n"+vegasReadmeBegin+"\nnew\n"+vegasReadmeEnd+"\noutro\n" {
		t.Errorf("replaceBlock: %q, %v", got, err)
	}
	if _, err := replaceBlock("no markers", "x"); err == nil {
		t.Errorf("a document without markers gave no error")
	}
}

// TestStudyVegasReadme regenerates a README's block with a tiny search,
// from the repository root (the study's scenario paths are relative to it).
func TestStudyVegasReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small NSGA-II studies")
	}
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("# x\n"+vegasReadmeBegin+"\nstale\n"+vegasReadmeEnd+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Chdir(filepath.Join(wd, "..", ".."))
	code, out, errs := runCmd(t, "study", "vegas-readme", "--readme", readme, "--mode", "average", "--study-flags",
		"--pop 2 --gens 1 --train ATT-LTE-driving-2016.down.gz --test Verizon-LTE-short.down.gz")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	b, _ := os.ReadFile(readme)
	s := string(b)
	for _, want := range []string{"Linux Vegas", "ns-3's TcpVegas", "average mode", "| 2, 4 |"} {
		if !strings.Contains(s, want) {
			t.Errorf("regenerated README lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "stale") {
		t.Errorf("the old block survived")
	}
}
