package network

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cclab/cclab/experiment/scenario"
)

// maxYAMLFlows bounds the flows FuzzRunScenario builds (measured and
// background sources): a mutated count of 100,000 is valid and would
// spend the fuzzer's time building, not running.
const maxYAMLFlows = 2000

// FuzzRunScenario runs scenario files as written, where FuzzSimulate
// generates them, with --set overrides as cclab run takes them (one per
// line): the seeds are every scenario file in the repository, some with
// overrides, and the fuzzer mutates the text of both, so fields and
// combinations the generator does not reach (studies' schedules,
// background sequences, the shipped profiles' settings) run too, and so
// do values --set gives where a file would not. Whatever parses and
// validates must build and run without panicking, for up to 100,000
// events (checked every 1000, however dense the events), conserve
// packets, keep every uncoded TCP flow's in-order delivery between what
// its sender has acknowledged and sent, and run the same twice.
// `go test -fuzz FuzzRunScenario ./experiment/network` searches further.
func FuzzRunScenario(f *testing.F) {
	var files []string
	for _, glob := range []string{"../../scenarios/*.yaml", "../../bench/scenarios/*.yaml", "../../bench/scale/*.yaml", "../../bench/nosack/*.yaml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		f.Fatalf("found %d scenario files for seeds, want the repository's (20 or more)", len(files))
	}
	sets := []string{
		"",
		"bottleneck.rate=100Mbps\nduration=2s",
		"cc=bbr\nflows.*.extra_delay=5ms",
		"transport.sack=false\nbottleneck.queue.discipline=codel",
		"bottleneck.loss.p=0.05\ncc.iw=1",
		"profile=linux\nflows.0.count=3",
		"transport.sack=false\ntransport.send_buffer=linux\nbottleneck.loss.p=0.02",
	}
	for i, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, sets[i%len(sets)])
	}
	// Relative trace paths resolve against the shipped scenarios' folder.
	name, err := filepath.Abs("../../scenarios/fuzz.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, sets string) {
		var overrides []string
		if sets != "" {
			overrides = strings.Split(sets, "\n")
		}
		s, err := scenario.ParseWithOverrides(data, name, "", -1, overrides)
		if err != nil {
			return
		}
		flows := 0
		for i := range s.Flows {
			flows += max(s.Flows[i].Count, 1)
		}
		for i := range s.Background {
			flows += max(s.Background[i].Count, 1)
		}
		if flows > maxYAMLFlows {
			return
		}
		run := func() (string, *Network) {
			n, err := Build(s.Clone())
			if err != nil {
				t.Fatalf("valid scenario does not build: %v\n%s\noverrides: %q", err, data, overrides)
			}
			n.Sched.RunUntilOr(n.End(), 1000, func() bool { return n.Sched.Events() >= maxEvents })
			return fingerprint(n), n
		}
		first, n := run()
		conserve(t, n)
		inOrder(t, n)
		if second, _ := run(); second != first {
			t.Errorf("two runs differ:\n%s\n%s", first, second)
		}
		if t.Failed() {
			t.Logf("scenario:\n%s\noverrides: %q", data, overrides)
		}
	})
}
