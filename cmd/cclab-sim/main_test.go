package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const scen = "../../bench/scale/newreno-100flows.yaml"

func runArgs(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

var wall = regexp.MustCompile(`"wall_seconds": [0-9.e+-]+`)

// TestRunsScenario: overrides apply (flags before or after the file), the
// run is deterministic, and the JSON carries the events and flows.
func TestRunsScenario(t *testing.T) {
	a, stderr, code := runArgs(t, "--set", "duration=300ms", scen, "--seed", "7", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _, _ := runArgs(t, scen, "--json", "--seed", "7", "--set", "duration=300ms")
	if wall.ReplaceAllString(a, "") != wall.ReplaceAllString(b, "") {
		t.Errorf("two runs of one scenario and seed differ")
	}
	var res struct {
		Seed   uint64 `json:"seed"`
		Events int64  `json:"events"`
		Flows  []any  `json:"flows"`
	}
	if err := json.Unmarshal([]byte(a), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%.300s", err, a)
	}
	if res.Seed != 7 || res.Events == 0 || len(res.Flows) != 100 {
		t.Errorf("seed %d, %d events, %d flows; want seed 7, events > 0, 100 flows\n%.300s", res.Seed, res.Events, len(res.Flows), a)
	}
	text, _, code := runArgs(t, scen, "--set", "duration=100ms")
	if code != 0 || !strings.Contains(text, "newreno-100flows") {
		t.Errorf("text output (exit %d) does not name the scenario:\n%.200s", code, text)
	}
}

// TestBadInput: usage mistakes exit 2 and name the flag; a missing file
// exits 1 and names the file.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{scen, "--set", "nosuchfield=1"}, 2, `no field "nosuchfield"`},
		{[]string{scen, "--set", "duration"}, 2, "want dotted.path=value"},
		{[]string{scen, "--cc", "nosuchcc"}, 1, "--cc nosuchcc"},
		{[]string{scen, "--seed", "-2"}, 2, "--seed -2"},
		{[]string{scen, scen}, 2, "exactly one scenario"},
		{[]string{}, 2, "exactly one scenario"},
		{[]string{"--bogus", scen}, 2, "bogus"},
		{[]string{"no/such/file.yaml"}, 1, "no/such/file.yaml"},
		{[]string{scen, "--set", "duration=-1s"}, 1, "duration"},
	} {
		_, stderr, code := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// TestLinksOnlyTheSimulator guards the binary's reason to exist: none of
// the packages whose code and initialisation make cclab's baseline memory.
func TestLinksOnlyTheSimulator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, bad := range []string{"gonum.org/v1/plot", "google.golang.org/grpc", "github.com/gopacket/gopacket", "/emu", "/learn/", "/analysis/", "/rpc/"} {
		for _, dep := range strings.Fields(string(out)) {
			if strings.Contains(dep, bad) {
				t.Errorf("cclab-sim links %s", dep)
			}
		}
	}
}
