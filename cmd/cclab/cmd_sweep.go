package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/analysis/sweep"
)

func init() {
	register(&command{name: "sweep", summary: "run a scenario over a parameter grid, many seeds each, resumably", run: runSweep})
}

// progressLineEvery spaces the plain progress lines written when stderr is
// not a terminal (CI logs, kubectl logs, SLURM output files).
var progressLineEvery = 10 * time.Second

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep", stderr)
	var grids, sets stringList
	fs.Var(&grids, "grid", "a grid axis KEY=V1,V2,... or KEY=FROM:TO:STEP (repeatable; every combination runs), e.g. cc=newreno,cubic")
	gridFile := fs.String("grid-file", "", "read grid axes from a YAML mapping KEY: [V1, V2, ...] (before any --grid)")
	fs.Var(&sets, "set", "a fixed override dotted.path=value for every run (repeatable)")
	runs := fs.Int("runs", 10, "runs per combination; run r uses seed FIRST+r")
	seed := fs.Int64("seed", -1, "FIRST, the seed of run 0 (default: the scenario's seed)")
	seeds := fs.String("seeds", "", "A:B runs seeds A..B-1 (same as --seed A --runs B-A)")
	jobs := fs.Int("jobs", 0, "runs simulated at once (default: all cores)")
	out := fs.String("out", "", "output directory (required); an interrupted sweep resumes from it")
	shardFlag := fs.String("shard", "", "run only slice I of N (I/N, 0 <= I < N) and write it to --out; join slices with cclab merge")
	progress := fs.String("progress", "auto", "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or off")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cclab sweep SCENARIO.yaml --out DIR [--grid KEY=V1,V2,...]... [flags]")
		fs.PrintDefaults()
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one scenario file, got %d arguments (usage: cclab sweep SCENARIO.yaml --out DIR [--grid KEY=V1,V2,...]...)", len(pos))
	}
	if *out == "" {
		return usagef("--out DIR is required: the sweep's rows are recorded there as runs finish")
	}
	if *jobs < 0 {
		return usagef("--jobs %d: want 0 (all cores) or more", *jobs)
	}
	switch *progress {
	case "auto", "bar", "lines", "off":
	default:
		return usagef("--progress %q: want auto, bar, lines or off", *progress)
	}
	if *seed < 0 && flagGiven(fs, "seed") {
		return usagef("--seed %d: want a seed >= 0", *seed)
	}
	spec := sweep.Spec{ScenarioPath: pos[0], Sets: sets, Runs: *runs}
	if *seed >= 0 {
		s := uint64(*seed)
		spec.FirstSeed = &s
	}
	if *seeds != "" {
		a, b, ok := strings.Cut(*seeds, ":")
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || hi <= lo || hi-lo > sweep.MaxJobs {
			return usagef("--seeds %q: want A:B with A < B (seeds A to B-1), e.g. 1:101", *seeds)
		}
		if flagGiven(fs, "runs") || flagGiven(fs, "seed") {
			return usagef("--seeds replaces --seed and --runs; give one or the other")
		}
		spec.FirstSeed, spec.Runs = &lo, int(hi-lo)
	}
	if *shardFlag != "" {
		if spec.Shard, err = sweep.ParseShard(*shardFlag); err != nil {
			return usagef("--shard %v", err)
		}
	}
	if *gridFile != "" {
		axes, err := sweep.ReadGridFile(*gridFile)
		if err != nil {
			return usagef("--grid-file %v", err)
		}
		spec.Grid = axes
	}
	for _, g := range grids {
		a, err := sweep.ParseAxis(g)
		if err != nil {
			return usagef("--grid %v", err)
		}
		spec.Grid = append(spec.Grid, a)
	}
	if spec.ScenarioData, err = readFile(pos[0]); err != nil {
		return err
	}
	plan, err := sweep.NewPlan(spec)
	if err != nil {
		return &usageError{err.Error()}
	}

	m := plan.Manifest
	fmt.Fprintf(stderr, "sweep %s: %d combination(s) × %d run(s) = %d runs", m.ScenarioName, m.Combinations, m.Runs, m.Jobs())
	if m.Shard.Count > 1 {
		fmt.Fprintf(stderr, "; shard %s has %d", m.Shard, m.ShardJobs())
	}
	fmt.Fprintf(stderr, " -> %s\n", *out)

	mode := *progress
	if mode == "auto" {
		mode = "lines"
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bar"
		}
	}
	display := newProgressDisplay(mode, stderr)
	sum, err := sweep.Run(ctx, plan, *out, sweep.Options{
		Jobs:     *jobs,
		Progress: display.update,
		Warn:     func(msg string) { display.warn(msg) },
	})
	display.finish()
	if sum == nil {
		// Nothing ran: the output directory or its rows were refused.
		return fmt.Errorf("--out %s: %w", *out, err)
	}
	if errors.Is(err, sweep.ErrInterrupted) {
		return fmt.Errorf("interrupted: %d of %d runs are recorded in %s (%d this time, in %s); run the same command again to resume:\n  cclab sweep %s",
			sum.Done, sum.Total, *out, sum.Done-sum.Resumed, sum.Wall.Round(time.Millisecond), shellJoin(args))
	}
	if err != nil {
		var re *sweep.RunError
		if errors.As(err, &re) {
			return fmt.Errorf("%w\nreproduce it with: cclab run %s --seed %d%s", err, shellQuote(pos[0]), re.Seed, setFlags(sets, re.Params))
		}
		return err
	}
	fmt.Fprintf(stderr, "%d runs done (%d resumed) in %s; wrote %s, %s, %s, %s\n", sum.Done, sum.Resumed, sum.Wall.Round(time.Millisecond),
		filepath.Join(*out, sweep.RowsCSVFile), filepath.Join(*out, sweep.RowsFile), filepath.Join(*out, sweep.AggregateCSVFile), filepath.Join(*out, sweep.AggregateJSONFile))
	if m.Shard.Count > 1 {
		return nil
	}
	_, rs, err := sweep.Load(*out, nil)
	if err != nil {
		return err
	}
	printAggregate(stdout, m, rs)
	return nil
}

