package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/cclab/cclab/emu"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/scenario"
	"github.com/cclab/cclab/scenarios"
)

// overrides is a repeatable flag of path=value scenario overrides.
type overrides []string

func (o *overrides) String() string { return strings.Join(*o, " ") }

func (o *overrides) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		if k, _, ok := strings.Cut(kv, "="); !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%q: want path=value", kv)
		}
	}
	*o = append(*o, v)
	return nil
}

// split flattens comma-separated override lists into single path=value
// overrides.
func split(lists ...string) []string {
	var out []string
	for _, l := range lists {
		if l == "" {
			continue
		}
		for _, kv := range strings.Split(l, ",") {
			out = append(out, strings.TrimSpace(kv))
		}
	}
	return out
}

// flowNames lists the measured flows' result names, as the simulator and
// the emulator name them (name-1, name-2, ... for a flow with count > 1).
func flowNames(s *scenario.Scenario) []string {
	var names []string
	for _, f := range s.Flows {
		if f.Count > 1 {
			for k := range f.Count {
				names = append(names, fmt.Sprintf("%s-%d", f.Name, k+1))
			}
			continue
		}
		names = append(names, f.Name)
	}
	return names
}

// pick returns the result of the flow named name, or the first flow's
// when name is empty.
func pick(res *experiment.Result, name string) (experiment.FlowResult, error) {
	if len(res.Flows) == 0 {
		return experiment.FlowResult{}, fmt.Errorf("the scenario measures no flow")
	}
	if name == "" {
		return res.Flows[0], nil
	}
	for _, f := range res.Flows {
		if f.Name == name {
			return f, nil
		}
	}
	names := make([]string, len(res.Flows))
	for i, f := range res.Flows {
		names[i] = f.Name
	}
	return experiment.FlowResult{}, fmt.Errorf("no flow named %q (flows: %s)", name, strings.Join(names, ", "))
}

// runStats is one row: one flow's results over the seeds.
type runStats struct {
	fct                   []float64 // finished transfers
	unfinished, above     int
	retx, discarded, rtos int64
	runs                  int
}

func (r *runStats) add(f experiment.FlowResult, tail time.Duration) {
	r.runs++
	r.retx += f.Retransmissions
	r.discarded += f.Drops + f.Losses
	r.rtos += f.RTOs
	if f.FCT == nil {
		r.unfinished++
		return
	}
	r.fct = append(r.fct, *f.FCT)
	if *f.FCT > tail.Seconds() {
		r.above++
	}
}

func (r *runStats) row(cc, label string) string {
	if r.runs == 0 {
		return fmt.Sprintf("| %s | %s | 0 |||||||", cc, label)
	}
	mean, median, sd := "-", "-", "-"
	if len(r.fct) > 0 {
		x := slices.Clone(r.fct)
		slices.Sort(x)
		mean = fmt.Sprintf("%.2f", stat.Mean(x, nil))
		// The midpoint of the middle two for an even count (gonum's
		// Empirical quantile takes the lower one).
		m := x[len(x)/2]
		if len(x)%2 == 0 {
			m = (x[len(x)/2-1] + m) / 2
		}
		median = fmt.Sprintf("%.2f", m)
		if len(x) > 1 {
			sd = fmt.Sprintf("%.2f", stat.StdDev(x, nil))
		}
	}
	n := float64(r.runs)
	return fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %d | %d | %.1f for %.1f | %.2f |", cc, label, r.runs, mean, median, sd,
		r.above, r.unfinished, float64(r.retx)/n, float64(r.discarded)/n, float64(r.rtos)/n)
}

// allStats is one row of seeds -all: the measured flows' totals per run
// (many flows sharing a bottleneck, where no single flow is the result).
type allStats struct {
	goodput, retx, discarded, rtos, rtoRecovery, rtoLoss, lostRetx, probes, recoveries, jain, slowest, stranded, compressed []float64
	noJain                                                                                                                  int
}

// strandedMbps is the goodput under which -all counts a flow as stranded:
// stuck in timeout back-off for most of the run (docs/fidelity.md, "Many
// flows with small windows").
const strandedMbps = 0.1

// runTotals are a run's measured flows' totals, as seeds -all reports
// them and a many-flow kernel reference stores them (refLine).
type runTotals struct {
	goodput               float64
	retx, discarded, rtos int64
}

// totalsOf adds up every measured flow: goodput, retransmissions, the
// packets the bottleneck discarded (drops and losses) and RTOs.
func totalsOf(res *experiment.Result) runTotals {
	var t runTotals
	for _, f := range res.Flows {
		t.goodput += f.GoodputMbps
		t.retx += f.Retransmissions
		t.discarded += f.Drops + f.Losses
		t.rtos += f.RTOs
	}
	return t
}

