// Package sweep runs a scenario over a grid of parameter combinations, many
// runs each, in parallel, and records one row per run so that an interrupted
// sweep resumes where it stopped and shards of one sweep run on different
// machines merge into the output of the whole.
//
// An output directory holds:
//
//	sweep.json      the Manifest: scenario text, overrides, grid, seeds, shard
//	rows.jsonl      one Row per finished run (appended and fsynced as runs
//	                finish, rewritten in (combination, run) order at the end)
//	rows.csv        the same rows as numeric columns (see Columns)
//	aggregate.csv   per combination and column: n, mean, std, ci95, min,
//	aggregate.json  p50, p95, max
//
// The outputs depend only on the sweep definition, never on the number of
// parallel jobs, the order runs finished in, interruptions or sharding,
// except for the wall_seconds values. docs/sweeps.md documents the formats.
package sweep
