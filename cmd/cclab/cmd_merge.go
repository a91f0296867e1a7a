package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cclab/cclab/analysis/report"

	"github.com/cclab/cclab/analysis/sweep"
)

func init() {
	register(&command{name: "merge", summary: "join the shard outputs of one sweep into the whole sweep's output",
		args: "--out DIR SHARD_DIR...", help: "Shell globs work: cclab merge --out sweep shards/shard-*.", run: runMerge})
}

func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", stderr)
	out := fs.String("out", "", "output directory (required); it becomes an unsharded sweep directory")
	partial := fs.Bool("partial", false, "merge even if shards are missing or unfinished; run the unsharded sweep on --out afterwards to fill the gaps")
	dirs, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if len(dirs) == 0 {
		return usagef("want the shard output directories to merge (usage: cclab merge --out DIR SHARD_DIR...)")
	}
	sum, err := sweep.Merge(*out, dirs, sweep.MergeOptions{
		Partial: *partial,
		Warn:    func(msg string) { fmt.Fprintln(stderr, "warning: "+msg) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "merged %d shard(s): %d of %d runs into %s\n", sum.Shards, sum.Rows, sum.Total, *out)
	if sum.Rows < sum.Total {
		fmt.Fprintf(stderr, "the sweep is incomplete: run the same cclab sweep command without --shard and with --out %s to finish it\n", *out)
		return nil
	}
	m, rs, err := sweep.Load(*out, nil)
	if err != nil {
		return err
	}
	report.WriteAggregate(stdout, m, rs)
	fmt.Fprintf(stderr, "wrote %s and the rows, aggregates beside it\n", filepath.Join(*out, sweep.ManifestFile))
	return nil
}
