#!/bin/sh
# Submits the sweep array and the merge step that waits for it. Variables
# (OUT, SCENARIO, RUNS, CCLAB, SHARDS) pass through to both jobs; SHARDS
# (default 8) sets both the array's size and each task's --shard I/SHARDS.
# Jobs start in the directory submit.sh is run from (the repository root
# for the default SCENARIO), and write to $OUT (default ./out).
set -eu
here=$(dirname "$0")
SHARDS=${SHARDS:-8}
export SHARDS
array=$(sbatch --parsable --export=ALL --array=0-$((SHARDS - 1)) "$here/sweep.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency=afterok:"$array" "$here/merge.sbatch")
echo "sweep array job $array; merge job $merge runs when every task has succeeded"