// add adds one run: its result and, for an emulated run, the kernels'
// counters, where kernel TCP's loss probes, fast recoveries and timeouts
// by state, lost retransmissions and compressed ACKs are (tcp_info counts
// none of them per flow), totalled by emu.RunRecoveries, emu.RunTimeouts,
// emu.RunLostRetransmits and emu.RunAcksCompressed; a run that cannot
// count every measured flow adds none of them, and the counters, which
// are the whole namespace's, do not count for a run whose background
// opened TCP connections (emu.BackgroundOpensTCP).
func (a *allStats) add(res *experiment.Result, kc *emu.KernelCounters) {
	mixed := kc != nil && emu.BackgroundOpensTCP(res.Background)
	if mixed {
		kc = nil
	}
	var stranded float64
	slowest := math.Inf(1)
	for _, f := range res.Flows {
		slowest = min(slowest, f.GoodputMbps)
		if f.GoodputMbps < strandedMbps {
			stranded++
		}
	}
	t := totalsOf(res)
	a.goodput = append(a.goodput, t.goodput)
	a.retx = append(a.retx, float64(t.retx))
	a.discarded = append(a.discarded, float64(t.discarded))
	a.rtos = append(a.rtos, float64(t.rtos))
	if p, v, ok := emu.RunRecoveries(res.Flows, kc); ok {
		a.probes = append(a.probes, float64(p))
		a.recoveries = append(a.recoveries, float64(v))
	}
	if r, l, ok := emu.RunTimeouts(res.Flows, kc); ok {
		a.rtoRecovery = append(a.rtoRecovery, float64(r))
		a.rtoLoss = append(a.rtoLoss, float64(l))
	}
	if n, ok := emu.RunLostRetransmits(res.Flows, kc); ok {
		a.lostRetx = append(a.lostRetx, float64(n))
	}
	if len(res.Flows) > 0 {
		a.slowest = append(a.slowest, slowest)
		a.stranded = append(a.stranded, stranded)
	}
	if !mixed {
		a.compressed = append(a.compressed, float64(emu.RunAcksCompressed(res.Flows, kc)))
	}
	if res.Jain == nil {
		a.noJain++
		return
	}
	a.jain = append(a.jain, *res.Jain)
}

// span formats the mean of x and, over more than one run, its range.
func span(x []float64, prec int) string {
	if len(x) == 0 {
		return "-"
	}
	m := fmt.Sprintf("%.*f", prec, stat.Mean(x, nil))
	if len(x) == 1 {
		return m
	}
	return fmt.Sprintf("%s [%.*f-%.*f]", m, prec, slices.Min(x), prec, slices.Max(x))
}

// allHeader heads seeds -all's table and its summary over a sweep.
const allHeader = "| cc | run | runs | goodput Mbit/s | retransmissions | discarded (drops + losses) | RTOs | of them first in recovery | first in loss state | lost retransmissions | loss probes | fast recoveries | Jain | slowest flow Mbit/s | flows under 0.1 Mbit/s | ACKs compressed |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

// columns are the per-run series row prints, in its order but for Jain's
// count of runs without one.
func (a *allStats) columns() []*[]float64 {
	return []*[]float64{&a.goodput, &a.retx, &a.discarded, &a.rtos, &a.rtoRecovery, &a.rtoLoss,
		&a.lostRetx, &a.probes, &a.recoveries, &a.jain, &a.slowest, &a.stranded, &a.compressed}
}

// addMeans adds one value of a sweep to a row over the sweep: each of v's
// columns as its mean over v's runs, so that every value weighs the same
// whatever its number of runs, and row prints the mean of the means with
// their range. A column v has no runs of (a simulator's kernel counters,
// a result without Jain's index) adds nothing to that column.
func (a *allStats) addMeans(v *allStats) {
	vs := v.columns()
	for i, c := range a.columns() {
		if x := *vs[i]; len(x) > 0 {
			*c = append(*c, stat.Mean(x, nil))
		}
	}
	if len(v.jain) == 0 {
		a.noJain++
	}
}

func (a *allStats) row(cc, label string) string {
	jain := span(a.jain, 3)
	if a.noJain > 0 {
		jain += fmt.Sprintf(" (%d runs without)", a.noJain)
	}
	return fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", cc, label, len(a.goodput),
		span(a.goodput, 2), span(a.retx, 0), span(a.discarded, 0), span(a.rtos, 0), span(a.rtoRecovery, 0), span(a.rtoLoss, 0),
		span(a.lostRetx, 0), span(a.probes, 0), span(a.recoveries, 0), jain, span(a.slowest, 3), span(a.stranded, 0), span(a.compressed, 0))
}

