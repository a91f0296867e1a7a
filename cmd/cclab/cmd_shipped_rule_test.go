package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/learn/rl/policy"
	"github.com/cclab/cclab/papers/datacenter"
	"github.com/cclab/cclab/papers/deepcc"
)

// The shipped-policy rule (docs/deepcc.md, docs/datacenter.md: the median
// seed on a validation set disjoint from the evaluation) must pick the
// policy the commands load by default. These tests run the rule with the
// commands' default validation settings on the seed files in the
// repository and check that the default policy file is, byte for byte,
// the chosen seed's, and that the copy built into cclab is too. A
// retrained seed that changes the median fails them until the default is
// swapped.

// shippedSeedFiles returns the repository's per-seed policy files
// (pattern is a repository path with %d for the training seed, 1, 2, ...
// while they exist), seen from cmd/cclab.
func shippedSeedFiles(t *testing.T, pattern string) []string {
	t.Helper()
	var files []string
	for s := 1; ; s++ {
		f := filepath.Join("..", "..", filepath.FromSlash(fmt.Sprintf(pattern, s)))
		if _, err := os.Stat(f); err != nil {
			break
		}
		files = append(files, f)
	}
	if len(files) < 3 {
		t.Fatalf("%s: %d seed files, want at least 3", pattern, len(files))
	}
	return files
}

// sameBytes reports whether files a and b hold the same bytes.
func sameBytes(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

func TestDeepCCShippedPolicyIsRuleChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("validates three 2M-step policies on the training traces (about 10 s)")
	}
	files := shippedSeedFiles(t, "papers/deepcc/policy/deepcc-seed%d.policy")
	list := strings.Join(files, ",")
	// The evaluation part is cut to one window of one trace: only the
	// choice, made with the default validation settings, matters here.
	code, out, errs := runCmd(t, "deepcc", "eval", "--policy", list, "--traces", filepath.Join("..", "..", "traces"),
		"--eval-traces", "ATT-LTE-driving-2016.down.gz", "--runs", "1", "--classic", "cubic", "--no-targets", "--json")
	if code != 0 {
		t.Fatalf("eval exit %d: %s", code, errs)
	}
	var rep struct {
		Policies  []string `json:"policies"`
		Selection struct {
			Index  int       `json:"index"`
			Scores []float64 `json:"scores"`
		} `json:"selection"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Selection.Scores) != len(files) {
		t.Fatalf("selection %+v over %d policies", rep.Selection, len(files))
	}
	checkShippedIsChoice(t, files, rep.Policies[rep.Selection.Index], rep.Selection.Scores, deepcc.ShippedPolicyPath, deepcc.LoadPolicy)
}

func TestDCShippedPolicyIsRuleChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("validates three policies of each learner on 8 training-condition episodes each")
	}
	// PPO's file is the default of dc eval and built into cclab; A2C's and
	// DQN's are the files the docs' comparison columns name, so their
	// "built-in" copy is the repository file itself.
	fromRepo := func(path string) (*policy.Policy, error) {
		return datacenter.LoadPolicy(filepath.Join("..", "..", filepath.FromSlash(path)))
	}
	// independent is the file suffixes of two agents trained with a
	// policy each (one file per agent); a case's agents are nil for one
	// file.
	independent := []string{".agent0", ".agent1"}
	for _, tc := range []struct {
		algo, shipped, workload string
		load                    func(string) (*policy.Policy, error)
		agents                  []string
	}{
		{"ppo", datacenter.ShippedPolicyPath, "datacenter", datacenter.LoadPolicy, nil},
		{"a2c", "papers/datacenter/policy/a2c.policy", "datacenter", fromRepo, nil},
		{"dqn", "papers/datacenter/policy/dqn.policy", "datacenter", fromRepo, nil},
		// Two agents sharing a policy (dc train --agents 2 --mode shared),
		// and two with a policy each (--mode independent).
		{"ppo-k2-shared", "papers/datacenter/policy/ppo-k2-shared.policy", "datacenter", fromRepo, nil},
		{"ppo-k2-independent", "papers/datacenter/policy/ppo-k2-independent.policy", "datacenter", fromRepo, independent},
		// The paper workload's PPO, dc eval --workload paper's default.
		{"paper-ppo", datacenter.ShippedPaperPolicyPath, "paper", datacenter.LoadPolicy, nil},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			agents := tc.agents
			if agents == nil {
				agents = []string{""}
			}
			// files[a] are agent a's files, one per training seed.
			files := make([][]string, len(agents))
			for a, suffix := range agents {
				files[a] = shippedSeedFiles(t, "papers/datacenter/policy/"+tc.algo+"-seed%d"+suffix+".policy")
				if len(files[a]) != len(files[0]) {
					t.Fatalf("%d seed files of agent %d, %d of agent 0", len(files[a]), a, len(files[0]))
				}
			}
			args := []string{"dc", "eval", "--workload", tc.workload}
			for s := range files[0] {
				var pol []string
				for a := range agents {
					pol = append(pol, files[a][s])
				}
				args = append(args, "--seed-policy", strings.Join(pol, ","))
			}
			// One evaluation episode of the training condition and no grid
			// search: only the choice, made with the default validation
			// settings, matters.
			args = append(args, "--runs", "1", "--static-best", "0.1,10", "--conditions", "train", "--json")
			code, out, errs := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("eval exit %d: %s", code, errs)
			}
			var rep struct {
				Seeds struct {
					Selection struct {
						Index  int
						Scores []float64
					}
				} `json:"seeds"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			sel := rep.Seeds.Selection
			if len(sel.Scores) != len(files[0]) {
				t.Fatalf("selection %+v over %d policies", sel, len(files[0]))
			}
			for a, suffix := range agents {
				shipped := strings.TrimSuffix(tc.shipped, ".policy") + suffix + ".policy"
				checkShippedIsChoice(t, files[a], files[a][sel.Index], sel.Scores, shipped, tc.load)
			}
		})
	}
}

// checkShippedIsChoice checks that the policy at the repository path
// shippedPath is, byte for byte, chosen (the rule's choice among files,
// scored scores) and no other seed's file, and that the copy built into
// cclab (what load returns for shippedPath from cmd/cclab, where the
// repository path does not exist) was trained with the chosen seed.
func checkShippedIsChoice(t *testing.T, files []string, chosen string, scores []float64, shippedPath string, load func(string) (*policy.Policy, error)) {
	t.Helper()
	shipped := filepath.Join("..", "..", filepath.FromSlash(shippedPath))
	if !sameBytes(t, chosen, shipped) {
		t.Errorf("the rule chose %s (scores %v) but %s is another policy", chosen, scores, shippedPath)
	}
	for _, f := range files {
		if f != chosen && sameBytes(t, f, shipped) {
			t.Errorf("%s equals the shipped policy but was not chosen", f)
		}
	}
	built, err := load(shippedPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := load(chosen)
	if err != nil {
		t.Fatal(err)
	}
	if built.Meta.Seed != want.Meta.Seed || built.Meta.Command != want.Meta.Command {
		t.Errorf("built-in policy: seed %d (%s), the rule's choice: seed %d (%s)", built.Meta.Seed, built.Meta.Command, want.Meta.Seed, want.Meta.Command)
	}
}