// flagGiven reports whether the command line set the named flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}

// setFlags turns fixed overrides and grid coordinates into --set flags for
// a reproduction command line.
func setFlags(sets []string, params []sweep.Param) string {
	var b strings.Builder
	for _, s := range sets {
		b.WriteString(" --set " + shellQuote(s))
	}
	for _, p := range params {
		b.WriteString(" --set " + shellQuote(p.Key+"="+p.Value))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// summaryMetrics are the columns of the table printed after a sweep.
var summaryMetrics = []struct{ metric, header string }{
	{"goodput_mbps", "goodput Mbit/s"},
	{"fct_s", "FCT s"},
	{"qdelay_p95_ms", "qdelay p95 ms"},
	{"rtt_p95_ms", "RTT p95 ms"},
	{"retransmissions", "retx"},
	{"utilization", "utilisation"},
}

// printAggregate prints mean ± 95% CI of the key metrics per combination.
func printAggregate(w io.Writer, m *sweep.Manifest, rs *sweep.Rows) {
	rows := rs.Sorted()
	agg := sweep.Aggregate(m, rows, sweep.Columns(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "combination\truns\t")
	for _, sm := range summaryMetrics {
		fmt.Fprint(tw, sm.header+"\t")
	}
	fmt.Fprintln(tw)
	for _, cs := range agg {
		fmt.Fprintf(tw, "%s\t%d\t", cs.Label(), cs.Runs)
		for _, sm := range summaryMetrics {
			st, _ := cs.Stat(sm.metric)
			fmt.Fprint(tw, meanCI(st).String()+"\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w, "(mean ± 95% confidence half-width over runs; FCT over flows that finished)")
}

func meanCI(s sweep.Stat) report.MeanCI {
	m := report.MeanCI{Mean: nan(), CI: nan()}
	if s.Mean != nil {
		m.Mean = *s.Mean
	}
	if s.CI95 != nil {
		m.CI = *s.CI95
	}
	return m
}

// progressDisplay shows a sweep's progress as a bar (terminal) or as
// occasional plain lines (logs).
type progressDisplay struct {
	mode    string
	w       io.Writer
	bar     *progressbar.ProgressBar
	resumed int
	last    time.Duration
	// finalShown stops a repeated 100% line.
	finalShown bool
}

func newProgressDisplay(mode string, w io.Writer) *progressDisplay {
	return &progressDisplay{mode: mode, w: w, last: -progressLineEvery}
}

func (d *progressDisplay) update(p sweep.Progress) {
	switch d.mode {
	case "bar":
		if d.bar == nil {
			d.resumed = p.Resumed
			desc := "sweep"
			if p.Resumed > 0 {
				desc = fmt.Sprintf("sweep (%d resumed)", p.Resumed)
			}
			// The bar counts this invocation's runs only, so that its
			// rate and ETA are not inflated by resumed ones.
			d.bar = progressbar.NewOptions(p.Total-p.Resumed,
				progressbar.OptionSetWriter(d.w),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("runs"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetWidth(40),
				progressbar.OptionSetRenderBlankState(true),
			)
		}
		d.bar.Set(p.Done - d.resumed)
	case "lines":
		final := p.Done == p.Total
		if d.finalShown || (!final && p.Elapsed-d.last < progressLineEvery) {
			return
		}
		d.last, d.finalShown = p.Elapsed, final
		line := fmt.Sprintf("sweep: %d/%d runs (%.1f%%)", p.Done, p.Total, 100*float64(p.Done)/float64(max(p.Total, 1)))
		if n := p.Done - p.Resumed; n > 0 && p.Elapsed > 0 {
			rate := float64(n) / p.Elapsed.Seconds()
			line += fmt.Sprintf(", %.1f runs/s", rate)
			if left := p.Total - p.Done; left > 0 {
				line += fmt.Sprintf(", ETA %s", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
			}
		}
		if p.Resumed > 0 {
			line += fmt.Sprintf(" [%d resumed]", p.Resumed)
		}
		fmt.Fprintln(d.w, line)
	}
}

func (d *progressDisplay) warn(msg string) {
	if d.bar != nil {
		fmt.Fprintln(d.w)
	}
	fmt.Fprintln(d.w, "warning: "+msg)
}

func (d *progressDisplay) finish() {
	if d.bar != nil {
		d.bar.Close()
		fmt.Fprintln(d.w)
	}
}
