// Package layers holds the test that keeps the module's folders in layer
// order: a package may import packages of its own layer or of lower ones,
// never of a higher one. The table is docs/ARCHITECTURE.md's, as code.
package layers

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/cclab/cclab"

// rank is each top-level folder's layer, lowest first. Data folders (their
// Go files only embed the data) sit with the experiment layer that reads them.
var rank = map[string]int{
	"internal":   0, // small shared helpers; import nothing of cclab's above them
	"core":       1,
	"netsim":     2,
	"cc":         3,
	"transport":  4,
	"experiment": 5,
	"scenarios":  5,
	"traces":     5,
	"emu":        6, // the emulator: scenario files on real namespaces and kernel TCP
	"learn":      7,
	"analysis":   8,
	"papers":     9,
	"rpc":        10, // gRPC services: the Gymnasium environment service, the host-agent and network-generator RPCs
	"bench":      11,
	"cmd":        11,
	"deploy":     11, // cluster examples and the tests that run them
}

func topFolder(importPath string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
	top, _, _ := strings.Cut(rel, "/")
	return top
}

type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// TestLayerOrder lists every package of the module with `go list` and fails
// on any import of a higher layer, and on a top-level folder the table does
// not know (a new folder must say which layer it is).
func TestLayerOrder(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH: cannot list packages")
	}
	// -pgo=off: with a main package's default.pgo, go list names the
	// packages built for it "path [main path]"; the layers are about the
	// source imports, which are the same either way.
	cmd := exec.Command("go", "list", "-pgo=off", "-json", module+"/...")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var violations []string
	seen := 0
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		seen++
		from := topFolder(p.ImportPath)
		rf, ok := rank[from]
		if !ok {
			violations = append(violations, p.ImportPath+": top-level folder "+from+" has no layer in internal/layers")
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := topFolder(imp)
			rt, ok := rank[to]
			if !ok {
				violations = append(violations, p.ImportPath+" imports "+imp+" (folder with no layer)")
				continue
			}
			if rt > rf {
				violations = append(violations, p.ImportPath+" ("+from+") imports "+imp+" ("+to+"), a higher layer")
			}
		}
		// A simulator test may check itself against an analytical model
		// (analysis/model), but nothing below learn/ may need a learner or
		// a paper, even in its tests.
		for _, imp := range append(append([]string{}, p.TestImports...), p.XTestImports...) {
			if to := topFolder(imp); strings.HasPrefix(imp, module+"/") && rf < rank["learn"] && (to == "learn" || rank[to] >= rank["papers"]) {
				violations = append(violations, p.ImportPath+" tests import "+imp+" ("+to+"), a learning or higher layer")
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list returned %d packages; expected the whole module", seen)
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// TestTableKnowsNoStaleFolders fails when the table names a folder that no
// longer exists, so the table and the tree stay one picture.
func TestTableKnowsNoStaleFolders(t *testing.T) {
	optional := map[string]bool{"emu": true, "rpc": true} // layers reserved for the real-network and service work
	for dir := range rank {
		if optional[dir] {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", dir)); err != nil {
			t.Errorf("layer table names %s/, which does not exist", dir)
		}
	}
}
