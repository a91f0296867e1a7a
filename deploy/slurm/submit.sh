#!/bin/sh
# Submits the sweep array and the merge step that waits for it. Variables
# (OUT, SCENARIO, RUNS, CCLAB) pass through to both jobs.
# Jobs start in the directory submit.sh is run from (the repository root
# for the default SCENARIO), and write to $OUT (default ./out).
set -eu
here=$(dirname "$0")
array=$(sbatch --parsable --export=ALL "$here/sweep.sbatch")
merge=$(sbatch --parsable --export=ALL --dependency=afterok:"$array" "$here/merge.sbatch")
echo "sweep array job $array; merge job $merge runs when every task has succeeded"
