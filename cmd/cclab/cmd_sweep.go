package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cclab/cclab/analysis/report"
	"github.com/cclab/cclab/analysis/sweep"
	"github.com/cclab/cclab/internal/progress"
)

func init() {
	register(&command{name: "sweep", summary: "run a scenario over a parameter grid, many seeds each, resumably",
		args: "SCENARIO --out DIR [--grid KEY=V1,V2,...]...", run: runSweep})
}

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
	progressMode := fs.String("progress", "auto", "progress display: auto (a bar on a terminal, lines otherwise), bar, lines or off")
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
	switch *progressMode {
	case "auto", "bar", "lines", "off":
	default:
		return usagef("--progress %q: want auto, bar, lines or off", *progressMode)
	}
	spec, err := sweepSpec(fs, pos[0], sets, grids, *runs, *seed, *seeds, *shardFlag, *gridFile)
	if err != nil {
		return err
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

	display := progress.NewSweep(progress.Mode(*progressMode, stderr), stderr)
	sum, err := sweep.Run(ctx, plan, *out, sweep.Options{
		Jobs: *jobs,
		Progress: func(p sweep.Progress) {
			display.Update(progress.Snapshot{Done: p.Done, Total: p.Total, Resumed: p.Resumed, Elapsed: p.Elapsed})
		},
		Warn: func(msg string) { display.Warn(msg) },
	})
	display.Finish()
	if sum == nil || err != nil {
		return sweepError(err, sum, *out, args, pos[0], sets)
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
	report.WriteAggregate(stdout, m, rs)
	return nil
}

// sweepSpec builds the sweep's specification from the flags.
func sweepSpec(fs *flag.FlagSet, path string, sets, grids stringList, runs int, seed int64, seeds, shard, gridFile string) (sweep.Spec, error) {
	if seed < 0 && flagGiven(fs, "seed") {
		return sweep.Spec{}, usagef("--seed %d: want a seed >= 0", seed)
	}
	spec := sweep.Spec{ScenarioPath: path, Sets: sets, Runs: runs}
	if seed >= 0 {
		s := uint64(seed)
		spec.FirstSeed = &s
	}
	if seeds != "" {
		a, b, ok := strings.Cut(seeds, ":")
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil || hi <= lo || hi-lo > sweep.MaxJobs {
			return spec, usagef("--seeds %q: want A:B with A < B (seeds A to B-1), e.g. 1:101", seeds)
		}
		if flagGiven(fs, "runs") || flagGiven(fs, "seed") {
			return spec, usagef("--seeds replaces --seed and --runs; give one or the other")
		}
		spec.FirstSeed, spec.Runs = &lo, int(hi-lo)
	}
	if shard != "" {
		var err error
		if spec.Shard, err = sweep.ParseShard(shard); err != nil {
			return spec, usagef("--shard %v", err)
		}
	}
	if gridFile != "" {
		axes, err := sweep.ReadGridFile(gridFile)
		if err != nil {
			return spec, usagef("--grid-file %v", err)
		}
		spec.Grid = axes
	}
	for _, g := range grids {
		a, err := sweep.ParseAxis(g)
		if err != nil {
			return spec, usagef("--grid %v", err)
		}
		spec.Grid = append(spec.Grid, a)
	}
	return spec, nil
}

// sweepError explains why a sweep stopped and how to resume it or
// reproduce its failed run.
func sweepError(err error, sum *sweep.Summary, out string, args []string, path string, sets []string) error {
	if sum == nil {
		// Nothing ran: the output directory or its rows were refused.
		return fmt.Errorf("--out %s: %w", out, err)
	}
	if errors.Is(err, sweep.ErrInterrupted) {
		return fmt.Errorf("interrupted: %d of %d runs are recorded in %s (%d this time, in %s); run the same command again to resume:\n  cclab sweep %s",
			sum.Done, sum.Total, out, sum.Done-sum.Resumed, sum.Wall.Round(time.Millisecond), shellJoin(args))
	}
	var re *sweep.RunError
	if errors.As(err, &re) {
		return fmt.Errorf("%w\nreproduce it with: cclab run %s --seed %d%s", err, shellQuote(path), re.Seed, setFlags(sets, re.Params))
	}
	return err
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