func seeds(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seeds", flag.ExitOnError)
	n := fs.Int("seeds", 40, "run seeds 1..N")
	ccs := fs.String("cc", "cubic", "controllers, comma-separated")
	tail := fs.Duration("tail", 20*time.Second, "count the transfers that take longer than this")
	simOnly := fs.Bool("sim", false, "the simulator only (no root needed)")
	jsonOut := fs.String("json", "", "append every run's result to this file as JSON lines")
	flowName := fs.String("flow", "", "the flow to report, by its result name (name-K for a flow with count > 1); default the first")
	all := fs.Bool("all", false, "report every measured flow together, per run: total goodput, retransmissions, discarded packets, RTOs, loss probes and fast recoveries, Jain's index, the slowest flow, ACKs saved by SACK compression (for many flows sharing a bottleneck)")
	tsvOut := fs.String("tsv", "", "with -all, write each kernel run's totals to this file, a reference like testdata/kernel-manyflows-*.tsv (scenario, cc, seed, goodput, retransmissions, discarded, RTOs, Jain per line; add its # comment lines by hand)")
	sweepFlag := fs.String("sweep", "", "with -all, run every row at each value of one field, path=v1,v2,... (e.g. bottleneck.delay=10ms,10.01ms,10.02ms: round trips through a packet time), and after the table print each row's mean over the values; -tsv then writes the value in place of the scenario")
	var sets, variants overrides
	fs.Var(&sets, "set", "override a scenario field in every run: path=value[,path=value] (repeatable)")
	fs.Var(&variants, "variant", "also run the simulator with these overrides: path=value[,path=value] (repeatable; one row each)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		return fmt.Errorf("seeds: want one scenario (a built-in name or a file), got %d", fs.NArg())
	}
	if *n < 1 {
		return fmt.Errorf("seeds: -seeds must be at least 1, got %d", *n)
	}
	if *all && *flowName != "" {
		return fmt.Errorf("seeds: -all reports every flow; -flow picks one: use one of them")
	}
	if *tsvOut != "" && (!*all || *simOnly) {
		return fmt.Errorf("seeds: -tsv writes kernel runs' totals: it needs -all and not -sim")
	}
	sweepPath, sweep := "", []string{""}
	if *sweepFlag != "" {
		if !*all {
			return fmt.Errorf("seeds: -sweep averages every flow's totals over its values: it needs -all")
		}
		var err error
		if sweepPath, sweep, err = sweepValues(*sweepFlag); err != nil {
			return err
		}
	}
	jl, err := openJSONLines(*jsonOut)
	if err != nil {
		return err
	}
	if jl != nil {
		defer jl.Close()
	}
	var tsv *os.File
	if *tsvOut != "" {
		if tsv, err = os.Create(*tsvOut); err != nil {
			return fmt.Errorf("seeds: -tsv: %w", err)
		}
		defer tsv.Close()
		header := refHeader
		if sweepPath != "" {
			_, rest, _ := strings.Cut(refHeader, "\t")
			header = sweepPath + "\t" + rest
		}
		fmt.Fprintln(tsv, header)
	}
	data, err := scenarios.Read(fs.Arg(0))
	if err != nil {
		return err
	}
	// The same path as `cclab run SCENARIO --cc CC --seed N --set ...`, so
	// each row's runs are that command's.
	load := func(cc string, seed int, at, extra string) (*scenario.Scenario, error) {
		return scenario.ParseWithOverrides(data, fs.Arg(0), cc, int64(seed), split(append(slices.Clone([]string(sets)), at, extra)...))
	}
	// Every override is checked before the first (perhaps minutes-long)
	// run, so a typo fails at once.
	for _, cc := range strings.Split(*ccs, ",") {
		for _, at := range sweep {
			for _, v := range append([]string{""}, variants...) {
				s, err := load(cc, 1, at, v)
				if err != nil {
					return fmt.Errorf("%s: %w", cc, err)
				}
				if names := flowNames(s); *flowName != "" && !slices.Contains(names, *flowName) {
					return fmt.Errorf("seeds: -flow %q: no such flow in %s (flows: %s)", *flowName, fs.Arg(0), strings.Join(names, ", "))
				}
			}
		}
	}
	which := "the first flow"
	if *flowName != "" {
		which = "flow " + *flowName
	}
	if *all {
		fmt.Printf("%s, seeds 1-%d, every measured flow; per run: mean [min-max] over the runs\n\n", fs.Arg(0), *n)
		fmt.Println(allHeader)
	} else {
		fmt.Printf("%s, seeds 1-%d, %s; above: FCT over %v; retransmissions per transfer for the packets the bottleneck discarded (drops + losses)\n\n", fs.Arg(0), *n, which, *tail)
		fmt.Println("| cc | run | transfers | FCT mean s | median s | s.d. s | above | unfinished | retransmissions | RTOs per transfer |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	}
	type run struct {
		label  string
		kernel bool
		extra  string // overrides on top of -set
	}
	runs := []run{{label: "simulator"}}
	for _, v := range variants {
		runs = append(runs, run{label: "simulator, " + v, extra: v})
	}
	if !*simOnly {
		runs = append([]run{{label: "kernel (emu)", kernel: true}}, runs...)
	}
	// runRow runs one row, seeds 1..n of controller cc with run r at sweep
	// value value ("" without -sweep), prints it and returns its -all totals.
	runRow := func(cc, value string, r run) (*allStats, error) {
		// A kernel run's -tsv line starts with the scenario, or over a
		// sweep with the row's value.
		label, first := r.label, fs.Arg(0)
		if value != "" {
			label += ", " + value
			_, first, _ = strings.Cut(value, "=")
		}
		var st runStats
		var at allStats
		for seed := 1; seed <= *n; seed++ {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s, err := load(cc, seed, value, r.extra)
			if err != nil {
				return nil, fmt.Errorf("%s seed %d: %w", cc, seed, err)
			}
			var res *experiment.Result
			var full any // what -json writes: the emulator's whole result for a kernel run
			var kc *emu.KernelCounters
			if r.kernel {
				var em *emu.Result
				if em, _, err = emu.Run(ctx, s, emu.Options{}); err == nil {
					res, full, kc = &em.Result, em, em.KernelCounters
					warnDeviceDrops(fmt.Sprintf("%s seed %d (%s)", cc, seed, label), em)
				}
			} else {
				res, _, err = experiment.Run(ctx, s)
				full = res
			}
			if err != nil {
				return nil, fmt.Errorf("%s seed %d (%s): %w", cc, seed, label, err)
			}
			if *all {
				at.add(res, kc)
				if tsv != nil && r.kernel {
					if _, err := fmt.Fprintln(tsv, refLine(first, cc, seed, res)); err != nil {
						return nil, fmt.Errorf("seeds: -tsv: %w", err)
					}
				}
			} else {
				f, err := pick(res, *flowName)
				if err != nil {
					return nil, fmt.Errorf("%s seed %d (%s): %w", cc, seed, label, err)
				}
				st.add(f, *tail)
			}
			if jl != nil {
				b, _ := json.Marshal(map[string]any{"cc": cc, "run": label, "seed": seed, "result": full})
				jl.Write(append(b, '\n'))
			}
		}
		if *all {
			fmt.Println(at.row(cc, label))
		} else {
			fmt.Println(st.row(cc, label))
		}
		os.Stdout.Sync()
		return &at, nil
	}
	// Over a sweep, each row's per-value means, in the rows' order.
	over := map[[2]string]*allStats{}
	var overOrder [][2]string
	for _, cc := range strings.Split(*ccs, ",") {
		for _, value := range sweep {
			for _, r := range runs {
				at, err := runRow(cc, value, r)
				if err != nil {
					return err
				}
				if sweepPath == "" {
					continue
				}
				k := [2]string{cc, r.label}
				if over[k] == nil {
					over[k] = new(allStats)
					overOrder = append(overOrder, k)
				}
				over[k].addMeans(at)
			}
		}
	}
	if sweepPath != "" {
		fmt.Printf("\nover the %d values of %s: each row's mean over its runs, averaged over the values [their range]; runs: the values\n\n", len(sweep), sweepPath)
		fmt.Println(allHeader)
		for _, k := range overOrder {
			fmt.Println(over[k].row(k[0], k[1]))
		}
	}
	return nil
}

// sweepValues splits -sweep's path=v1,v2,... into one override per value,
// naming what is wrong with a malformed one.
func sweepValues(arg string) (path string, sets []string, err error) {
	path, list, ok := strings.Cut(arg, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" || strings.Contains(path, ",") {
		return "", nil, fmt.Errorf("seeds: -sweep %q: want path=v1,v2,... (one field, its values comma-separated)", arg)
	}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return "", nil, fmt.Errorf("seeds: -sweep %q: an empty value (want path=v1,v2,...)", arg)
		}
		sets = append(sets, path+"="+v)
	}
	return path, sets, nil
}
