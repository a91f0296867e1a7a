#!/usr/bin/env bash
# Regenerates the profile that `go build` uses to optimise the simulator
# (profile-guided optimisation: hot calls inlined, hot interface calls
# devirtualised): cmd/cclab-sim/default.pgo and cmd/cclab/default.pgo, the
# same file, from CPU profiles of issue 19's workload (BenchmarkScale at
# N = 100 and 1000, and the 10 Gbit/s single flow for the large-window
# paths), merged. A stale profile still builds and still helps, less; rerun
# this after large changes to the simulator's hot path. PGO changes no
# result: it only changes inlining and call dispatch, and on amd64 the
# compiler fuses no floating-point operations (GOAMD64=v1).
#
# usage: bench/scale/pgo.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
# -pgo=off: profile the code as written, not as a previous profile shaped it.
go test -pgo=off -c -o "$tmp/network.test" ./experiment/network
"$tmp/network.test" -test.run XXX -test.bench 'Scale/flows=100$' -test.benchtime 20x -test.cpuprofile "$tmp/a.pprof" >/dev/null
"$tmp/network.test" -test.run XXX -test.bench 'Scale/flows=1000$' -test.benchtime 10x -test.cpuprofile "$tmp/b.pprof" >/dev/null
"$tmp/network.test" -test.run XXX -test.bench 'Scale/one-flow-10Gbps$' -test.benchtime 2x -test.cpuprofile "$tmp/c.pprof" >/dev/null
go tool pprof -proto "$tmp/a.pprof" "$tmp/b.pprof" "$tmp/c.pprof" >"$tmp/merged.pprof" 2>/dev/null
cp "$tmp/merged.pprof" cmd/cclab-sim/default.pgo
cp "$tmp/merged.pprof" cmd/cclab/default.pgo
ls -l cmd/cclab-sim/default.pgo cmd/cclab/default.pgo
