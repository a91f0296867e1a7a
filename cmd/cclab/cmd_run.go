package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cclab/cclab/analysis/report"
	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	_ "github.com/cclab/cclab/traces" // built-in traces for built-in scenarios
)

func init() {
	register(&command{name: "run", summary: "run one scenario and print its measurements",
		args: "SCENARIO", help: "SCENARIO is a scenario file or a built-in scenario's name (see docs/scenarios.md).", run: runRun})
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// loadScenario reads a scenario and applies --cc, --seed and --set
// overrides, then validates; errors name the file and field.
func loadScenario(path, ccName string, seed int64, sets []string) (*scenario.Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	s, err := scenario.ParseWithOverrides(data, path, ccName, seed, sets)
	var oe *scenario.OverrideError
	if errors.As(err, &oe) {
		return nil, usagef("%s", oe.Msg)
	}
	return s, err
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	ccName := fs.String("cc", "", "override every flow's congestion controller (see 'cclab list')")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable), e.g. bottleneck.loss.p=0.01")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	out := fs.String("out", "", "write summary.json, time-series CSV files and plots to this directory")
	var capture experiment.Capture
	fs.StringVar(&capture.Departures, "pcap", "", "write the bottleneck's packets, as they leave it, to this pcap file")
	fs.StringVar(&capture.Arrivals, "pcap-arrivals", "", "write the packets reaching the bottleneck, before its queue, to this pcap file")
	fs.StringVar(&capture.Drops, "pcap-drops", "", "write the packets the bottleneck's queue drops, at the drop, to this pcap file")
	sample := fs.Duration("sample", 0, "time-series interval with --out (default 100ms, or the scenario's sample)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one scenario file, got %d arguments (usage: cclab run SCENARIO.yaml [flags])", len(pos))
	}
	if *seed < 0 && flagGiven(fs, "seed") {
		return usagef("--seed %d: want a seed >= 0", *seed)
	}
	if *sample < 0 || (*sample == 0 && flagGiven(fs, "sample")) {
		return usagef("--sample %v: want a positive interval (e.g. 100ms); omit it for the scenario's or 100ms", *sample)
	}
	if err := checkCaptures(capture); err != nil {
		return err
	}
	s, err := loadScenario(pos[0], *ccName, *seed, sets)
	if err != nil {
		return err
	}
	if *sample > 0 {
		s.Sample = scenario.Dur(*sample)
	} else if *out != "" && s.Sample.V == 0 {
		s.Sample = scenario.Dur(report.SeriesSample)
	}
	experiment.SimulationGC()
	experiment.ReleaseColdPages()
	restore := experiment.OneProcessor()
	res, n, err := experiment.RunCaptured(ctx, s, capture)
	restore()
	if err != nil {
		return err
	}
	if *out != "" {
		if err := report.WriteRunDir(*out, s, res, n); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	experiment.CollectFinishedNetwork()
	return emit(stdout, *asJSON, res, res.WriteText)
}
