package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	_ "github.com/cclab/cclab/cc/all"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	_ "github.com/cclab/cclab/traces" // built-in traces for built-in scenarios
)

func init() {
	register(&command{name: "run", summary: "run one scenario and print its measurements", run: runRun})
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
	s, file, err := scenario.Decode(data, path)
	if err != nil {
		return nil, err
	}
	var ovs []scenario.Override
	if ccName != "" {
		if err := s.Set("cc", ccName); err != nil {
			return nil, usagef("--cc: %v", err)
		}
		ovs = append(ovs, scenario.Override{Path: "cc", Origin: "--cc " + ccName})
	}
	if seed >= 0 {
		s.Seed = uint64(seed)
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef("--set %q: want dotted.path=value", kv)
		}
		if err := s.Set(k, v); err != nil {
			return nil, usagef("--set %s: %v", kv, err)
		}
		ovs = append(ovs, scenario.Override{Path: k, Origin: "--set " + kv})
	}
	if err := s.Validate(); err != nil {
		return nil, scenario.LocateOverrides(err, file, path, ovs)
	}
	return s, nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	ccName := fs.String("cc", "", "override every flow's congestion controller (see 'cclab list')")
	seed := fs.Int64("seed", -1, "override the scenario's seed")
	var sets stringList
	fs.Var(&sets, "set", "override a field: dotted.path=value (repeatable), e.g. bottleneck.loss.p=0.01")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	out := fs.String("out", "", "write summary.json, time-series CSV files and plots to this directory")
	pcap := fs.String("pcap", "", "write the bottleneck's packets to this pcap file")
	sample := fs.Duration("sample", 0, "time-series interval with --out (default 100ms, or the scenario's sample)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab run SCENARIO.yaml [flags]")
		fs.PrintDefaults()
	}
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
	s, err := loadScenario(pos[0], *ccName, *seed, sets)
	if err != nil {
		return err
	}
	if *sample > 0 {
		s.Sample = scenario.Dur(*sample)
	} else if *out != "" && s.Sample.V == 0 {
		s.Sample = scenario.Dur(defaultSample)
	}
	res, n, err := runScenario(ctx, s, *pcap)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeRunOutputs(*out, s, res, n); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printResult(stdout, res)
	return nil
}

// maxTableFlows bounds the flow rows of the table: 100,000 flows printed
// 100,000 rows.
const maxTableFlows = 50

// jainOrNaN is the index, or NaN when it is undefined.
func jainOrNaN(j *float64) float64 {
	if j == nil {
		return math.NaN()
	}
	return *j
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// printResult writes the human-readable table.
func printResult(w io.Writer, r *experiment.Result) {
	fmt.Fprintf(w, "scenario %s  seed %d  simulated %.3f s in %.3f s wall (%d events, %.1f M events/s)\n\n",
		r.Scenario, r.Seed, r.SimSeconds, r.WallSeconds, r.Events, float64(r.Events)/max(r.WallSeconds, 1e-9)/1e6)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "flow\tcc\tdelivered\tgoodput Mbit/s\tFCT s\tretx\tRTOs\tRTT mean ms\tRTT p95 ms\tRTT max ms\tqdelay mean ms\tqdelay p95 ms\tRTI\t")
	for i, f := range r.Flows {
		if i == maxTableFlows && len(r.Flows) > maxTableFlows+1 {
			fmt.Fprintf(tw, "(%d more flows: see --json or --out)\t\n", len(r.Flows)-i)
			break
		}
		fct := "-"
		if f.FCT != nil {
			fct = strconv.FormatFloat(*f.FCT, 'f', 3, 64)
		}
		rti := "-"
		if f.RTI != nil {
			rti = strconv.FormatFloat(*f.RTI, 'f', 3, 64)
		}
		// An RTT never measured (no ACK arrived) is "-", not 0.00.
		ms := f2
		if f.RTTMaxMs == 0 {
			ms = func(float64) string { return "-" }
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			f.Name, f.CC, humanBytes(f.BytesDelivered), f2(f.GoodputMbps), fct, f.Retransmissions, f.RTOs,
			ms(f.RTTMeanMs), ms(f.RTTP95Ms), ms(f.RTTMaxMs), ms(f.QdelayMeanMs), ms(f.QdelayP95Ms), rti)
	}
	tw.Flush()
	if len(r.Background) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "background\toffered Mbit/s\tsent Mbit/s\tdelivered Mbit/s\tcapacity share\tflows\tdrops\t")
		for _, b := range r.Background {
			offered := f2(b.OfferedMbps)
			if b.OfferedMbps == 0 && b.Flows > 0 {
				offered = "-" // a tcp entry offers what its controller allows
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%d\t%d\t\n", b.Name, offered, f2(b.SentMbps), f2(b.DeliveredMbps), 100*b.CapacityShare, b.Flows, b.Drops)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	for _, l := range r.Links {
		fmt.Fprintf(w, "%s: utilisation %.1f%%, %d queue drops, %d random losses, background share %.1f%%\n",
			l.Name, 100*l.Utilization, l.Drops, l.Losses, 100*l.BackgroundShare)
	}
	if r.Jain != nil {
		fmt.Fprintf(w, "Jain's fairness index %.4f", *r.Jain)
	} else {
		fmt.Fprint(w, "Jain's fairness index - (no flow delivered)")
	}
	if r.RTI != nil {
		fmt.Fprintf(w, "   RTT Transition Impact %.4f", *r.RTI)
	}
	fmt.Fprintln(w)
}

func humanBytes(b int64) string {
	switch {
	case b >= 10_000_000:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 10_000:
		return fmt.Sprintf("%.1f KB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}
